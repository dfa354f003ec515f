from berth.scheduler.base import HostState, RequestSpec


class ResourceFilter:
    """The node has room for the container's cpu and memory."""

    name = "ResourceFilter"

    def passes(self, host: HostState, spec: RequestSpec) -> str | None:
        short = []
        if spec.cpu > host.free_cpu + 1e-9:
            short.append(f"cpu {spec.cpu:g} > free {max(host.free_cpu, 0):g}")
        if spec.memory_mib > host.free_memory_mib:
            short.append(f"memory {spec.memory_mib} MiB > free "
                         f"{max(host.free_memory_mib, 0)} MiB")
        return "; ".join(short) or None
