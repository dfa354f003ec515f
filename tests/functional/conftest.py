"""Functional tests drive the real Docker engine.

They are skipped, not failed, when the engine's socket does not answer (a developer
machine without Docker); anything else that is missing (the local registry, the test
image) makes them fail. ``BERTH_TEST_DOCKER_URL`` overrides the engine's address.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import docker
import pytest

DOCKER_URL = os.environ.get("BERTH_TEST_DOCKER_URL", "unix:///var/run/docker.sock")


def _docker_problem(url: str) -> str | None:
    """Why the engine at ``url`` does not answer a ping, or None when it does."""
    try:
        client = docker.APIClient(base_url=url, version="auto", timeout=5)
    except Exception as exc:  # noqa: BLE001 - any failure means "no engine here"
        return str(exc)
    try:
        client.ping()
    except Exception as exc:  # noqa: BLE001
        return str(exc)
    finally:
        client.close()
    return None


@pytest.fixture(scope="session")
def docker_url() -> str:
    """The engine's address; skips the requesting test when the engine does not answer."""
    problem = _docker_problem(DOCKER_URL)
    if problem is not None:
        pytest.skip(f"Docker engine at {DOCKER_URL} does not answer: {problem}")
    return DOCKER_URL


@pytest.fixture(autouse=True)
def _requires_docker(docker_url: str) -> None:
    """Every functional test needs the engine."""


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    """A failed test of the shared berth gets that berth's log lines about the
    containers its failure names: the agent's side of a failure seen once in CI is
    otherwise lost with the run."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    proc = getattr(item, "funcargs", {}).get("berth")
    if report.when != "call" or not report.failed or proc is None:
        return
    uuids = set(_UUID.findall(report.longreprtext))
    if uuids:
        lines = [line for line in proc.log_text().splitlines()
                 if any(u in line for u in uuids)]
        report.sections.append((f"berth's log about {', '.join(sorted(uuids))}",
                                "\n".join(lines[-80:])))


@pytest.fixture
def proxy():  # type: ignore[no-untyped-def]
    """A proxy in front of the engine (tests/support/engine_proxy.py) for one test:
    give berth its ``url`` as ``[docker]api_url`` and set its ``rules``."""
    from support.engine_proxy import EngineProxy

    p = EngineProxy().start()
    yield p
    p.stop()


@pytest.fixture(scope="session")
def berth(docker_url: str):  # type: ignore[no-untyped-def]
    """One ``berth serve`` shared by the session's functional tests. Tests must not
    stop or kill it (use ``berth_factory`` for that) and must clean up what they create."""
    from support.berth_proc import BerthProcess, remove_local_networks, unmount_volumes

    proc = BerthProcess().start()
    # Many test modules share this berth and its admin project: do not let Zun's
    # default quotas (40 containers, 20 cpus) turn leftovers of one test into 403s
    # in another. Tests of quotas use projects of their own.
    with proc.http() as http:
        http.put("/v1/quotas/admin", json={"containers": -1, "cpu": -1, "memory": -1,
                                           "disk": -1}).raise_for_status()
    yield proc
    proc.stop()
    _remove_containers_of(proc.host)
    remove_local_networks(proc)
    unmount_volumes(proc)


@pytest.fixture
def berth_factory(docker_url: str):  # type: ignore[no-untyped-def]
    """Start private ``berth serve`` processes (for tests that stop, kill or restart
    them). Everything they made in Docker is removed afterwards."""
    from support.berth_proc import BerthProcess, remove_local_networks, unmount_volumes

    made: list[BerthProcess] = []

    def make(extra_conf: str = "", **kwargs):  # type: ignore[no-untyped-def]
        proc = BerthProcess(extra_conf, **kwargs)
        made.append(proc)
        return proc

    yield make
    for proc in made:
        proc.stop()
        _remove_containers_of(proc.host)
        remove_local_networks(proc)
        unmount_volumes(proc)


def _remove_containers_of(host: str) -> None:
    client = docker.from_env()
    try:
        for c in client.containers.list(all=True, ignore_removed=True,
                filters={"label": f"berth.host={host}"}):
            c.remove(force=True)
    finally:
        client.close()


@pytest.fixture(scope="session")
def offline_engine(docker_url: str):  # type: ignore[no-untyped-def]
    """A Docker engine in a network namespace of its own with only loopback
    (``ci-services.sh node-start offline``): what it would ask outside (a Docker Hub
    search, a pull) fails at once, and no query leaves the machine. Yields its URL."""
    import subprocess
    from pathlib import Path

    from support.workers import worker_suffix

    name = f"offline{worker_suffix()}"
    script = Path(__file__).resolve().parents[2] / ".ci" / "ci-services.sh"
    subprocess.run(["bash", str(script), "node-start", name], check=True,
                   capture_output=True, timeout=300)
    yield f"unix:///run/berth-node-{name}.sock"
    subprocess.run(["bash", str(script), "node-stop", name], check=False,
                   capture_output=True, timeout=120)


@pytest.fixture(scope="session")
def quota_engine(docker_url: str):  # type: ignore[no-untyped-def]
    """A Docker engine whose storage driver can limit a container's root filesystem
    (btrfs with quotas: ``NODE_FS=btrfs ci-services.sh node-start diskquota``), in a
    network namespace of its own, with the test image loaded. Yields its URL."""
    import os
    import subprocess
    from pathlib import Path

    from support.berth_proc import TEST_IMAGE
    from support.workers import worker_suffix

    name = f"diskquota{worker_suffix()}"
    script = Path(__file__).resolve().parents[2] / ".ci" / "ci-services.sh"
    subprocess.run(["bash", str(script), "node-start", name], check=True,
                   capture_output=True, timeout=300, env=dict(os.environ, NODE_FS="btrfs"))
    url = f"unix:///run/berth-node-{name}.sock"
    host = docker.APIClient(base_url=docker_url, version="auto")
    node = docker.APIClient(base_url=url, version="auto")
    try:
        node.load_image(b"".join(host.get_image(TEST_IMAGE)))
    finally:
        host.close()
        node.close()
    yield url
    node = docker.APIClient(base_url=url, version="auto")
    try:            # what the tests made on it (berth_factory cleans the host's engine)
        for c in node.containers(all=True):
            try:
                node.remove_container(c["Id"], force=True)
            except docker.errors.APIError as err:   # gone, or being removed (--rm)
                if err.status_code not in (404, 409):
                    raise
    finally:
        node.close()
    subprocess.run(["bash", str(script), "node-stop", name], check=False,
                   capture_output=True, timeout=120)


@pytest.fixture(scope="session")
def containerd_socket() -> str:
    """The private containerd of ``ci-services.sh start containerd`` (started when it
    does not answer); fails, never skips, when it cannot be had."""
    import subprocess

    from support.containerd import ROOT, SOCKET, answers

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
    from support.containerd import CGROUP_PARENT, CNI_BIN_DIR, CNI_CONF_DIR

    return (f"[DEFAULT]\ncapsule_driver = cri\n[cri]\ncontainerd_socket = {containerd_socket}\n"
            f"cgroup_parent = {CGROUP_PARENT}\ncni_conf_dir = {CNI_CONF_DIR}\n"
            f"cni_bin_dir = {CNI_BIN_DIR}\n"
            # Members restart after 0.5, 1, 2, 2 ... s (kubelet's 10 s would slow the tests).
            f"restart_backoff_initial = 0.5\nrestart_backoff_max = 2\n")


@pytest.fixture(scope="session")
def cri_berth(cri_conf: str, docker_url: str):  # type: ignore[no-untyped-def]
    """One ``berth serve`` with capsule_driver = cri, shared by the session's tests
    (same rules as ``berth``)."""
    from support.berth_proc import BerthProcess, remove_local_networks
    from support.containerd import pod_runtime, remove_cgroup_parent

    proc = BerthProcess(cri_conf).start()
    with proc.http() as http:
        http.put("/v1/quotas/admin", json={"containers": -1, "cpu": -1, "memory": -1,
                                           "disk": -1}).raise_for_status()
    yield proc
    proc.stop()
    remove_local_networks(proc)
    pods = pod_runtime(proc.dir / "state")
    for pod in pods.pods(proc.host):      # whatever a failed test left
        pods.stop_pod(pod.id)
        pods.remove_pod(pod.id, pod.uuid)
    pods.close()
    remove_cgroup_parent()


@pytest.fixture
def pods(cri_berth):  # type: ignore[no-untyped-def]
    """A client of containerd, as ``cri_berth`` sees it."""
    from support.containerd import pod_runtime

    client = pod_runtime(cri_berth.dir / "state")
    yield client
    client.close()


@pytest.fixture
def zun(berth):  # type: ignore[no-untyped-def]
    """python-zunclient against the shared berth, as admin."""
    return berth.client()


@pytest.fixture(scope="session")
def docker_client(docker_url: str):  # type: ignore[no-untyped-def]
    client = docker.DockerClient(base_url=docker_url, version="auto")
    yield client
    client.close()
