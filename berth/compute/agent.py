"""ComputeAgent: one node's agent, wired together. Start-up order: the engine must
answer, then the heartbeat and the inventory run once (so the scheduler can place
containers here), then the RPC server opens, then the periodic tasks start."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from berth.compute.claims import ResourceTracker
from berth.compute.deps import AgentDeps, AgentSettings
from berth.compute.manager import ComputeManager
from berth.compute.periodic.heartbeat import update_zun_service
from berth.compute.periodic.inventory import InventorySettings, inventory_host
from berth.compute.periodic.scheduler import PeriodicScheduler
from berth.compute.workers import ContainerWorkers
from berth.db.engine import Database
from berth.rpc.base import Server, Transport
from berth.runtime.base import Runtime

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AgentConfig:
    settings: AgentSettings
    inventory: InventorySettings
    availability_zone: str | None = "nova"
    action_workers: int = 16
    periodic_interval_max: int = 60


class ComputeAgent:
    def __init__(self, config: AgentConfig, db: Database, runtime: Runtime,
                 transport: Transport) -> None:
        self.config = config
        self.db = db
        self.runtime = runtime
        self.transport = transport
        self.tracker = ResourceTracker(db, config.settings.host)
        self.deps = AgentDeps(db=db, runtime=runtime, tracker=self.tracker,
                              settings=config.settings)
        self.workers = ContainerWorkers(config.action_workers)
        self.manager = ComputeManager(self.deps, self.workers)
        self.periodic = PeriodicScheduler()
        self._server: Server | None = None

    @property
    def host(self) -> str:
        return self.config.settings.host

    def heartbeat(self) -> None:
        update_zun_service(self.db, self.host, self.config.availability_zone)

    def inventory(self) -> None:
        inventory_host(self.db, self.runtime, self.tracker, self.config.inventory)

    def start(self) -> None:
        self.runtime.ping()
        self.heartbeat()
        self.inventory()
        self._server = self.transport.serve(self.host, self.manager)
        self._server.start()
        interval = self.config.periodic_interval_max
        self.periodic.add("update_zun_service", self.heartbeat, min(interval, 10),
                          run_immediately=False)
        self.periodic.add("inventory_host", self.inventory, interval, run_immediately=False)
        self.periodic.start()
        LOG.info("compute agent %s is up", self.host)

    def stop(self) -> None:
        self.periodic.stop()
        if self._server is not None:
            self._server.stop()
        self.workers.stop(wait=True)
        LOG.info("compute agent %s stopped", self.host)
