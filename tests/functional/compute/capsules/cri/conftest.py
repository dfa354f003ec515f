"""The CRI capsule driver's tests run on the private containerd of
``.ci/ci-services.sh start containerd`` (started here when it does not answer). They
fail, never skip, when it cannot be had: capsule_driver = cri must be tested."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from support.berth_proc import BerthProcess
from support.containerd import (
    CGROUP_PARENT,
    ROOT,
    SOCKET,
    answers,
    pod_runtime,
    remove_cgroup_parent,
)

from berth.runtime.cri.client import CriRuntime


@pytest.fixture(scope="session")
def containerd_socket() -> str:
    if answers() is None:
        done = subprocess.run(["bash", str(ROOT / ".ci/ci-services.sh"), "start", "containerd"],
                              capture_output=True, text=True, timeout=600, check=False)
        if answers() is None:
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
    pods = pod_runtime(proc.dir / "state")
    for pod in pods.pods(proc.host):      # whatever a failed test left
        pods.stop_pod(pod.id)
        pods.remove_pod(pod.id, pod.uuid)
    pods.close()
    remove_cgroup_parent()


@pytest.fixture
def pods(cri_berth: BerthProcess) -> Iterator[CriRuntime]:
    client = pod_runtime(cri_berth.dir / "state")
    yield client
    client.close()

