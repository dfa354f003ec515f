from collections.abc import Sequence

from berth.scheduler.base import HostState, RequestSpec


class CPUWeigher:
    """Scores a node by the cpu it has free (cores, after ratios and reservations)."""

    name = "CPUWeigher"

    def __init__(self, multiplier: float = 1.0) -> None:
        self.multiplier = multiplier

    def scores(self, hosts: Sequence[HostState], spec: RequestSpec) -> list[float]:
        return [h.free_cpu for h in hosts]
