"""DockerRuntime against the real engine, with ``berth-test/busybox:latest`` and the
local registry at 127.0.0.1:5000. Each test creates containers with its own uuid
(named ``zun-<uuid>``) and removes them at teardown, even when it fails."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import docker
import docker.errors
import pytest

from berth.runtime.base import (
    LABEL_HOST,
    LABEL_UUID,
    ContainerSpec,
    EventKind,
    HealthcheckSpec,
    ImageRef,
    PullProgress,
    RunState,
    RuntimeConflict,
    RuntimeEvent,
    RuntimeImageNotFound,
    RuntimeImagePullFailed,
    RuntimeNotFound,
    RuntimeUnavailable,
)
from berth.runtime.docker import DockerRuntime

pytestmark = pytest.mark.functional

IMAGE = "berth-test/busybox:latest"
REGISTRY = "127.0.0.1:5000"
REGISTRY_IMAGE = ImageRef(f"{REGISTRY}/berth-test/busybox", "latest")
#: Nothing listens here: the engine's connection is refused at once.
DEAD_REGISTRY = "127.0.0.1:5999"

MakeSpec = Callable[..., ContainerSpec]


@pytest.fixture(scope="module")
def runtime(docker_url: str) -> Iterator[DockerRuntime]:
    rt = DockerRuntime(base_url=docker_url, timeout=30)
    yield rt
    rt.close()


@pytest.fixture(scope="module")
def sdk(docker_url: str) -> Iterator[docker.APIClient]:
    """The raw SDK, to check what the engine really holds and to act behind berth's back."""
    client = docker.APIClient(base_url=docker_url, version="auto", timeout=30)
    yield client
    client.close()


@pytest.fixture
def make_spec(sdk: docker.APIClient) -> Iterator[MakeSpec]:
    """Build specs with fresh uuids; remove every container made from them at teardown."""
    uuids: list[str] = []

    def make(**fields: object) -> ContainerSpec:
        new = str(uuid.uuid4())
        uuids.append(new)
        fields.setdefault("host", f"test-host-{new[:8]}")
        fields.setdefault("image", IMAGE)
        fields.setdefault("command", ("sleep", "300"))
        return ContainerSpec(uuid=new, **fields)  # type: ignore[arg-type]

    yield make
    for made in uuids:
        found = sdk.containers(all=True, filters={"label": f"{LABEL_UUID}={made}"})
        for ident in [c["Id"] for c in found] + [f"zun-{made}"]:
            with contextlib.suppress(docker.errors.NotFound):
                sdk.remove_container(ident, force=True)


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


# -- containers -----------------------------------------------------------------------


def test_container_lifecycle_create_start_stop_delete(
    runtime: DockerRuntime, make_spec: MakeSpec
) -> None:
    # PID 1 exits with 3 on SIGTERM, so the stop is quick and the exit code is ours.
    spec = make_spec(command=("sh", "-c", "trap 'exit 3' TERM; sleep 300 & wait"))
    cid = runtime.create(spec)

    created = runtime.inspect(cid)
    assert created.name == spec.name
    assert created.uuid == spec.uuid
    assert created.state is not None and created.state.status is RunState.CREATED
    assert created.state.exit_code is None and created.state.started_at is None

    runtime.start(cid)
    running = runtime.inspect(spec.name)
    assert running.id == cid
    assert running.state is not None
    assert running.state.status is RunState.RUNNING and running.state.running
    assert running.state.pid > 0 and running.state.started_at is not None

    runtime.stop(cid, timeout=10)
    stopped = runtime.inspect(cid).state
    assert stopped is not None
    assert stopped.status is RunState.EXITED and not stopped.running
    assert stopped.exit_code == 3
    assert stopped.finished_at is not None and stopped.finished_at >= running.state.started_at

    runtime.delete(cid)
    with pytest.raises(RuntimeNotFound):
        runtime.inspect(cid)


def test_start_of_running_and_stop_of_stopped_are_noops(
    runtime: DockerRuntime, make_spec: MakeSpec
) -> None:
    cid = runtime.create(make_spec())
    runtime.start(cid)
    runtime.start(cid)
    runtime.stop(cid, timeout=1)
    runtime.stop(cid, timeout=1)
    state = runtime.inspect(cid).state
    assert state is not None and state.status is RunState.EXITED
    assert state.exit_code == 137, "sh as PID 1 ignores SIGTERM, so the stop had to SIGKILL"


def test_restart_without_a_timeout_uses_the_engines(runtime: DockerRuntime,
                                                   make_spec: MakeSpec) -> None:
    """A reboot without ?timeout= passed None to the SDK, which adds it to its own
    connection time-out: a TypeError, and the row stayed Restarting."""
    loop = "trap 'exit 0' TERM; while true; do sleep 1; done"
    cid = runtime.create(make_spec(command=("sh", "-c", loop)))
    runtime.start(cid)
    first = runtime.inspect(cid).state
    runtime.restart(cid)
    state = runtime.inspect(cid).state
    assert first is not None and state is not None
    assert state.status is RunState.RUNNING and state.pid != first.pid


def test_delete_of_missing_container_is_noop(runtime: DockerRuntime, make_spec: MakeSpec) -> None:
    runtime.delete(f"zun-{uuid.uuid4()}")
    cid = runtime.create(make_spec())
    runtime.delete(cid)
    runtime.delete(cid, force=True)


def test_delete_force_removes_running_container(
    runtime: DockerRuntime, make_spec: MakeSpec
) -> None:
    cid = runtime.create(make_spec())
    runtime.start(cid)
    with pytest.raises(RuntimeConflict):
        runtime.delete(cid)
    runtime.delete(cid, force=True)
    with pytest.raises(RuntimeNotFound):
        runtime.inspect(cid)


def test_inspect_missing_container_raises_not_found(runtime: DockerRuntime) -> None:
    with pytest.raises(RuntimeNotFound, match="No such container"):
        runtime.inspect(f"zun-{uuid.uuid4()}")


def test_create_twice_with_same_uuid_conflicts(runtime: DockerRuntime, make_spec: MakeSpec) -> None:
    spec = make_spec()
    runtime.create(spec)
    with pytest.raises(RuntimeConflict, match="already in use"):
        runtime.create(spec)


def test_create_with_absent_image_raises_image_not_found(
    runtime: DockerRuntime, make_spec: MakeSpec
) -> None:
    with pytest.raises(RuntimeImageNotFound):
        runtime.create(make_spec(image="berth-test/no-such-image:never"))


def test_create_sends_resources_labels_and_config(
    runtime: DockerRuntime, make_spec: MakeSpec, sdk: docker.APIClient
) -> None:
    spec = make_spec(
        memory_mib=64, cpu_shares=512, labels={"team": "blue"}, environment={"GREETING": "hi"},
        workdir="/tmp", hostname="web-1", exposed_ports=("80/tcp", "53/udp"),
        restart_policy={"Name": "on-failure", "MaximumRetryCount": 2},
        healthcheck=HealthcheckSpec(test="true", interval=30, timeout=5, retries=2),
        tty=True, interactive=True,
    )
    cid = runtime.create(spec)
    raw = sdk.inspect_container(cid)
    host_config, config = raw["HostConfig"], raw["Config"]
    assert host_config["Memory"] == 64 * 1024 * 1024
    assert host_config["CpuShares"] == 512
    assert host_config["RestartPolicy"] == {"Name": "on-failure", "MaximumRetryCount": 2}
    assert config["Labels"]["team"] == "blue"
    assert config["Labels"][LABEL_UUID] == spec.uuid
    assert config["Labels"][LABEL_HOST] == spec.host
    assert "GREETING=hi" in config["Env"]
    assert config["WorkingDir"] == "/tmp"
    assert config["Tty"] is True and config["OpenStdin"] is True
    assert set(config["ExposedPorts"]) == {"80/tcp", "53/udp"}
    assert config["Healthcheck"] == {"Test": ["CMD-SHELL", "true"], "Interval": 30_000_000_000,
                                     "Timeout": 5_000_000_000, "Retries": 2}

    container = runtime.inspect(cid)
    assert container.hostname == "web-1"
    assert container.ports == (53, 80)
    assert container.runtime == "runc"
    assert container.command == ("sleep", "300")
    assert container.labels["team"] == "blue"


def test_list_finds_berth_containers_per_host(runtime: DockerRuntime, make_spec: MakeSpec) -> None:
    mine = make_spec()
    other = make_spec()
    mine_id = runtime.create(mine)
    other_id = runtime.create(other)
    runtime.start(mine_id)

    listed = runtime.list(host=mine.host)
    assert [c.id for c in listed] == [mine_id]
    entry = listed[0]
    assert entry.uuid == mine.uuid and entry.name == mine.name
    assert entry.state is not None and entry.state.status is RunState.RUNNING

    every = {c.id for c in runtime.list()}
    assert {mine_id, other_id} <= every


def test_list_reports_exit_code_of_exited_container(
    runtime: DockerRuntime, make_spec: MakeSpec
) -> None:
    spec = make_spec(command=("sh", "-c", "exit 7"))
    cid = runtime.create(spec)
    runtime.start(cid)
    assert wait_for(lambda: runtime.inspect(cid).state.status is RunState.EXITED)  # type: ignore[union-attr]
    [entry] = runtime.list(host=spec.host)
    assert entry.state is not None
    assert entry.state.status is RunState.EXITED and entry.state.exit_code == 7


# -- events ------------------------------------------------------------------------------


def test_events_report_start_then_death_on_kill(
    runtime: DockerRuntime, make_spec: MakeSpec, sdk: docker.APIClient
) -> None:
    spec = make_spec()
    seen: queue.Queue[RuntimeEvent] = queue.Queue()
    stream = runtime.events()

    def follow() -> None:
        for event in stream:
            if event.uuid == spec.uuid:
                seen.put(event)

    reader = threading.Thread(target=follow, name="test-events", daemon=True)
    reader.start()
    try:
        cid = runtime.create(spec)
        runtime.start(cid)
        assert next_kind(seen, EventKind.STARTED).container_id == cid
        sdk.kill(cid)
        died = next_kind(seen, EventKind.DIED)
        assert died.action == "die" and died.container_id == cid
        assert died.at_nano > 0 and died.at.tzinfo is not None
        assert died.exit_code == 137     # SIGKILL, from the event itself
    finally:
        stream.close()
        reader.join(timeout=5)
    assert not reader.is_alive(), "close() from another thread must end the iteration"


def test_events_resume_from_since_including_that_event(
    runtime: DockerRuntime, make_spec: MakeSpec
) -> None:
    spec = make_spec()
    before = time.time_ns()
    cid = runtime.create(spec)
    runtime.start(cid)
    stream = runtime.events(since_nano=before)
    try:
        first = next(e for e in stream if e.uuid == spec.uuid)
        assert first.action == "create"
    finally:
        stream.close()
    again = runtime.events(since_nano=first.at_nano)
    try:
        replayed = next(e for e in again if e.uuid == spec.uuid)
        assert replayed.at_nano == first.at_nano
    finally:
        again.close()
    assert list(again) == []


def next_kind(events: queue.Queue[RuntimeEvent], kind: EventKind,
              timeout: float = 10.0) -> RuntimeEvent:
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no {kind} event within {timeout} s")
        try:
            event = events.get(timeout=remaining)
        except queue.Empty:
            continue
        if event.kind is kind:
            return event


# -- images ------------------------------------------------------------------------------


def test_pull_from_local_registry_restores_removed_tag(
    runtime: DockerRuntime, sdk: docker.APIClient
) -> None:
    with contextlib.suppress(docker.errors.NotFound):
        sdk.remove_image(REGISTRY_IMAGE.ref)
    reports: list[PullProgress] = []
    image = runtime.pull_image(REGISTRY_IMAGE, progress=reports.append)
    assert REGISTRY_IMAGE.ref in image.repo_tags
    assert image.cmd == ("sh",)
    assert reports, "the progress callback was never called"
    assert reports[-1].image == REGISTRY_IMAGE.ref
    assert reports[-1].layers_done == reports[-1].layers_total
    assert runtime.inspect_image(REGISTRY_IMAGE.ref).id == image.id


@pytest.fixture
def pushed_image(sdk: docker.APIClient) -> Iterator[ImageRef]:
    """An image in the local registry with one layer this engine does not hold: the test
    image plus a file written by a throw-away container, committed, pushed, then removed
    locally (the registry keeps the tag, overwritten by the next run)."""
    ref = ImageRef(f"{REGISTRY}/berth-test/pull-probe", "functional")
    # A few MiB of random data: Docker reports byte progress only for layers big enough
    # to be downloaded in chunks (a tiny layer comes as "Download complete" alone).
    container = sdk.create_container(IMAGE, command=[
        "sh", "-c", f"echo {uuid.uuid4()} > /probe && head -c 4194304 /dev/urandom >> /probe"])
    try:
        sdk.start(container)
        sdk.wait(container, timeout=30)
        sdk.commit(container, repository=ref.repo, tag=ref.tag)
    finally:
        sdk.remove_container(container, force=True)
    for message in sdk.push(ref.repo, tag=ref.tag, stream=True, decode=True):
        assert "error" not in message, message
    sdk.remove_image(ref.ref)
    yield ref
    with contextlib.suppress(docker.errors.NotFound):
        sdk.remove_image(ref.ref)


def test_pull_downloads_layers_and_reports_progress(
    runtime: DockerRuntime, pushed_image: ImageRef
) -> None:
    reports: list[PullProgress] = []
    image = runtime.pull_image(pushed_image, progress=reports.append)
    assert pushed_image.ref in image.repo_tags
    assert reports, "the progress callback was never called"
    final = reports[-1]
    assert final.image == pushed_image.ref
    assert final.layers_total >= 2, "the test image's layer and the committed one"
    assert final.layers_done == final.layers_total
    assert 0 < final.bytes_done == final.bytes_total


def test_pull_is_idempotent(runtime: DockerRuntime) -> None:
    first = runtime.pull_image(REGISTRY_IMAGE)
    assert runtime.pull_image(REGISTRY_IMAGE).id == first.id


def test_pull_of_missing_tag_raises_image_not_found(runtime: DockerRuntime) -> None:
    with pytest.raises(RuntimeImageNotFound, match="manifest unknown"):
        runtime.pull_image(ImageRef(REGISTRY_IMAGE.repo, "no-such-tag"))


def test_pull_from_unreachable_registry_raises_pull_failed(runtime: DockerRuntime) -> None:
    started = time.monotonic()
    with pytest.raises(RuntimeImagePullFailed, match="connection refused"):
        runtime.pull_image(ImageRef(f"{DEAD_REGISTRY}/team/app", "v1"))
    assert time.monotonic() - started < 10


def test_image_exists_in_registry(runtime: DockerRuntime) -> None:
    assert runtime.image_exists_in_registry(REGISTRY_IMAGE) is True
    assert runtime.image_exists_in_registry(ImageRef(REGISTRY_IMAGE.repo, "no-such-tag")) is False
    assert runtime.image_exists_in_registry(ImageRef(f"{REGISTRY}/no/such-repo")) is False
    assert runtime.image_exists_in_registry(ImageRef(f"{DEAD_REGISTRY}/team/app")) is None


def test_inspect_image(runtime: DockerRuntime) -> None:
    image = runtime.inspect_image(IMAGE)
    assert IMAGE in image.repo_tags
    assert image.size > 0 and image.id.startswith("sha256:")
    with pytest.raises(RuntimeImageNotFound):
        runtime.inspect_image("berth-test/no-such-image:never")


# -- engine ------------------------------------------------------------------------------


def test_info_describes_the_node(runtime: DockerRuntime) -> None:
    runtime.ping()
    info = runtime.info()
    assert info.cpus >= 1
    assert info.mem_total_mib > 100
    assert info.os_type == "linux"
    assert info.architecture and info.kernel_version and info.os
    assert "runc" in info.runtimes
    assert info.storage_driver and info.docker_root_dir.startswith("/")
    assert info.total_containers == (info.running_containers + info.paused_containers
                                     + info.stopped_containers)


def test_unreachable_engine_raises_unavailable(tmp_path: object) -> None:
    rt = DockerRuntime(base_url=f"unix://{tmp_path}/no-docker.sock", timeout=5)
    with pytest.raises(RuntimeUnavailable):
        rt.ping()
    with pytest.raises(RuntimeUnavailable):
        rt.list()
    with pytest.raises(RuntimeUnavailable):
        rt.events()
