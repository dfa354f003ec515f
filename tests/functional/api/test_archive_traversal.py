"""R5 (isolation): ``cp`` cannot reach past the container's root filesystem. Hostile
archives (``..`` members, absolute members, a symlink to ``/`` followed by a file
under it) sent with put_archive, and ``..`` paths asked of get_archive, through
python-zunclient against ``berth serve`` on the real engine: nothing is written on
the host, whatever lands lands inside the container, and reads give the container's
files, never the host's."""

from __future__ import annotations

import io
import tarfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.berth_proc import TEST_IMAGE, wait_for
from zunclient import exceptions as zun_exc

pytestmark = pytest.mark.functional


def hostile_tar(tag: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def add(name: str, content: bytes = b"", kind: bytes = tarfile.REGTYPE,
                target: str = "") -> None:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mtime = kind, target, int(time.time())
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content) if content else None)
        add(f"../../../../../tmp/berth-dotdot-{tag}", b"dotdot")
        add(f"/tmp/berth-abs-{tag}", b"absolute")
        add(f"root-{tag}", kind=tarfile.SYMTYPE, target="/")
        add(f"root-{tag}/tmp/berth-via-link-{tag}", b"through the link")
    return buf.getvalue()


@pytest.fixture
def running(zun: Any, docker_client: Any) -> Iterator[Any]:
    c = zun.containers.run(image=TEST_IMAGE, command=["sleep", "600"],
                           name=f"ft-r5-{uuid.uuid4().hex[:8]}",
                           image_pull_policy="ifnotpresent")
    wait_for(lambda: zun.containers.get(c.uuid).status == "Running", 60,
             what="the container to run")
    yield c
    try:
        zun.containers.delete(c.uuid, force=True)
    except zun_exc.NotFound:
        pass


def in_container(docker_client: Any, uuid_: str, *cmd: str) -> tuple[int, bytes]:
    done = docker_client.containers.get(f"zun-{uuid_}").exec_run(list(cmd))
    return int(done.exit_code), bytes(done.output)


def test_a_hostile_archive_writes_nothing_on_the_host(zun: Any, docker_client: Any,
                                                      running: Any) -> None:
    tag = uuid.uuid4().hex[:10]
    try:
        zun.containers.put_archive(running.uuid, "/tmp", hostile_tar(tag))
        refused = None
    except zun_exc.BadRequest as err:      # the engine may refuse the whole archive
        refused = str(err)
    for name in (f"berth-dotdot-{tag}", f"berth-abs-{tag}", f"berth-via-link-{tag}"):
        assert not (Path("/tmp") / name).exists(), f"{name} escaped onto the host"
        assert not list(Path("/").glob(f"*/{name}")), f"{name} escaped onto the host"
    if refused is None:
        # Accepted: each member landed under the container's own root.
        code, out = in_container(docker_client, running.uuid, "sh", "-c",
                                 f"ls /tmp /tmp/tmp 2>/dev/null | grep {tag}")
        assert code == 0 and tag.encode() in out, out
    else:
        assert "archive" in refused.lower() or "extract" in refused.lower(), refused
    # The container still works: the engine did not half-break it.
    assert in_container(docker_client, running.uuid, "true")[0] == 0


def test_dotdot_paths_read_the_containers_files_never_the_hosts(
        zun: Any, docker_client: Any, running: Any) -> None:
    marker = f"host-only-{uuid.uuid4().hex}"
    host_file = Path("/tmp") / f"berth-r5-{marker}"
    host_file.write_text(marker)
    try:
        with pytest.raises(zun_exc.BadRequest):
            zun.containers.get_archive(running.uuid, f"../../../../..{host_file}")
        answer = zun.containers.get_archive(running.uuid, "/../../../../etc/hostname")
        with tarfile.open(fileobj=io.BytesIO(answer["data"])) as tar:
            member = tar.extractfile("hostname")
            assert member is not None
            got = member.read()
        assert got == in_container(docker_client, running.uuid, "cat", "/etc/hostname")[1]
        assert marker.encode() not in got
    finally:
        host_file.unlink()
