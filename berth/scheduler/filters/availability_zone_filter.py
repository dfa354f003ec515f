from berth.scheduler.base import HostState, RequestSpec


class AvailabilityZoneFilter:
    """The node is in the requested zone (or no zone was requested)."""

    name = "AvailabilityZoneFilter"

    def __init__(self, default_schedule_zone: str | None = None) -> None:
        self._default = default_schedule_zone

    def skips(self, spec: RequestSpec) -> bool:
        return not (spec.availability_zone or self._default)

    def passes(self, host: HostState, spec: RequestSpec) -> str | None:
        wanted = spec.availability_zone or self._default
        if wanted and wanted != host.availability_zone:
            return f"in zone {host.availability_zone}, not {wanted}"
        return None
