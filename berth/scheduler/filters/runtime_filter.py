from berth.scheduler.base import HostState, RequestSpec


class RuntimeFilter:
    """The node offers the requested container runtime."""

    name = "RuntimeFilter"

    def skips(self, spec: RequestSpec) -> bool:
        return not spec.runtime

    def passes(self, host: HostState, spec: RequestSpec) -> str | None:
        if spec.runtime and spec.runtime not in host.runtimes:
            return f"has no runtime {spec.runtime} (has {', '.join(host.runtimes)})"
        return None
