import math

from berth.placement.requests import vcpus_of
from berth.scheduler.base import HostState, RequestSpec


class ResourceFilter:
    """The node has room for the container's cpu and memory: as the agent's claim
    counts them (fractions of cores), and as Placement will (whole VCPUs, each
    container at least one, none larger than the node's cores). Zun's scheduler asked
    Placement for candidates; without the second check a node full in Placement but
    not in cores was picked, and the agent's allocation then failed the create."""

    name = "ResourceFilter"

    def passes(self, host: HostState, spec: RequestSpec) -> str | None:
        short = []
        if spec.cpu > host.free_cpu + 1e-9:
            short.append(f"cpu {spec.cpu:g} > free {max(host.free_cpu, 0):g}")
        else:
            vcpus = vcpus_of(spec.cpu)
            if host.cores and vcpus > host.cores:
                short.append(f"cpu {spec.cpu:g} takes {vcpus} VCPU, more than the node's "
                             f"{host.cores} cores")
            elif vcpus > host.free_vcpus + 1e-9:
                short.append(f"cpu {spec.cpu:g} takes {vcpus} whole VCPU in Placement, "
                             f"free {max(math.floor(host.free_vcpus + 1e-9), 0)} of "
                             f"{host.cpus:g}")
        if spec.memory_mib > host.free_memory_mib:
            short.append(f"memory {spec.memory_mib} MiB > free "
                         f"{max(host.free_memory_mib, 0)} MiB")
        return "; ".join(short) or None
