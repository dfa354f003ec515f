from __future__ import annotations

import http.client
from pathlib import Path

from support.fake_network import FakeDriver, FakeFirewall

from berth.cni.daemon import CniDaemon, DaemonSettings


def test_daemon_starts_on_its_port_is_healthy_and_stops_twice(tmp_path: Path) -> None:
    daemon = CniDaemon(DaemonSettings(registry_file=str(tmp_path / "r.json"), port=0,
                                      workers=2), FakeDriver(), FakeFirewall())
    daemon.start()
    try:
        assert daemon.healthy()
        host, port = daemon.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("GET", "/healthz")
        assert conn.getresponse().status == 200
        assert not daemon.wait(0.01)
    finally:
        daemon.stop()
        daemon.stop()
    assert daemon.wait(5)
    assert not daemon.healthy()
