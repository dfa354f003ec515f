import math

from berth.scheduler.base import HostState, RequestSpec


class ResourceFilter:
    """The node has room for the container's cpu, memory and disk: as the agent's
    claim counts them (fractions of cores), and as Placement will (whole VCPUs, each
    container at least one, none larger than the node's cores or memory, disk only
    where the node offers some and its engine can enforce it). Zun's scheduler asked Placement for candidates;
    without the Placement checks a node Placement refuses was picked, and the
    agent's allocation then failed the create."""

    name = "ResourceFilter"

    def skips(self, spec: RequestSpec) -> bool:
        return False

    def passes(self, host: HostState, spec: RequestSpec) -> str | None:
        cpu, memory, disk = _cpu(host, spec), _memory(host, spec), _disk(host, spec)
        if cpu is None and memory is None and disk is None:
            return None         # the common case, once per node and create: no list
        return "; ".join(why for why in (cpu, memory, disk) if why) or None


def _cpu(host: HostState, spec: RequestSpec) -> str | None:
    if spec.cpu > host.free_cpu + 1e-9:
        return f"cpu {spec.cpu:g} > free {max(host.free_cpu, 0):g}"
    vcpus = spec.vcpus
    if host.cores and vcpus > host.cores:
        return f"cpu {spec.cpu:g} takes {vcpus} VCPU, more than the node's {host.cores} cores"
    if vcpus > host.free_vcpus + 1e-9:
        return (f"cpu {spec.cpu:g} takes {vcpus} whole VCPU in Placement, free "
                f"{max(math.floor(host.free_vcpus + 1e-9), 0)} of {host.cpus:g}")
    return None


def _memory(host: HostState, spec: RequestSpec) -> str | None:
    if spec.memory_mib > host.free_memory_mib:
        return f"memory {spec.memory_mib} MiB > free {max(host.free_memory_mib, 0)} MiB"
    if host.memory_max_unit and spec.memory_mib > host.memory_max_unit:
        return (f"memory {spec.memory_mib} MiB is more than the node's "
                f"{host.memory_max_unit} MiB (Placement's largest allocation)")
    return None


def _disk(host: HostState, spec: RequestSpec) -> str | None:
    if not spec.disk_gb:
        return None
    if not host.disk_quota_supported:
        return (f"disk {spec.disk_gb} GiB asked, the node's engine cannot limit a root "
                f"filesystem")
    if host.disk_gb <= 0:
        return f"disk {spec.disk_gb} GiB asked, the node offers no disk to Placement"
    free = host.disk_gb - host.disk_used_gb
    if spec.disk_gb > free + 1e-9:
        return f"disk {spec.disk_gb} GiB > free {max(free, 0):g} GiB"
    if host.disk_max_unit and spec.disk_gb > host.disk_max_unit:
        return (f"disk {spec.disk_gb} GiB is more than the node's {host.disk_max_unit} GiB "
                f"(Placement's largest allocation)")
    return None
