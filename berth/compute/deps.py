"""Everything a flow needs, handed over explicitly (flows never read CONF)."""

from __future__ import annotations

from dataclasses import dataclass

from berth.compute.claims import ResourceTracker
from berth.db.engine import Database
from berth.runtime.base import Runtime


@dataclass(frozen=True, slots=True)
class AgentSettings:
    host: str
    default_pull_policy: str = "always"
    default_registry: str | None = None
    default_registry_username: str | None = None
    default_registry_password: str | None = None
    default_runtime: str = "runc"
    stop_timeout_default: int | None = None


@dataclass(frozen=True, slots=True)
class AgentDeps:
    db: Database
    runtime: Runtime
    tracker: ResourceTracker
    settings: AgentSettings

    @property
    def host(self) -> str:
        return self.settings.host
