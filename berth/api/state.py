"""What the API process shares between requests (on ``app.state.berth``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from berth.api.image_checks import RecentImageChecks
from berth.api.schemas.container import CreateLimits
from berth.conf import default as conf_default
from berth.conf.api import BODY_TIMEOUT, MAX_REQUEST_BODY_SIZE
from berth.conf.quota import DEFAULTS as QUOTA_DEFAULTS
from berth.db import nodes
from berth.db.engine import Database
from berth.db.networks import SubnetPool
from berth.metrics.health import Readiness
from berth.placement.embedded import EmbeddedPlacement
from berth.rpc.client import ComputeAPI
from berth.scheduler.base import Scheduler
from berth.volume.base import VolumeDriver


@dataclass(frozen=True, slots=True)
class ApiSettings:
    max_limit: int = 1000
    service_down_time: int = conf_default.SERVICE_DOWN_TIME
    #: [compute]task_state_timeout: how long a status the API writes before a cast
    #: (Restarting, Rebuilding, Deleting) waits for the agent (``cast_deadlines``).
    task_state_timeout: int = 600
    enable_image_validation: bool = True
    unique_container_name_scope: str = ""
    default_registry: str | None = None
    create_limits: CreateLimits = field(default_factory=CreateLimits)
    #: [websocket_proxy]base_url and token_ttl: the console URLs the API hands out.
    console_base_url: str = "ws://127.0.0.1:6784/"
    console_token_ttl: int = 600
    #: [quota] defaults (containers, memory, cpu, disk); see berth.db.quotas.
    quota_defaults: dict[str, int] = field(default_factory=lambda: dict(QUOTA_DEFAULTS))
    #: Fernet key for registry passwords (berth.db.registries.load_key); None: registries
    #: with a password cannot be saved.
    registry_key: bytes | None = None
    default_availability_zone: str = conf_default.AVAILABILITY_ZONE
    #: [DEFAULT]sandbox_image: the image a capsule's row names (its sandbox's).
    sandbox_image: str = conf_default.SANDBOX_IMAGE
    #: [api]max_request_body_size: a larger request body is refused with 400.
    max_request_body_size: int = MAX_REQUEST_BODY_SIZE
    #: [api]body_timeout: seconds a request's body may take to arrive.
    body_timeout: float = BODY_TIMEOUT
    #: [network]driver: "local" (berth's networks, a project's default one made on
    #: first use, subnets from ``subnet_pool``) or "docker" (Docker's default bridge).
    network_driver: str = "docker"
    subnet_pool: SubnetPool = field(default_factory=SubnetPool)
    #: [volume]driver ("local" or "cinder"): where a 'volume' mount's volume lives;
    #: local_volume_default_size: GiB of a named local volume made without a size;
    #: timeout_wait_volume_deleted: how long undoing a Cinder create may wait.
    volume_driver: str = "local"
    local_volume_default_size: int = 1
    volume_delete_timeout: float = 60


@dataclass(slots=True)
class ApiState:
    db: Database
    compute: ComputeAPI
    scheduler: Scheduler
    settings: ApiSettings
    #: In ``berth serve`` the agent shares the API's process: for its host this says
    #: whether its event stream is live (rows at most about a second behind Docker),
    #: so that a show can answer from the row without the RPC. Elsewhere always False.
    local_state_live: Callable[[str], bool] = field(default=lambda host: False)
    #: Whether a host's compute service is up (cached briefly: nodes.UpHosts); the
    #: same object ``compute`` asks before each cast or call.
    up_hosts: nodes.UpHosts | None = None
    #: What /readyz checks: the database at least; the wiring adds the RPC transport
    #: and, in ``berth serve``, the agent's Docker engine.
    readiness: Readiness | None = None
    #: The API side of the volume drivers (look-ups and creates), by provider.
    volume_drivers: dict[str, VolumeDriver] = field(default_factory=dict)
    #: With [network]driver = cni: the Neutron client (berth.network.neutron.client).
    neutron: Any = None
    #: Nodes that said yes to an image check lately (``berth.api.image_checks``).
    image_checks: RecentImageChecks = field(default_factory=RecentImageChecks)
    #: With the embedded Placement (berth's database), the ledger a container's
    #: allocation is written to in the transaction that places its row
    #: (``berth.api.operations.placing``); None with OpenStack Placement, whose
    #: allocations the agents make.
    placement: EmbeddedPlacement | None = None

    def __post_init__(self) -> None:
        if self.up_hosts is None:
            self.up_hosts = nodes.UpHosts(self.db, self.settings.service_down_time)
        if self.readiness is None:
            self.readiness = Readiness({"database": self._ping_database})

    def _ping_database(self) -> None:
        self.db.ping()

    def host_is_up(self, host: str) -> bool:
        assert self.up_hosts is not None
        return self.up_hosts(host)

    def services_changed(self) -> None:
        """The API forced a service down (or up), enabled, disabled or deleted it:
        forget the cached up-hosts and the scheduler's view of the nodes, so that the
        change counts from this process's next request (other API processes see it
        within ``[scheduler]host_state_max_age``)."""
        assert self.up_hosts is not None
        self.up_hosts.forget()
        forget_view = getattr(self.scheduler, "forget_view", None)
        if forget_view is not None:
            forget_view()
