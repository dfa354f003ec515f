"""What keeps a console closed to those who should not open it, and what happens when
one cannot be served: single-use and expiring tokens bound to one container (and one
exec), the Origin check, failures that close both sides; and many consoles at once."""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import subprocess
import sys
import threading
import time
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest
import websocket
from support.berth_proc import free_port, wait_for
from zunclient.common.apiclient import exceptions as zun_exc

ECHO = b"echo hi-$((1+1))\n"
ECHOED = b"hi-2"


def refused(connect, url: str, **kwargs) -> websocket.WebSocketBadStatusException:  # type: ignore[no-untyped-def]
    with pytest.raises(websocket.WebSocketBadStatusException) as caught:
        connect(url, **kwargs)
    return caught.value


def with_query(url: str, **changes: str | None) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    for key, value in changes.items():
        if value is None:
            query.pop(key, None)
        else:
            query[key] = value
    return urlunsplit(parts._replace(query=urlencode(query)))


def test_a_token_opens_one_console_only(zun, make_shell, connect, read_until) -> None:
    c = make_shell(zun)
    url = zun.containers.attach(c.uuid)
    ws = connect(url)
    ws.send_binary(ECHO)
    read_until(ws, ECHOED)
    ws.close()
    err = refused(connect, url)
    assert err.status_code == 403
    assert b"already used" in err.resp_body
    answer = zun.containers.execute(c.uuid, command="sh", run=False, interactive=True)
    connect(answer["proxy_url"]).close()
    assert refused(connect, answer["proxy_url"]).status_code == 403


def test_an_expired_token_is_refused(berth_factory, make_shell, connect) -> None:
    proc = berth_factory("[websocket_proxy]\ntoken_ttl = 1\n").start()
    zun = proc.client()
    c = make_shell(zun)
    url = zun.containers.attach(c.uuid)
    time.sleep(2.5)    # past the 1 s lifetime
    origin = f"http://127.0.0.1:{proc.wsport}"
    err = refused(connect, url, origin=origin)
    assert err.status_code == 403
    assert b"expired" in err.resp_body
    # A fresh URL, used at once, works.
    connect(zun.containers.attach(c.uuid), origin=origin).close()


def test_a_foreign_origin_is_refused_without_spending_the_token(berth, zun, make_shell,
                                                                connect, read_until) -> None:
    c = make_shell(zun)
    url = zun.containers.attach(c.uuid)
    err = refused(connect, url, origin="http://evil.example.com")
    assert err.status_code == 403
    assert b"allowed_origins" in err.resp_body
    assert refused(connect, url, origin=f"https://127.0.0.1:{berth.wsport}"
                   ).status_code == 403          # wss origin on a ws console
    ws = connect(url)                            # the rightful client still gets in
    ws.send_binary(ECHO)
    read_until(ws, ECHOED)


def test_a_console_without_origin_header_is_accepted(zun, make_shell, connect,
                                                     read_until) -> None:
    c = make_shell(zun)
    ws = connect(zun.containers.attach(c.uuid), origin=None, suppress_origin=True)
    ws.send_binary(ECHO)
    read_until(ws, ECHOED)


def test_a_token_for_one_container_does_not_open_another(zun, make_shell, connect,
                                                         read_until, docker_client) -> None:
    a, b = make_shell(zun), make_shell(zun)
    url_a = zun.containers.attach(a.uuid)
    for other in (b.uuid, b.name):
        err = refused(connect, with_query(url_a, uuid=other))
        assert err.status_code == 403
        assert b"another container" in err.resp_body
    ws = connect(url_a)          # not spent by the refusals; and it is a's console
    hostname = docker_client.containers.get(f"zun-{a.uuid}").attrs["Config"]["Hostname"]
    ws.send_binary(b"echo host-$(hostname)\n")
    read_until(ws, f"host-{hostname}".encode())


def test_an_exec_token_opens_only_its_exec(zun, make_shell, connect) -> None:
    c = make_shell(zun)
    first = zun.containers.execute(c.uuid, command="sh", run=False, interactive=True)
    second = zun.containers.execute(c.uuid, command="sh", run=False, interactive=True)
    assert refused(connect, with_query(first["proxy_url"], exec_id=None)).status_code == 403
    assert refused(connect, with_query(first["proxy_url"], exec_id=second["exec_id"])
                   ).status_code == 403
    attach_url = zun.containers.attach(c.uuid)
    assert refused(connect, with_query(attach_url, exec_id=first["exec_id"])
                   ).status_code == 403
    connect(first["proxy_url"]).close()          # none of the above spent it


def test_another_project_cannot_reach_the_container(berth, zun, make_shell) -> None:
    c = make_shell(zun)
    stranger = berth.client(token="mallory:p-other")
    with pytest.raises(zun_exc.NotFound):
        stranger.containers.attach(c.uuid)
    with pytest.raises(zun_exc.NotFound):
        stranger.containers.execute(c.uuid, command="sh", run=False, interactive=True)


def test_tokens_die_with_their_container(zun, make_shell, connect) -> None:
    c = make_shell(zun)
    url = zun.containers.attach(c.uuid)
    zun.containers.delete(c.uuid, force=True)

    def gone() -> bool:
        try:
            zun.containers.get(c.uuid)
        except zun_exc.NotFound:
            return True
        return False

    wait_for(gone, 60, what="the container to be deleted")
    err = refused(connect, url)
    assert err.status_code == 403
    assert b"unknown token" in err.resp_body


def test_a_backend_that_cannot_serve_closes_the_console(zun, make_shell, connect,
                                                        docker_client) -> None:
    """The container stopped behind berth's back after the URL was issued: the
    websocket opens, then the proxy closes it (1011) with the engine's reason."""
    c = make_shell(zun)
    url = zun.containers.attach(c.uuid)
    docker_client.containers.get(f"zun-{c.uuid}").kill()
    wait_for(lambda: docker_client.containers.get(f"zun-{c.uuid}").status == "exited", 30)
    ws = connect(url)
    ws.settimeout(20)
    opcode, data = ws.recv_data(control_frame=True)
    assert opcode == websocket.ABNF.OPCODE_CLOSE
    assert int.from_bytes(data[:2], "big") == 1011
    assert b"not running" in data[2:]


def test_fifty_consoles_at_once(zun, make_shell, connect, read_until) -> None:
    """25 attach consoles (5 on each of 5 containers) and 25 interactive execs, all
    open at the same time, each doing its own round trip."""
    shells = [make_shell(zun) for _ in range(5)]

    def url_for(i: int) -> str:
        c = shells[i % 5]
        if i < 25:
            return zun.containers.attach(c.uuid)
        return zun.containers.execute(c.uuid, command="sh", run=False,
                                      interactive=True)["proxy_url"]

    with cf.ThreadPoolExecutor(50) as pool:
        urls = list(pool.map(url_for, range(50)))
        sockets = list(pool.map(connect, urls))
        everyone_open = threading.Barrier(50)

        def round_trip(i: int) -> bytes:
            everyone_open.wait(60)
            sockets[i].send_binary(f"echo c{i}-$(({i}+1000))\n".encode())
            return read_until(sockets[i], f"c{i}-{i + 1000}".encode(), timeout=60)

        results = list(pool.map(round_trip, range(50)))
    assert len(results) == 50
    for c in shells:
        assert zun.containers.get(c.uuid).status == "Running"


def test_berth_wsproxy_alone_serves_consoles_from_the_database(berth, zun, make_shell,
                                                               connect, read_until) -> None:
    """A separate berth-wsproxy on another port, with the same configuration (database,
    host), serves a URL the API issued."""
    port = free_port()
    conf = berth.dir / "wsproxy-alone.conf"
    conf.write_text(berth.conf.read_text()
                    + f"\n[websocket_proxy]\nwsproxy_port = {port}\n")
    with open(berth.dir / "wsproxy-alone.log", "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "berth.cmd.wsproxy",
                                 "--config-file", str(conf)], stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        c = make_shell(zun)
        url = zun.containers.attach(c.uuid)
        parts = urlsplit(url)
        alone = urlunsplit(parts._replace(netloc=f"127.0.0.1:{port}"))

        def listening() -> bool:
            assert proc.poll() is None, (berth.dir / "wsproxy-alone.log").read_text()
            try:
                websocket.create_connection(f"ws://127.0.0.1:{port}/", timeout=2).close()
            except websocket.WebSocketBadStatusException:
                return True            # it answered (403: no token)
            except OSError:
                return False
            return True

        wait_for(listening, 30, what="berth-wsproxy to listen")
        ws = connect(alone, origin=f"http://127.0.0.1:{port}")
        ws.send_binary(ECHO)
        read_until(ws, ECHOED)
        ws.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(20) == 0


def test_stopping_berth_closes_open_consoles(berth_factory, make_shell, connect, read_until,
                                             read_until_closed, docker_client) -> None:
    proc = berth_factory().start()
    zun = proc.client()
    c = make_shell(zun)
    ws = connect(zun.containers.attach(c.uuid), origin=f"http://127.0.0.1:{proc.wsport}")
    ws.send_binary(ECHO)
    read_until(ws, ECHOED)
    proc.stop()
    read_until_closed(ws)
    # Detached, not stopped: the engine still runs the shell.
    assert docker_client.containers.get(f"zun-{c.uuid}").status == "running"
