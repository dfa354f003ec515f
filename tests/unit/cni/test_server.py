"""The daemon's HTTP answers and the plugin's reading of them, in one process (fakes
under the service; the real driver is in tests/functional/network)."""

from __future__ import annotations

import http.client
import io
import ipaddress
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fake_network import FakeDriver, FakeFirewall

from berth.cni import plugin
from berth.cni.registry import Registry
from berth.cni.server import DaemonHTTPServer
from berth.cni.service import CniService


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[DaemonHTTPServer, FakeDriver]]:
    driver = FakeDriver()
    service = CniService(driver, FakeFirewall(), Registry(str(tmp_path / "reg.json")),
                         vif_active_timeout=0.2, poll_interval=0.02)
    service.recover()
    server = DaemonHTTPServer(service, "127.0.0.1", 0, workers=4)
    server.ready.set()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server, driver
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def invoke(port: int, netns: Path | None, command: str = "ADD",
           stdin: bytes | None = None) -> tuple[int, dict[str, object] | None]:
    config = {"cniVersion": "1.0.0", "name": "net-a", "type": "berth-cni",
              "ipam": {"subnet": "10.244.1.0/24"}, "daemonUrl": f"http://127.0.0.1:{port}"}
    env = {"CNI_COMMAND": command, "CNI_CONTAINERID": "c1", "CNI_IFNAME": "eth0",
           "CNI_NETNS": str(netns or ""), "CNI_ARGS": "", "CNI_PATH": ""}
    out = io.StringIO()
    rc = plugin.run(env, json.dumps(config).encode() if stdin is None else stdin, out)
    text = out.getvalue()
    return rc, json.loads(text) if text else None


@pytest.fixture
def netns(tmp_path: Path) -> Path:
    path = tmp_path / "ns"
    path.write_text("")
    return path


def test_add_check_del_through_the_plugin(daemon, netns) -> None:  # type: ignore[no-untyped-def]
    server, driver = daemon
    rc, result = invoke(server.port, netns)
    assert rc == 0 and result is not None
    assert result["ips"] == [{"address": "10.244.1.2/24", "gateway": "10.244.1.1",
                              "interface": 2}]
    assert invoke(server.port, netns, "CHECK") == (0, None)
    assert invoke(server.port, netns, "DEL") == (0, None)
    assert invoke(server.port, None, "DEL") == (0, None)
    assert driver.veths == {}


def test_interface_not_ready_in_time_is_504_and_try_again_later(daemon, netns) -> None:  # type: ignore[no-untyped-def]
    server, driver = daemon
    driver.ready = False
    rc, error = invoke(server.port, netns)
    assert rc == 1 and error is not None and error["code"] == 11
    assert "did not become ready" in str(error["msg"])
    body = {"command": "ADD", "container_id": "c2", "ifname": "eth0", "netns": str(netns),
            "args": {}, "path": "", "config": {"cniVersion": "1.0.0", "name": "net-a",
                                               "type": "berth-cni",
                                               "ipam": {"subnet": "10.244.1.0/24"}}}
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/addNetwork", body=json.dumps(body))
    response = conn.getresponse()
    assert response.status == 504
    assert json.loads(response.read())["code"] == 11
    assert driver.veths == {}


def test_missing_namespace_is_404_and_code_3(daemon, tmp_path) -> None:  # type: ignore[no-untyped-def]
    server, _ = daemon
    rc, error = invoke(server.port, tmp_path / "gone")
    assert rc == 1 and error is not None and error["code"] == 3


def test_bad_stdin_never_reaches_the_daemon(daemon, netns) -> None:  # type: ignore[no-untyped-def]
    server, driver = daemon
    rc, error = invoke(server.port, netns, stdin=b"{oops")
    assert rc == 1 and error is not None and error["code"] == 6 and "cniVersion" in error
    assert driver.bridges == set()


def test_garbage_body_to_the_daemon_is_a_400_with_a_cni_error(daemon) -> None:  # type: ignore[no-untyped-def]
    server, _ = daemon
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/addNetwork", body=b"\x00nope")
    response = conn.getresponse()
    assert response.status == 400 and json.loads(response.read())["code"] == 6


def test_unreachable_daemon_is_try_again_later(netns) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nobody listens once it is closed
    rc, error = invoke(port, netns)
    assert rc == 1 and error is not None and error["code"] == 11


def test_healthz(daemon) -> None:  # type: ignore[no-untyped-def]
    server, _ = daemon
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", "/healthz")
    assert conn.getresponse().status == 200


@pytest.fixture(params=["http", "in-process"])
def agent_client(request, daemon):  # type: ignore[no-untyped-def]
    """The agent's client over HTTP (``berth-compute``), and the one that hands the
    same bodies to a daemon in its own process (``berth serve``): same answers."""
    from berth.cni.client import DaemonClient, InProcessClient

    server, _ = daemon
    url = f"http://127.0.0.1:{server.port}"
    return DaemonClient(url) if request.param == "http" else InProcessClient(server, url)


def test_the_agents_typed_client_adds_checks_and_deletes(daemon, netns, agent_client) -> None:  # type: ignore[no-untyped-def]
    from berth.cni.contract import CniError
    from berth.network.base import NetworkSpec

    _, driver = daemon
    client = agent_client
    spec = NetworkSpec.build("net-a", "10.244.1.0/24")
    vif = client.add(spec, "c9", str(netns), fixed_ip=ipaddress.IPv4Address("10.244.1.50"))
    assert str(vif.address) == "10.244.1.50/24" and vif.bridge == spec.bridge
    client.check(spec, "c9", str(netns))
    with pytest.raises(CniError) as err:
        client.add(spec, "c10", str(netns), ifname="eth1",
                   fixed_ip=ipaddress.IPv4Address("10.244.1.50"))
    assert err.value.code == 101
    client.delete(spec, "c9")
    client.delete(spec, "c9")
    assert driver.veths == {}


def test_the_agents_client_reserves_then_adds_the_same_address(daemon, netns, agent_client) -> None:  # type: ignore[no-untyped-def]
    from berth.cni.contract import CniError
    from berth.network.base import NetworkSpec

    server, driver = daemon
    client = agent_client
    spec = NetworkSpec.build("net-a", "10.244.1.0/24")
    client.reserve(spec, "c9", fixed_ip=ipaddress.IPv4Address("10.244.1.60"))
    assert driver.veths == {}
    with pytest.raises(CniError) as err:       # reserved is taken
        client.reserve(spec, "c10", fixed_ip=ipaddress.IPv4Address("10.244.1.60"))
    assert err.value.code == 101
    vif = client.add(spec, "c9", str(netns))
    assert str(vif.address) == "10.244.1.60/24"
    client.delete(spec, "c9")
    assert driver.veths == {} and server.service.registry.entries() == []


def test_reserve_network_takes_only_an_add(daemon) -> None:  # type: ignore[no-untyped-def]
    server, _ = daemon
    body = {"command": "DEL", "container_id": "c1", "ifname": "eth0", "netns": None,
            "config": {"cniVersion": "1.0.0", "name": "net-a", "type": "berth-cni",
                       "ipam": {"subnet": "10.244.1.0/24"}}}
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/reserveNetwork", body=json.dumps(body).encode(),
                 headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    assert response.status == 400 and json.loads(response.read())["code"] == 4
    assert server.service.registry.entries() == []


def test_the_in_process_client_gets_the_http_failures(daemon, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A missing namespace, a reservation that is not an ADD, a path the daemon does
    not serve: the same CNI codes as over HTTP."""
    from berth.cni.client import InProcessClient
    from berth.cni.contract import CniError
    from berth.network.base import NetworkSpec

    server, driver = daemon
    client = InProcessClient(server, f"http://127.0.0.1:{server.port}")
    spec = NetworkSpec.build("net-a", "10.244.1.0/24")
    with pytest.raises(CniError) as err:
        client.add(spec, "c1", str(tmp_path / "gone"))
    assert err.value.code == 3
    status, payload = server.answer("/reserveNetwork", {"command": "DEL"})
    assert status == 400 and payload["code"] == 7     # no network configuration
    assert server.answer("/nowhere", {})[0] == 404
    assert driver.veths == {} and server.service.registry.entries() == []
