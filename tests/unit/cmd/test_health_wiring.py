"""``[compute]metrics_port`` (berth/conf/compute.py) and the listener berth-compute
builds from it (berth/cmd/wiring.py build_health_server)."""

from __future__ import annotations

import httpx
from oslo_config import cfg
from support import conf as support_conf

from berth.cmd import wiring


class Agent:
    """What build_health_server asks of the agent."""

    def readiness_checks(self) -> dict[str, object]:
        return {"database": lambda: None}


def conf_with(**compute: object) -> cfg.ConfigOpts:
    return support_conf.conf_with("compute", **compute)


def test_the_listener_is_off_by_default() -> None:
    conf = conf_with()
    assert conf.compute.metrics_port == 0
    assert conf.compute.metrics_host == "127.0.0.1"
    assert wiring.build_health_server(conf, Agent()) is None  # type: ignore[arg-type]


def test_a_port_starts_a_listener_with_the_agents_checks() -> None:
    from support.berth_proc import free_port

    port = free_port()
    server = wiring.build_health_server(conf_with(metrics_port=port),
                                        Agent())  # type: ignore[arg-type]
    assert server is not None
    server.start()
    try:
        resp = httpx.get(f"http://127.0.0.1:{port}/readyz")
        assert resp.status_code == 200
        assert resp.json()["checks"] == {"database": "ok"}
    finally:
        server.stop()


def test_the_option_is_documented_for_the_sample_config() -> None:
    from berth.conf import list_opts

    opts = {o.name: o for group, options in list_opts() if group == "compute"
            for o in options}
    assert "metrics_port" in opts and "0" in opts["metrics_port"].help
