"""The CRI capsule driver's tests run on the private containerd of
``.ci/ci-services.sh start containerd`` (started here when it does not answer). They
fail, never skip, when it cannot be had: capsule_driver = cri must be tested."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.berth_proc import BerthProcess

from berth.runtime import base as rt
from berth.runtime.cri.client import CriRuntime

ROOT = Path(__file__).resolve().parents[5]
STATE = os.environ.get("BERTH_CI_STATE", "/var/tmp/berth-ci")
SOCKET = os.environ.get("BERTH_CONTAINERD_SOCKET", f"{STATE}/containerd/containerd.sock")
CGROUP_PARENT = "/berth-cri-test"


def _answers(socket: str) -> str | None:
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


@pytest.fixture(scope="session")
def containerd_socket() -> str:
    if _answers(SOCKET) is None:
        done = subprocess.run(["bash", str(ROOT / ".ci/ci-services.sh"), "start", "containerd"],
                              capture_output=True, text=True, timeout=600, check=False)
        if _answers(SOCKET) is None:
            pytest.fail(f"containerd with the CRI plugin does not answer on {SOCKET}, and "
                        f"ci-services.sh start containerd did not start it (exit "
                        f"{done.returncode}): {done.stderr[-2000:]}")
    return SOCKET


@pytest.fixture(scope="session")
def cri_conf(containerd_socket: str) -> str:
    """The lines that make a berth run its capsules on that containerd."""
    return (f"[DEFAULT]\ncapsule_driver = cri\n[cri]\ncontainerd_socket = {containerd_socket}\n"
            f"cgroup_parent = {CGROUP_PARENT}\n")


@pytest.fixture(scope="session")
def cri_berth(cri_conf: str, docker_url: str) -> Iterator[BerthProcess]:
    """One ``berth serve`` with capsule_driver = cri, shared by the module's tests."""
    proc = BerthProcess(cri_conf).start()
    with proc.http() as http:
        http.put("/v1/quotas/admin", json={"containers": -1, "cpu": -1, "memory": -1,
                                           "disk": -1}).raise_for_status()
    yield proc
    proc.stop()
    pods = pod_runtime(proc)
    for pod in pods.pods(proc.host):      # whatever a failed test left
        pods.stop_pod(pod.id)
        pods.remove_pod(pod.id, pod.uuid)
    pods.close()


def pod_runtime(proc: BerthProcess) -> CriRuntime:
    """A client of the same containerd, as the berth ``proc`` sees it."""
    return CriRuntime(SOCKET, 30.0, CGROUP_PARENT, str(proc.dir / "state" / "cri-logs"))


@pytest.fixture
def pods(cri_berth: BerthProcess) -> Iterator[CriRuntime]:
    client = pod_runtime(cri_berth)
    yield client
    client.close()

