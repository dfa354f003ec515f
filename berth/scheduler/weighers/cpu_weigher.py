from berth.scheduler.base import HostState, RequestSpec


class CPUWeigher:
    """Scores a node by the cpu it has free (cores, after ratios and reservations)."""

    name = "CPUWeigher"

    def __init__(self, multiplier: float = 1.0) -> None:
        self.multiplier = multiplier

    def score(self, host: HostState, spec: RequestSpec) -> float:
        return host.free_cpu
