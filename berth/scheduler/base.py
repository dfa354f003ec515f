"""The scheduler interface and the values it works on."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy import Connection

from berth.placement.requests import vcpus_of


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """What the new container asks for."""

    cpu: float
    memory_mib: int
    runtime: str | None = None
    #: DISK_GB it asks of Placement (0: none).
    disk_gb: int = 0
    availability_zone: str | None = None
    requested_host: str | None = None
    hints: dict[str, object] = field(default_factory=dict)
    #: The whole VCPUs it asks of Placement (``vcpus_of(cpu)``), worked out once: the
    #: filters ask it of every node a create weighs (420 at 1,000 nodes).
    vcpus: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "vcpus", vcpus_of(self.cpu))


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
    #: Its compute_node row's primary key ("": not known), which the API locks while
    #: it places a container there (``berth.scheduler.node_claim``).
    node_uuid: str = ""
    #: Its resource provider in Placement (its ``rp_uuid``, else its uuid; "": not
    #: known), which the API allocates a container on with the embedded Placement.
    provider_uuid: str = ""
    #: The most memory one container may take (Placement's MEMORY_MB max_unit, the
    #: node's memory, whatever the ratio); 0: not known.
    memory_max_unit: int = 0
    #: DISK_GB capacity (after ratio and reservation), what its containers hold, and
    #: the most one may take; capacity 0: the node offers no disk to Placement.
    disk_gb: float = 0.0
    disk_used_gb: int = 0
    disk_max_unit: int = 0
    #: Whether the node's engine can limit a container's root filesystem (a ``disk``).
    disk_quota_supported: bool = False
    #: The Docker daemon's labels of the node (LabelFilter).
    labels: Mapping[str, str] = field(default_factory=dict)

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
    #: The node as the scheduler saw it when it chose it (None: not known).
    state: HostState | None = field(default=None, compare=False)
    #: The best of the other nodes that passed the filters (a few: the runners-up
    #: the choice is weighed against again under the node's lock), best first, as
    #: the scheduler saw them.
    alternatives: tuple[HostState, ...] = field(default=(), compare=False)
    #: Which read of the nodes the choice was made on (``HostStateCache.generation``).
    view: int = field(default=-1, compare=False)


class Filter(Protocol):
    name: str

    def skips(self, spec: RequestSpec) -> bool:
        """True when the filter has nothing to check for this request (no zone, no
        runtime asked, ...): the scheduler then asks it about no node, as
        kube-scheduler skips a plugin whose PreFilter answers Skip."""

    def passes(self, host: HostState, spec: RequestSpec) -> str | None:
        """None when ``host`` can take the container, else why not (for the log and
        the user's error)."""


class Weigher(Protocol):
    name: str
    #: Scales this weigher's 0..1 score; negative turns "more is better" around.
    multiplier: float

    def scores(self, hosts: Sequence[HostState], spec: RequestSpec) -> list[float]:
        """How good each of ``hosts`` is for the container, in their order, on the
        weigher's own scale (more is better); the scheduler rescales them over the
        candidates. All at once: a create weighs hundreds of nodes (bench P15)."""


#: Locks the chosen node in the caller's transaction another way than its compute_node
#: row (the embedded Placement's provider row: ``berth.api.operations.placing``);
#: True when it did.
NodeLock = Callable[[Connection], bool]


class Scheduler(Protocol):
    def select_destination(self, spec: RequestSpec, exclude: Mapping[str, str] | None = None
                           ) -> Selection:
        """The node to place the container on, never one of ``exclude`` (nodes the
        caller found full since it last asked, each with why); NoValidHost (saying why
        each node was refused) when none fits."""

    def room_check(self, selection: Selection, spec: RequestSpec, *, best: bool = True,
                   lock: NodeLock | None = None) -> Callable[[Connection], None]:
        """The check to run in the transaction that writes the placement: refuses it
        when the container no longer fits on the chosen node
        (``node_claim.NodeFilledMeanwhile``), or, with ``best``, when what was placed
        there meanwhile makes another candidate the better choice
        (``node_claim.NodeNoLongerBest``). ``lock``: how the check locks the node
        before it reads it, when it can."""

    def holding(self, selection: Selection, spec: RequestSpec
                ) -> AbstractContextManager[None]:
        """Count a container of ``spec`` on ``selection``'s node in this scheduler's
        next choices while the caller places it there (its row not yet written)."""

    def placed(self, selection: Selection, spec: RequestSpec) -> None:
        """The row placing a container of ``spec`` on ``selection``'s node was written."""
