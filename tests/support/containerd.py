"""The private containerd of ``.ci/ci-services.sh start containerd``, as the CRI
capsule driver's tests and bench P11 reach it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from berth.runtime import base as rt
from berth.runtime.cri.client import CriRuntime

ROOT = Path(__file__).resolve().parents[2]
STATE = os.environ.get("BERTH_CI_STATE", "/var/tmp/berth-ci")
SOCKET = os.environ.get("BERTH_CONTAINERD_SOCKET", f"{STATE}/containerd/containerd.sock")
#: The tests' pods' cgroups live under it (not the default, /berth-cri).
CGROUP_PARENT = "/berth-cri-test"
#: That containerd's CNI directories (ci-services.sh's configuration).
CNI_CONF_DIR = f"{STATE}/containerd/cni/net.d"
CNI_BIN_DIR = "/usr/lib/cni"


def answers(socket: str = SOCKET) -> str | None:
    """containerd's version at ``socket``, or None when it does not answer."""
    if not os.path.exists(socket):
        return None
    pods = CriRuntime(socket, 5.0, CGROUP_PARENT, "/nonexistent")
    try:
        return pods.version()
    except rt.RuntimeDriverError:
        return None
    finally:
        pods.close()


def pod_runtime(state_dir: Path, socket: str = SOCKET) -> CriRuntime:
    """A client of that containerd, as a berth whose state_path is ``state_dir`` sees it."""
    return CriRuntime(socket, 30.0, CGROUP_PARENT, str(state_dir / "cri-logs"))


def remove_cgroup_parent(parent: str = CGROUP_PARENT) -> None:
    """rmdir the (empty) parent of the tests' pods' cgroups in every hierarchy."""
    for hierarchy in Path("/sys/fs/cgroup").iterdir():
        try:
            (hierarchy / parent.strip("/")).rmdir()
        except OSError:
            pass


def left_in_containerd(pods: CriRuntime, host: str, uuid: str) -> list[Any]:
    """What containerd and the node still hold of capsule ``uuid``: its pods, their
    members, its cgroup directories and its log directory."""
    found: list[Any] = [p for p in pods.pods(host) if p.uuid == uuid]
    for pod in found[:]:
        found += pods.members(pod.id)
    found += pods.cgroup_dirs(uuid)
    if (pods.log_root / uuid).exists():
        found.append(pods.log_root / uuid)
    return found
