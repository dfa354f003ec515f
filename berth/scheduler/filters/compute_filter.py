from berth.scheduler.base import HostState, RequestSpec


class ComputeFilter:
    """The node's agent is up and its service is not disabled."""

    name = "ComputeFilter"

    def skips(self, spec: RequestSpec) -> bool:
        return False

    def passes(self, host: HostState, spec: RequestSpec) -> str | None:
        if host.service_disabled:
            return f"service disabled ({host.disabled_reason or 'no reason given'})"
        if not host.service_up:
            return "compute agent is down (no recent heartbeat)"
        return None
