from berth.scheduler.base import HostState, RequestSpec


class RAMWeigher:
    """Scores a node by the memory it has free (MiB, after ratios and reservations)."""

    name = "RAMWeigher"

    def __init__(self, multiplier: float = 1.0) -> None:
        self.multiplier = multiplier

    def score(self, host: HostState, spec: RequestSpec) -> float:
        return float(host.free_memory_mib)
