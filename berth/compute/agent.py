"""ComputeAgent: one node's agent, wired together. Start-up order: the engine must
answer, then the heartbeat and the inventory run once (so the scheduler can place
containers here), then start-up recovery (``flows/recovery.py``, before any cast can
race with it), then the RPC server opens, then PLEG starts following the engine
(``pleg/``: events and relists, synced by ``sync_workers.py``), then the periodic
tasks start (``sync_container_state`` at once: the safety net under PLEG)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from berth.common.exceptions import RPCError
from berth.common.memory import PROCESS_HEAPS
from berth.compute.capsules.docker.engine import DockerCapsules
from berth.compute.claims import ResourceTracker
from berth.compute.deps import AgentDeps, AgentSettings, CapsuleEngine
from berth.compute.flows.recovery import RecoveryReport, init_containers
from berth.compute.flows.sync import Death, Outcome, sync_container
from berth.compute.last_inspected import LastInspected
from berth.compute.manager import ComputeManager
from berth.compute.networking import ContainerNetworks
from berth.compute.periodic.allocations import AuditReport, audit_allocations
from berth.compute.periodic.cleanup import CleanupReport, delete_unused_containers
from berth.compute.periodic.heartbeat import heartbeat_spacing, update_zun_service
from berth.compute.periodic.idle import AuditGate, CleanupGate, expiry_due, read_max_age
from berth.compute.periodic.inventory import InventoryMemo, InventorySettings, inventory_host
from berth.compute.periodic.lost_casts import LostCastRepairer
from berth.compute.periodic.scheduler import PeriodicScheduler
from berth.compute.periodic.sync_state import SyncReport, sync_container_state
from berth.compute.periodic.task_deadlines import TaskExpirer
from berth.compute.pleg import ContainerEvent, EventGenerator, EventSource, PlegSettings
from berth.compute.sync_workers import SyncWorkers
from berth.compute.volumes import ContainerVolumes
from berth.compute.volumes.reconcile import reconcile_volumes
from berth.compute.workers import ContainerWorkers
from berth.conf import default as conf_default
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.image.base import ImageStoreDriver
from berth.metrics import catalog
from berth.metrics.health import Check
from berth.placement.base import Placement
from berth.quota import QuotaEnforcer
from berth.rpc.base import Server, Transport
from berth.runtime.base import EventKind, Runtime

LOG = logging.getLogger(__name__)

#: The tasks that run only on change (``periodic/idle.py``) run whatever changed
#: every this many periodic_interval_max (20 minutes with the default 60 s).
FULL_RUN_INTERVALS = 20


#: Seconds a create's or a delete's change of the node's usage may wait before it is
#: written to the compute node's row, together with every change made meanwhile: a
#: minute, as Zun's periodic resource update. The API counts a host's usage from its
#: containers when it shows the host, and the scheduler and the claims count them
#: too: the row's figures are for readers of the database alone. Written at once,
#: they cost a statement per container created (and one per container deleted) once a
#: fleet spreads its creates so thinly that no two of a node meet within a fraction of
#: a second (bench P15: at 1,000 nodes and 60 creates a second, a node's come every
#: 17 s).
USAGE_PUBLISH_DELAY = 60.0


def _engine_is_local(runtime: Runtime) -> bool:
    """The engine stamps its events by this host's clock: it is reached over a local
    socket, or it is the simulated engine, which runs in the agent's own process."""
    return str(getattr(runtime, "base_url", "")).startswith(("unix://", "simulated://"))


@dataclass(frozen=True, slots=True)
class AgentConfig:
    settings: AgentSettings
    inventory: InventorySettings
    availability_zone: str | None = conf_default.AVAILABILITY_ZONE
    action_workers: int = 16
    periodic_interval_max: int = 60
    #: seconds; 0 = periodic_interval_max, < 0 = disabled (PLEG still runs)
    sync_container_state_interval: int = 60
    service_down_time: int = conf_default.SERVICE_DOWN_TIME
    pleg: PlegSettings = field(default_factory=PlegSettings)
    sync_workers: int = 4


class ComputeAgent:
    def __init__(self, config: AgentConfig, db: Database, runtime: Runtime,
                 transport: Transport, placement: Placement | None = None,
                 quota: QuotaEnforcer | None = None,
                 networks: ContainerNetworks | None = None,
                 volumes: ContainerVolumes | None = None,
                 capsules: CapsuleEngine | None = None,
                 image_stores: Mapping[str, ImageStoreDriver] | None = None,
                 image_driver_list: tuple[str, ...] = ("glance", "docker")) -> None:
        self.config = config
        self.db = db
        self.runtime = runtime
        self.transport = transport
        self.tracker = ResourceTracker(db, config.settings.host,
                                       publish_delay=USAGE_PUBLISH_DELAY)
        full_every = FULL_RUN_INTERVALS * max(config.periodic_interval_max, 1)
        self.inventory_memo = InventoryMemo(full_every=full_every)
        self.audit_gate = AuditGate(full_every)
        self.cleanup_gate = CleanupGate()
        if placement is not None:
            placement = self.audit_gate.watch(placement)
        self.workers = ContainerWorkers(config.action_workers)
        self.deps = AgentDeps(db=db, runtime=runtime, tracker=self.tracker,
                              settings=config.settings, placement=placement,
                              last_inspected=LastInspected(
                                  engine_clock_shared=_engine_is_local(runtime)),
                              workers=self.workers, quota=quota, networks=networks,
                              volumes=volumes, capsules=capsules or DockerCapsules(),
                              image_stores=dict(image_stores or {}),
                              image_driver_list=image_driver_list)
        self.manager = ComputeManager(self.deps, self.workers,
                                      live_state=lambda: self.pleg.live())
        self.periodic = PeriodicScheduler()
        self._server: Server | None = None
        # State sync: PLEG notices engine changes, SyncWorkers writes them (pleg/).
        self.sync_workers = SyncWorkers(self._sync_event, config.sync_workers,
                                        on_failure=self._sync_failed)
        self.pleg = EventGenerator(runtime, config.settings.host, self._on_event,
                                   config.pleg)
        catalog.QUEUE_DEPTHS.track("actions", self.workers.pending)
        catalog.QUEUE_DEPTHS.track("state_sync", self.sync_workers.depth)
        catalog.QUEUE_DEPTHS.track("pleg_events", self.pleg.queue.qsize)
        self.last_state_sync: SyncReport | None = None
        self.last_cleanup: CleanupReport | None = None
        self.recovery: RecoveryReport | None = None
        #: Spacing of expire_tasks: deadlines are minutes long, a 30 s lag is fine.
        self.expire_tasks_spacing = 30.0
        self.task_expirer: TaskExpirer | None = None

    @property
    def host(self) -> str:
        return self.config.settings.host

    def heartbeat(self) -> None:
        self.inventory_memo.disabled = update_zun_service(self.db, self.host,
                                                          self.config.availability_zone)

    def inventory(self) -> None:
        """The inventory task: writes only what changed (``InventoryMemo``)."""
        inventory_host(self.db, self.runtime, self.tracker, self.config.inventory,
                       placement=self.deps.placement, memo=self.inventory_memo)

    def sync_state(self) -> SyncReport:
        report = sync_container_state(self.deps, self.config.service_down_time)
        self.last_state_sync = report
        self.cleanup_gate.synced(report)
        for outcome, count in report.outcomes.items():
            catalog.count_sync("periodic", outcome, count)
        return report

    def delete_unused(self) -> CleanupReport:
        self.last_cleanup = delete_unused_containers(self.deps)
        return self.last_cleanup

    def delete_unused_when_due(self) -> CleanupReport | None:
        """The cleanup task: only when an unused row may exist (``periodic/idle.py``)."""
        return self.delete_unused() if self.cleanup_gate.take() else None

    def audit_allocations(self) -> AuditReport:
        return audit_allocations(self.deps, self.workers.submit,
                                 shared=bool(self.config.inventory.shared_provider_names))

    def audit_allocations_when_due(self) -> AuditReport | None:
        """The audit task: at start, after a Placement failure, and every
        ``FULL_RUN_INTERVALS`` intervals (``periodic/idle.py``)."""
        return self.audit_allocations() if self.audit_gate.take() else None

    def readiness_checks(self) -> dict[str, Check]:
        """What /readyz checks for this agent: the database, the RPC server (serving,
        and its transport reachable) and the Docker engine."""
        return {"database": self.db.ping, "rpc": self._rpc_ready, "docker": self.runtime.ping}

    def _rpc_ready(self) -> None:
        if self._server is None:
            raise RPCError("The agent's RPC server is not serving yet (start-up recovery "
                           "runs first) or has stopped.")
        self.transport.check()

    def pleg_healthy(self) -> bool:
        """PLEG's last good relist is recent (for /healthz)."""
        return self.pleg.healthy()

    def _on_event(self, event: ContainerEvent) -> None:
        """PLEG's event: to a state sync, unless it has nothing to tell or waits for a
        flow (``_held_back``). Judged here, on PLEG's dispatcher, as well as when the
        sync runs: a create with run's own "create" and "start", which its inspect
        saw, then cost no hop to a sync thread (bench P15's state-sync threads)."""
        if not self._held_back(event):
            self.sync_workers.submit(event)

    def _held_back(self, event: ContainerEvent) -> bool:
        """True when ``event`` needs no sync now: a later inspect already saw it
        (``LastInspected.covers``), or a flow of its container runs, after which the
        event is handed on again (``ContainerWorkers.defer_while_owned``)."""
        if self.deps.last_inspected.covers(event.uuid, event.at, event.engine_at_ns,
                                           event.listed):
            LOG.debug("%s event (%s) already seen by a later inspect; not syncing",
                      event.kind, event.source)
            return True
        if self.workers.defer_while_owned(event.uuid, lambda: self._on_event(event)):
            LOG.debug("%s event (%s) waits for the running flow to end", event.kind,
                      event.source)
            return True
        return False

    def _sync_event(self, event: ContainerEvent) -> None:
        # Judged again: an inspect or a flow may have begun while the event waited.
        if self._held_back(event):
            return
        outcome = sync_container(self.deps, event.uuid, death_of(event))
        if outcome not in (Outcome.SKIPPED, Outcome.UNCHANGED):
            self.cleanup_gate.changed()
        catalog.count_sync(event.source, outcome)

    def _sync_failed(self, event: ContainerEvent) -> None:
        self.pleg.reinspect(event)

    def start(self) -> None:
        started_at = utcnow()
        self.runtime.ping()
        self.inventory()
        self.recovery = init_containers(self.deps, started_at)
        if self.deps.volumes is not None:
            reconcile_volumes(self.deps.volumes, self.config.settings.remount_container_volume)
        self._server = self.transport.serve(self.host, self.manager)
        self._server.start()
        # The first heartbeat only now: the scheduler places containers on hosts whose
        # service is up, and a cast sent before the RPC server listened would be lost
        # (with RabbitMQ, a new host's queue does not exist until then).
        self.heartbeat()
        self.pleg.start()
        interval = self.config.periodic_interval_max
        sync_interval = self.config.sync_container_state_interval
        self.periodic.add("sync_container_state", self.sync_state,
                          interval if sync_interval == 0 else sync_interval)
        self.periodic.add("delete_unused_containers", self.delete_unused_when_due, interval,
                          run_immediately=False)
        self.periodic.add("update_zun_service", self.heartbeat,
                          heartbeat_spacing(interval, self.config.service_down_time),
                          run_immediately=False)
        self.periodic.add("inventory_host", self.inventory, interval, run_immediately=False)
        lost_casts = LostCastRepairer(self.deps, self.workers.submit_flow, self.workers.busy)
        self.task_expirer = TaskExpirer(self.deps, self.workers.busy, lost_casts=lost_casts)
        self.periodic.add("expire_tasks", self.expire_tasks, self.expire_tasks_spacing)
        for task in self.deps.capsules.periodic_tasks(self.deps, interval):
            self.periodic.add(task.name, task.run, task.spacing,
                              run_immediately=task.run_immediately)
        if self.deps.placement is not None:
            self.periodic.add("audit_allocations", self.audit_allocations_when_due,
                              interval, run_immediately=False)
        # What a burst of work freed goes back to the system once it is over.
        self.periodic.add("return_freed_memory", PROCESS_HEAPS.return_freed, interval,
                          run_immediately=False)
        self.periodic.start()
        LOG.info("compute agent %s is up", self.host)

    def expire_tasks(self) -> int:
        """The expire_tasks task: reads only when a deadline may have passed
        (``periodic/idle.py``)."""
        if self.task_expirer is None:
            return 0
        interval = self.config.periodic_interval_max
        sync_spacing = self.config.sync_container_state_interval or interval
        if not expiry_due(self.last_state_sync, utcnow(),
                          read_max_age(sync_spacing, interval, FULL_RUN_INTERVALS)):
            return 0
        return self.task_expirer.run()

    def stop(self) -> None:
        self.periodic.stop()
        self.pleg.stop()
        self.sync_workers.stop(wait=True)
        server, self._server = self._server, None
        if server is not None:
            server.stop()
        self.workers.stop(wait=True)
        self.deps.overlap.shutdown(wait=True)
        self.tracker.stop()
        LOG.info("compute agent %s stopped", self.host)


def death_of(event: ContainerEvent) -> Death | None:
    """The "die" a stream event reports, for the sync to write before its inspect;
    None for any other event (a relist's, or a die without its exit code)."""
    if (event.kind != EventKind.DIED or event.source != EventSource.WATCH
            or event.exit_code is None or event.engine_at_ns is None):
        return None
    return Death(event.container_id, event.exit_code, event.engine_at_ns)
