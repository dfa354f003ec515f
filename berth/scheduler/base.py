"""The scheduler interface and the values it works on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """What the new container asks for."""

    cpu: float
    memory_mib: int
    runtime: str | None = None
    availability_zone: str | None = None
    requested_host: str | None = None
    hints: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HostState:
    """One candidate node, as the filters see it."""

    hostname: str
    cpus: float                 # capacity after ratios and reservations
    memory_mib: int
    cpu_used: float
    memory_used_mib: int
    runtimes: tuple[str, ...]
    availability_zone: str
    service_up: bool
    service_disabled: bool
    disabled_reason: str | None = None
    #: The node's cores (Placement's largest VCPU allocation); 0: not known.
    cores: int = 0
    #: Whole VCPUs its containers hold in Placement (each at least one).
    vcpus_used: int = 0

    @property
    def free_cpu(self) -> float:
        return self.cpus - self.cpu_used

    @property
    def free_vcpus(self) -> float:
        return self.cpus - self.vcpus_used

    @property
    def free_memory_mib(self) -> int:
        return self.memory_mib - self.memory_used_mib


@dataclass(frozen=True, slots=True)
class Selection:
    host: str
    nodename: str | None = None
    limits: dict[str, object] = field(default_factory=dict)


class Filter(Protocol):
    name: str

    def passes(self, host: HostState, spec: RequestSpec) -> str | None:
        """None when ``host`` can take the container, else why not (for the log and
        the user's error)."""


class Scheduler(Protocol):
    def select_destination(self, spec: RequestSpec) -> Selection:
        """The node to place the container on; NoValidHost (saying why each node was
        refused) when none fits."""
