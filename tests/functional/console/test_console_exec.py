"""``execute``: commands run to their end (output and exit code), and interactive
execs opened through berth's WebSocket proxy, against the real Docker engine."""

from __future__ import annotations

import subprocess
from urllib.parse import parse_qs, urlsplit

import pytest
from support.berth_proc import bin_path, wait_for
from zunclient.common.apiclient import exceptions as zun_exc
from zunclient.common.websocketclient.websocketclient import ExecClient

ECHO = b"echo hi-$((1+1))\n"
ECHOED = b"hi-2"


def test_execute_returns_output_and_exit_code(zun, make_shell) -> None:
    c = make_shell(zun)
    assert zun.containers.execute(c.uuid, command="echo hi", run=True) == {
        "output": "hi\n", "exit_code": 0, "exec_id": None, "proxy_url": None}


def test_execute_reports_a_failing_exit_code_and_stderr(zun, make_shell) -> None:
    c = make_shell(zun)
    answer = zun.containers.execute(c.uuid, command='sh -c "echo out; echo err >&2; exit 3"')
    assert answer["exit_code"] == 3
    # Two pipes: the engine does not keep their order between each other.
    assert sorted(answer["output"].splitlines()) == ["err", "out"]


def test_execute_decodes_invalid_utf8_with_replacement(zun, make_shell) -> None:
    c = make_shell(zun)
    answer = zun.containers.execute(c.uuid, command=r"printf 'a\377b'")
    assert answer == {"output": "a\ufffdb", "exit_code": 0, "exec_id": None,
                      "proxy_url": None}


def test_execute_that_outlives_execute_timeout_is_a_409(zun, make_shell) -> None:
    c = make_shell(zun)
    with pytest.raises(zun_exc.Conflict) as caught:
        zun.containers.execute(c.uuid, command="sleep 60", run=True)
    assert "Timeout on executing command" in str(caught.value)
    assert zun.containers.get(c.uuid).status == "Running"


def test_zun_exec_cli_prints_the_output(berth, zun, make_shell) -> None:
    c = make_shell(zun)
    done = subprocess.run([bin_path("zun"), "--bypass-url", f"{berth.url}/v1", "exec",
                           c.uuid, "echo", "hi"], env=berth.zun_cli_env(),
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "hi"


def test_openstack_appcontainer_exec_prints_output_and_exits_with_its_code(
        berth, zun, make_shell) -> None:
    c = make_shell(zun)
    ok = subprocess.run([bin_path("openstack"), "appcontainer", "exec", c.uuid, "echo", "hi"],
                        env=berth.openstack_env(), capture_output=True, text=True,
                        timeout=120, check=False)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[0] == "hi"
    failing = subprocess.run([bin_path("openstack"), "appcontainer", "exec", c.uuid, "sh",
                              "-c", "exit 3"], env=berth.openstack_env(),
                             capture_output=True, text=True, timeout=120, check=False)
    assert failing.returncode == 3, failing.stderr


def test_interactive_exec_round_trip(berth, zun, make_shell, connect, read_until,
                                     read_until_closed) -> None:
    c = make_shell(zun, interactive=False, command=["sleep", "600"])
    answer = zun.containers.execute(c.uuid, command="sh", run=False, interactive=True)
    assert answer["output"] is None and answer["exit_code"] is None
    exec_id = answer["exec_id"]
    assert len(exec_id) == 64
    parts = urlsplit(answer["proxy_url"])
    assert (parts.scheme, parts.netloc) == ("ws", f"127.0.0.1:{berth.wsport}")
    query = parse_qs(parts.query)
    assert (query["uuid"], query["exec_id"]) == ([c.uuid], [exec_id])
    ws = connect(answer["proxy_url"])
    ws.send_binary(ECHO)
    read_until(ws, ECHOED)
    ws.send_binary(b"exit\n")
    # The exec ended: the proxy closes the console; the container goes on.
    read_until_closed(ws)
    assert zun.containers.get(c.uuid).status == "Running"


def test_execute_resize_is_visible_in_the_exec(zun, make_shell, connect, read_until) -> None:
    c = make_shell(zun)
    answer = zun.containers.execute(c.uuid, command="sh", run=False, interactive=True)
    ws = connect(answer["proxy_url"])
    zun.containers.execute_resize(c.uuid, answer["exec_id"], "88", "22")   # width, height
    ws.send_binary(b"stty size\n")
    read_until(ws, b"22 88")


def test_zunclient_exec_client_round_trip(zun, make_shell, drive_zunclient) -> None:
    c = make_shell(zun)
    answer = zun.containers.execute(c.uuid, command='"sh"', run=False, interactive=True)
    client = ExecClient(zunclient=zun, url=answer["proxy_url"], exec_id=answer["exec_id"],
                        id=c.uuid, escape="~", close_wait=0.5)
    assert "hi-2" in drive_zunclient(client, [ECHO], ECHOED)


def test_execute_resize_of_an_unknown_or_foreign_exec_is_a_400(zun, make_shell) -> None:
    a, b = make_shell(zun), make_shell(zun)
    with pytest.raises(zun_exc.BadRequest, match="exec"):
        zun.containers.execute_resize(a.uuid, "0" * 64, "80", "24")
    with pytest.raises(zun_exc.BadRequest, match="exec_id"):
        zun.containers.execute_resize(a.uuid, "not-an-exec-id", "80", "24")
    # An exec of container b cannot be resized through container a.
    answer = zun.containers.execute(b.uuid, command="sh", run=False, interactive=True)
    with pytest.raises(zun_exc.BadRequest, match="exec"):
        zun.containers.execute_resize(a.uuid, answer["exec_id"], "80", "24")


def test_execute_with_bad_parameters_is_a_400(berth, zun, make_shell) -> None:
    c = make_shell(zun)
    with berth.http() as http:
        for query in ("", "command=", "command=%22unclosed", "command=ls&run=yes",
                      "command=ls&interactive=1", "command=ls&run=TRUE"):
            answer = http.post(f"/v1/containers/{c.uuid}/execute?{query}")
            assert answer.status_code == 400, (query, answer.text)
            assert answer.json()["errors"][0]["status"] == 400


def test_execute_accepts_a_json_body(berth, zun, make_shell) -> None:
    c = make_shell(zun)
    with berth.http() as http:
        answer = http.post(f"/v1/containers/{c.uuid}/execute",
                           json={"command": "echo body", "run": True})
    assert answer.status_code == 200, answer.text
    assert answer.json()["output"] == "body\n"


def test_execute_in_a_stopped_container_is_a_409(zun, make_shell) -> None:
    c = make_shell(zun)
    zun.containers.stop(c.uuid, timeout=0)
    wait_for(lambda: zun.containers.get(c.uuid).status == "Stopped", 30)
    with pytest.raises(zun_exc.Conflict):
        zun.containers.execute(c.uuid, command="echo hi")


def test_zunclient_survives_much_non_ascii_output(zun, make_shell, drive_zunclient) -> None:
    """python-zunclient decodes each frame on its own: the proxy must never cut a
    character between two frames, however the engine's reads fall."""
    c = make_shell(zun)
    answer = zun.containers.execute(c.uuid, command="sh", run=False, interactive=True)
    client = ExecClient(zunclient=zun, url=answer["proxy_url"], exec_id=answer["exec_id"],
                        id=c.uuid, escape="~", close_wait=0.5)
    line = "yes é€😀 | head -n 30000; echo done-$((1+1))\n".encode()
    text = drive_zunclient(client, [line], b"done-2")
    assert text.count("é€😀") >= 30000
