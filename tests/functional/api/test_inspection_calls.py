"""logs, top, stats, cp (get_archive / put_archive) and commit, end to end: the real
python-zunclient (Python API, and the ``zun`` CLI for ``cp``) against ``berth serve``
on the real Docker engine, checking what Docker really holds afterwards."""

from __future__ import annotations

import base64
import datetime as dt
import io
import re
import subprocess
import tarfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker.errors
import pytest
from support.berth_proc import TEST_IMAGE, bin_path, wait_for
from zunclient import exceptions as zun_exc

pytestmark = pytest.mark.functional

RFC3339_LINE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z (.*)$")
IO_PAIR = re.compile(r"^\d+/\d+$")


def _make_tar(name: str, content: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(content)
        info.mtime = int(time.time())
        tar.addfile(info, io.BytesIO(content))
    return buf.getvalue()


def _member(tar_data: bytes, name: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(tar_data)) as tar:
        handle = tar.extractfile(name)
        assert handle is not None, f"{name} is not a file in the archive"
        return handle.read()


def _docker_container(docker_client, container_uuid: str):  # type: ignore[no-untyped-def]
    return docker_client.containers.get(f"zun-{container_uuid}")


def _exec_cat(docker_client, container_uuid: str, path: str) -> bytes:  # type: ignore[no-untyped-def]
    result = _docker_container(docker_client, container_uuid).exec_run(["cat", path])
    assert result.exit_code == 0, result.output
    return bytes(result.output)


def _remove(zun, docker_client, container_uuid: str) -> None:  # type: ignore[no-untyped-def]
    try:
        zun.containers.delete(container_uuid, force=True)
    except zun_exc.NotFound:
        pass
    name = {"name": f"zun-{container_uuid}"}
    try:
        wait_for(lambda: not docker_client.containers.list(all=True, sparse=True, filters=name),
                 30, what=f"berth to remove zun-{container_uuid}")
    except AssertionError:
        try:
            _docker_container(docker_client, container_uuid).remove(force=True)
        except docker.errors.NotFound:
            pass


def _run(zun, command: list[str], status: str, **extra: Any):  # type: ignore[no-untyped-def]
    created = zun.containers.run(image=TEST_IMAGE, command=command,
                                 image_pull_policy="ifnotpresent", **extra)
    wait_for(lambda: zun.containers.get(created.uuid).status == status, 60,
             what=f"container {created.uuid} to be {status}")
    return zun.containers.get(created.uuid)


@pytest.fixture(scope="module")
def running(berth, docker_client) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A Running container with 64 MiB that wrote three stdout lines, then sleeps."""
    zun = berth.client()
    box = _run(zun, ["sh", "-c", "echo hello-berth; echo line-2; echo line-3; exec sleep 300"],
               "Running", memory=64)
    wait_for(lambda: b"line-3" in _docker_container(docker_client, box.uuid).logs(), 30,
             what="the container's output")
    yield box
    _remove(zun, docker_client, box.uuid)


@pytest.fixture(scope="module")
def stopped(berth, docker_client) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A container that wrote one line to each stream and exited (Stopped)."""
    zun = berth.client()
    box = _run(zun, ["sh", "-c", "echo out-line; echo err-line >&2"], "Stopped")
    yield box
    _remove(zun, docker_client, box.uuid)


def _logs(zun, ident: str, **kw: Any) -> str:  # type: ignore[no-untyped-def]
    args: dict[str, Any] = {"stdout": True, "stderr": True, "timestamps": False,
                            "tail": "all", "since": None}
    args.update(kw)
    return str(zun.containers.logs(ident, **args))


# -- logs ---------------------------------------------------------------------------


def test_logs_return_what_the_container_wrote(zun, running):
    assert _logs(zun, running.uuid) == "hello-berth\nline-2\nline-3\n"


def test_logs_tail_keeps_the_last_lines(zun, running):
    assert _logs(zun, running.uuid, tail=1) == "line-3\n"
    assert _logs(zun, running.uuid, tail="2") == "line-2\nline-3\n"
    assert _logs(zun, running.uuid, tail=0) == ""


def test_logs_timestamps_prefix_every_line(zun, running):
    lines = _logs(zun, running.uuid, timestamps=True).splitlines()
    assert len(lines) == 3
    matches = [RFC3339_LINE.match(line) for line in lines]
    assert all(matches), lines
    assert [m.group(2) for m in matches if m] == ["hello-berth", "line-2", "line-3"]


def test_logs_since_filters_by_time_in_both_forms(zun, running):
    future = int(time.time()) + 3600
    past = int(time.time()) - 3600
    assert _logs(zun, running.uuid, since=future) == ""
    assert "hello-berth" in _logs(zun, running.uuid, since=past)
    as_text = dt.datetime.fromtimestamp(future, dt.UTC).strftime("%Y-%m-%d %H:%M:%S,%f")
    assert _logs(zun, running.uuid, since=as_text) == ""
    as_text = dt.datetime.fromtimestamp(past, dt.UTC).strftime("%Y-%m-%d %H:%M:%S,%f")
    assert "line-3" in _logs(zun, running.uuid, since=as_text)


def test_logs_choose_streams_of_a_stopped_container(zun, stopped):
    assert _logs(zun, stopped.uuid, stdout=True, stderr=False) == "out-line\n"
    assert _logs(zun, stopped.uuid, stdout=False, stderr=True) == "err-line\n"
    both = _logs(zun, stopped.uuid)
    assert sorted(both.splitlines()) == ["err-line", "out-line"]


def test_logs_over_raw_http_answer_a_json_string(berth, running):
    with berth.http() as http:
        answer = http.get(f"/v1/containers/{running.uuid}/logs",
                          params={"stdout": "True", "stderr": "True", "tail": "1"})
    assert answer.status_code == 200
    assert answer.json() == "line-3\n"


@pytest.mark.parametrize("params,field", [
    ({"tail": "-1"}, "tail"), ({"tail": "lots"}, "tail"), ({"since": "yesterday"}, "since"),
    ({"stdout": "maybe"}, "stdout"),
])
def test_bad_logs_parameters_are_400_naming_the_field(berth, running, params, field):
    with berth.http() as http:
        answer = http.get(f"/v1/containers/{running.uuid}/logs", params=params)
    assert answer.status_code == 400, answer.text
    assert f"'{field}'" in answer.json()["errors"][0]["title"]


# -- top ----------------------------------------------------------------------------


def test_top_lists_the_sleep_process(zun, running):
    table = zun.containers.top(running.uuid, None)
    assert "PID" in table["Titles"]
    commands = [" ".join(row) for row in table["Processes"]]
    assert any("sleep 300" in c for c in commands), commands


def test_top_passes_ps_args(zun, running):
    table = zun.containers.top(running.uuid, "-o pid,comm")
    assert table["Titles"] == ["PID", "COMMAND"]
    assert ["sleep"] == [row[1] for row in table["Processes"]]


def test_top_with_ps_args_that_ps_refuses_is_400(zun, running):
    with pytest.raises(zun_exc.BadRequest, match="ps_args.*-bogus"):
        zun.containers.top(running.uuid, "-bogus")


# -- stats --------------------------------------------------------------------------


def test_stats_has_zuns_keys_and_the_containers_memory_limit(zun, running):
    stats = zun.containers.stats(running.uuid)
    assert set(stats) == {"CONTAINER", "CPU %", "MEM USAGE(MiB)", "MEM LIMIT(MiB)",
                          "MEM %", "BLOCK I/O(B)", "NET I/O(B)"}
    assert stats["CONTAINER"] == running.name
    assert stats["MEM LIMIT(MiB)"] == pytest.approx(64.0)
    assert 0 < stats["MEM USAGE(MiB)"] < 64
    assert stats["MEM %"] == pytest.approx(stats["MEM USAGE(MiB)"] / 64 * 100)
    assert 0.0 <= stats["CPU %"] <= 100.0 * 256
    assert IO_PAIR.match(stats["BLOCK I/O(B)"])
    assert IO_PAIR.match(stats["NET I/O(B)"])


@pytest.mark.parametrize("action", ["stats", "top"])
def test_stats_and_top_of_a_stopped_container_are_409_naming_running(berth, stopped, action):
    with berth.http() as http:
        answer = http.get(f"/v1/containers/{stopped.uuid}/{action}")
    assert answer.status_code == 409, answer.text
    title = answer.json()["errors"][0]["title"]
    assert "Stopped" in title and "Running" in title


# -- archives (Python API) ----------------------------------------------------------


def test_put_archive_writes_the_file_into_the_container(zun, docker_client, running):
    content = f"put by berth {uuid.uuid4()}\n".encode()
    zun.containers.put_archive(running.uuid, "/tmp", _make_tar("put.txt", content))
    assert _exec_cat(docker_client, running.uuid, "/tmp/put.txt") == content


def test_get_archive_returns_the_file_and_its_stat(zun, docker_client, running):
    content = f"read me {uuid.uuid4()}\n".encode()
    _docker_container(docker_client, running.uuid).put_archive(
        "/tmp", _make_tar("get.txt", content))
    answer = zun.containers.get_archive(running.uuid, "/tmp/get.txt")
    assert _member(answer["data"], "get.txt") == content
    stat = answer["stat"]
    assert (stat["name"], stat["size"], stat["linkTarget"]) == ("get.txt", len(content), "")
    assert stat["mode"] & 0o777 and stat["mtime"]


def test_archives_before_1_25_carry_the_tar_as_plain_text(berth, docker_client, running):
    content = b"old client text\n"
    tar_text = _make_tar("old.txt", content).decode("utf-8")   # ASCII names and content
    with berth.http(version="container 1.24") as http:
        put = http.post(f"/v1/containers/{running.uuid}/put_archive",
                        params={"path": "/tmp"}, json={"data": tar_text})
        assert put.status_code == 200, put.text
        assert put.json() is None
    assert _exec_cat(docker_client, running.uuid, "/tmp/old.txt") == content
    old = berth.client(version="1.24")
    answer = old.containers.get_archive(running.uuid, "/tmp/old.txt")
    assert _member(answer["data"], "old.txt") == content


def test_get_archive_of_a_stopped_container_works(zun, stopped):
    answer = zun.containers.get_archive(stopped.uuid, "/etc/hostname")
    assert answer["stat"]["name"] == "hostname"
    assert _member(answer["data"], "hostname").strip()


def test_get_archive_of_a_missing_path_is_400_with_dockers_message(zun, running):
    with pytest.raises(zun_exc.BadRequest, match="Could not find the file /no/such"):
        zun.containers.get_archive(running.uuid, "/no/such")


def test_put_archive_into_a_missing_directory_is_400_with_dockers_message(zun, running):
    with pytest.raises(zun_exc.BadRequest, match="Could not find the file /no/such/dir"):
        zun.containers.put_archive(running.uuid, "/no/such/dir", _make_tar("x", b"x"))


@pytest.mark.parametrize("body,params,words", [
    ({"data": "%%% not base64 %%%"}, {"path": "/tmp"}, "not valid base64"),
    ({"data": base64.b64encode(b"not a tar" * 100).decode()}, {"path": "/tmp"},
     "could not extract"),
    ({"data": base64.b64encode(_make_tar("y", b"y")).decode()}, {"path": "/etc/hostname"},
     "not a directory"),
    ({}, {"path": "/tmp"}, "Missing 'data'"),
    ({"data": 5}, {"path": "/tmp"}, "'data'"),
    ({"data": "eA=="}, {}, "Missing 'path'"),
])
def test_bad_put_archive_is_400_with_a_clear_message(berth, running, body, params, words):
    with berth.http() as http:
        answer = http.post(f"/v1/containers/{running.uuid}/put_archive", params=params,
                           json=body)
    assert answer.status_code == 400, answer.text
    assert words in answer.json()["errors"][0]["title"]


def test_get_archive_without_path_is_400(berth, running):
    with berth.http() as http:
        answer = http.get(f"/v1/containers/{running.uuid}/get_archive")
    assert answer.status_code == 400
    assert "Missing 'path'" in answer.json()["errors"][0]["title"]


# -- cp with the zun CLI ------------------------------------------------------------


def _zun_cli(berth, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    done = subprocess.run([bin_path("zun"), *args], env=berth.zun_cli_env(), cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"zun {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_zun_cp_host_to_container(berth, docker_client, running, tmp_path):
    content = f"copied by zun cp {uuid.uuid4()}\n"
    (tmp_path / "local.txt").write_text(content)
    _zun_cli(berth, "cp", "local.txt", f"{running.uuid}:/tmp/", cwd=tmp_path)
    assert _exec_cat(docker_client, running.uuid, "/tmp/local.txt").decode() == content


def test_zun_cp_container_to_host(berth, docker_client, running, tmp_path):
    hostname = _exec_cat(docker_client, running.uuid, "/etc/hostname")
    out = tmp_path / "out"
    out.mkdir()
    _zun_cli(berth, "cp", f"{running.uuid}:/etc/hostname", str(out), cwd=tmp_path)
    assert (out / "hostname").read_bytes() == hostname


# -- commit -------------------------------------------------------------------------


@pytest.fixture
def image_names(docker_client) -> Iterator[list[str]]:  # type: ignore[no-untyped-def]
    """Image references a test commits to; removed afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        try:
            docker_client.images.remove(name, force=True)
        except docker.errors.ImageNotFound:
            pass


def test_commit_makes_an_image_with_the_containers_files(zun, docker_client, running,
                                                          image_names):
    repo = f"berth-ftest/commit-{uuid.uuid4().hex[:8]}"
    image_names.append(f"{repo}:v1")
    marker = f"committed {uuid.uuid4()}\n".encode()
    zun.containers.put_archive(running.uuid, "/tmp", _make_tar("marker.txt", marker))

    answer = zun.containers.commit(running.uuid, repo, "v1")

    assert uuid.UUID(answer["uuid"])
    image = docker_client.images.get(f"{repo}:v1")
    out = docker_client.containers.run(image.id, ["cat", "/tmp/marker.txt"], remove=True)
    assert out == marker
    assert zun.containers.get(running.uuid).status == "Running"
    assert _docker_container(docker_client, running.uuid).status == "running"
    commit = [a for a in zun.actions.list(running.uuid) if a.action == "commit"]
    assert commit and commit[0].message is None and commit[0].finish_time
    detail = zun.actions.get(running.uuid, commit[0].request_id)
    events = {e["event"]: e["result"] for e in detail.events}
    assert events == {"compute__do_container_commit": "Success"}


def test_commit_without_tag_makes_latest_of_a_stopped_container(zun, docker_client, stopped,
                                                                 image_names):
    repo = f"berth-ftest/commit-{uuid.uuid4().hex[:8]}"
    image_names.append(f"{repo}:latest")
    answer = zun.containers.commit(stopped.uuid, repo)
    assert uuid.UUID(answer["uuid"])
    assert docker_client.images.get(f"{repo}:latest")
    assert zun.containers.get(stopped.uuid).status == "Stopped"


@pytest.mark.parametrize("repository,tag,words", [
    ("Bad Repo", None, "whitespace"), ("UPPER", "v1", "lowercase"), ("ok", "-x", "'tag'"),
])
def test_bad_commit_target_is_400_and_makes_no_image(zun, docker_client, running,
                                                     repository, tag, words):
    # Other workers' tests add and remove images on the same engine meanwhile, so only
    # a tag this commit could have made counts: one of the repository asked for.
    def tags_of_repository() -> set[str]:
        names = {repository, repository.lower(), repository.replace(" ", "")}
        return {t for i in docker_client.images.list() for t in i.tags
                if t.rpartition(":")[0] in names}

    before = tags_of_repository()
    with pytest.raises(zun_exc.BadRequest, match=words):
        zun.containers.commit(running.uuid, repository, tag)
    assert tags_of_repository() == before


# -- unknown containers, uncreated containers ---------------------------------------

CALLS = [("get", "logs", {}), ("get", "top", {}), ("get", "stats", {}),
         ("get", "get_archive", {"path": "/etc"}),
         ("post", "put_archive", {"path": "/tmp"}), ("post", "commit", {"repository": "x"})]


@pytest.mark.parametrize("verb,action,params", CALLS)
def test_unknown_container_is_404(berth, verb, action, params):
    missing = str(uuid.uuid4())
    with berth.http() as http:
        kwargs: dict[str, Any] = {"params": params}
        if action == "put_archive":
            kwargs["json"] = {"data": "eA=="}
        answer = getattr(http, verb)(f"/v1/containers/{missing}/{action}", **kwargs)
    assert answer.status_code == 404, answer.text
    assert missing in answer.json()["errors"][0]["title"]


def test_calls_on_a_container_without_docker_container_are_400(berth, zun, docker_client):
    never = zun.containers.create(image=TEST_IMAGE, runtime="no-such-runtime",
                                  image_pull_policy="ifnotpresent")
    try:
        wait_for(lambda: zun.containers.get(never.uuid).status == "Error", 30,
                 what="the unschedulable container to be Error")
        assert not docker_client.containers.list(all=True, ignore_removed=True,
                                                 filters={"name": f"zun-{never.uuid}"})
        with pytest.raises(zun_exc.BadRequest, match="uncreated container"):
            _logs(zun, never.uuid)
    finally:
        _remove(zun, docker_client, never.uuid)
