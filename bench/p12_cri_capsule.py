"""P12: a capsule of two members on containerd (``capsule_driver = cri``), create→
Running through the API, sequential.

In the same run: the same capsule with the docker driver (the main bench berth, as
P9 times it), and the raw CRI calls that make the same pod (RunPodSandbox, then
CreateContainer + StartContainer for each member, on berth's own gRPC client, the pod
plugged by berth-cni and berth's CNI daemon as berth's capsules are). berth's
time runs from the POST until the API shows the capsule Running (GET polled every
10 ms). The ratio is berth on CRI against the raw calls; goal ≤ 1.3 (the API's POST,
scheduling, the claim and the rows, around about 0.4 s of containerd's work).
Needs ``.ci/ci-services.sh start containerd``.
"""

from __future__ import annotations

import time
import uuid as uuidlib

from support.berth_proc import remove_local_networks
from support.containerd import CNI_BIN_DIR, CNI_CONF_DIR, SOCKET, remove_cgroup_parent

from bench import p9_capsule_create
from bench.common import COMMAND, IMAGE, Berth, MissingImage, Result, median, ratio, settle
from berth.cni.contract import network_config
from berth.cni.pod import pod_annotations
from berth.network.base import NetworkSpec
from berth.runtime import base as rt
from berth.runtime.cri.base import PodSpec
from berth.runtime.cri.client import CriRuntime

CGROUP_PARENT = "/berth-bench"
RAW_SUBNET = "10.246.0.0/24"


def p12(berth: Berth, runs: int = 10, poll: float = 0.01) -> Result:
    cri_berth = Berth(f"[quota]\ncontainers = -1\nmemory = -1\ncpu = -1\ndisk = -1\n"
                      f"[compute]\ncpu_allocation_ratio = 64\n"
                      f"[DEFAULT]\ncapsule_driver = cri\n"
                      f"[cri]\ncontainerd_socket = {SOCKET}\ncgroup_parent = {CGROUP_PARENT}\n"
                      f"cni_conf_dir = {CNI_CONF_DIR}\ncni_bin_dir = {CNI_BIN_DIR}\n")
    pods = CriRuntime(SOCKET, 60.0, CGROUP_PARENT, "/tmp/berth-bench-cri-logs")
    if not pods.image_present(IMAGE):     # berth's IfNotPresent would pull it from outside
        pods.close()
        cri_berth.stop()
        raise MissingImage(f"containerd at {SOCKET} lacks {IMAGE}, and the benchmarks pull "
                           f"nothing: `.ci/ci-services.sh start containerd` imports it")
    # The raw pods take the same CNI path as berth's (berth-cni, then berth's daemon
    # plugs a veth on a local network), on a network of their own.
    raw_net = pod_annotations(
        [{"config": network_config(NetworkSpec.build("p12-raw", RAW_SUBNET)), "ifname": "eth0",
          "ip": None}], f"http://127.0.0.1:{cri_berth.proc.cniport}")
    times: dict[str, list[float]] = {"raw": [], "cri": [], "docker": []}
    sides = {"raw": lambda: _raw_pod(pods, raw_net),
             "cri": lambda: p9_capsule_create._berth_capsule(cri_berth, poll),
             "docker": lambda: p9_capsule_create._berth_capsule(berth, poll)}
    try:
        p9_capsule_create._ensure_sandbox_image()
        for side in sides.values():             # warm every path
            side()
        for i in range(runs):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            for name in order:
                settle(window=0.2)
                times[name].append(sides[name]())
    finally:
        pods.close()
        cri_berth.stop()
        remove_local_networks(cri_berth.proc)
        remove_cgroup_parent(CGROUP_PARENT)
    c, r, d = median(times["cri"]), median(times["raw"]), median(times["docker"])
    q = ratio(c, r)
    return Result("P12", f"CRI capsule (2 members) create→Running, median of {runs}", c, r,
                  "s", "ratio ≤ 1.3", q is not None and q <= 1.3, q,
                  {"cri_all": times["cri"], "raw_cri_all": times["raw"],
                   "docker_driver_median": d, "docker_driver_all": times["docker"],
                   "cri_vs_docker_driver": ratio(c, d)})


def _raw_pod(pods: CriRuntime, annotations: dict[str, str]) -> float:
    pod = PodSpec(uuid=str(uuidlib.uuid4()), name="p12", host="bench-raw",
                  annotations=annotations)
    t0 = time.perf_counter()
    pod_id = pods.run_pod(pod)
    for _ in range(2):
        spec = rt.ContainerSpec(uuid=str(uuidlib.uuid4()), host="bench-raw", image=IMAGE,
                                command=tuple(COMMAND), memory_mib=32, cpu_shares=102)
        pods.start_member(pods.create_member(pod_id, pod, spec))
    wall = time.perf_counter() - t0
    pods.stop_pod(pod_id)
    pods.remove_pod(pod_id, pod.uuid)
    return wall
