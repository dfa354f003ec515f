"""What the API process shares between requests (on ``app.state.berth``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from berth.api.schemas.container import CreateLimits
from berth.db import nodes
from berth.db.engine import Database
from berth.rpc.client import ComputeAPI
from berth.scheduler.base import Scheduler


@dataclass(frozen=True, slots=True)
class ApiSettings:
    max_limit: int = 1000
    service_down_time: int = 180
    enable_image_validation: bool = True
    unique_container_name_scope: str = ""
    default_registry: str | None = None
    create_limits: CreateLimits = field(default_factory=CreateLimits)


@dataclass(slots=True)
class ApiState:
    db: Database
    compute: ComputeAPI
    scheduler: Scheduler
    settings: ApiSettings

    def host_is_up(self, host: str) -> bool:
        return host in nodes.up_compute_hosts(self.db, self.settings.service_down_time)
