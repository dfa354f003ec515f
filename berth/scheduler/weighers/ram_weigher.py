from collections.abc import Sequence

from berth.scheduler.base import HostState, RequestSpec


class RAMWeigher:
    """Scores a node by the memory it has free (MiB, after ratios and reservations)."""

    name = "RAMWeigher"

    def __init__(self, multiplier: float = 1.0) -> None:
        self.multiplier = multiplier

    def scores(self, hosts: Sequence[HostState], spec: RequestSpec) -> list[float]:
        return [float(h.free_memory_mib) for h in hosts]
