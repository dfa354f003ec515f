"""The cni driver in a deployment: ``berth-api`` (which resolves ``nets`` in Neutron),
``berth-compute`` (which makes the ports) and ``berth-cni-daemon`` (which plugs them
and polls their status) as separate processes over RabbitMQ and PostgreSQL, against the
real Neutron. The agent and the daemon run as Neutron's host (the ports they bind must
be its OVS agent's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from integration.network.conftest import (
    NEUTRON_HOST,
    USER_TOKEN,
    Networks,
    berth_conf,
    remove_leftovers,
)
from integration.network.test_neutron_containers import ovs_ports
from support.berth_proc import TEST_IMAGE, bin_path, free_port, wait_for

pytestmark = pytest.mark.integration


def test_api_agent_and_daemon_apart_plug_a_neutron_port_and_remove_it(
        neutron: str, networks: Networks, deployment_factory: Callable[[str], Any],
        database_maker: Callable[[str], Any],
        ports_of: Callable[[str], list[dict[str, Any]]]) -> None:
    from integration.conftest import ServiceProcess

    net = networks.make("10.231.20.0/24")
    with database_maker("postgresql") as url:
        dep = deployment_factory(url)
        assert dep.berth("db", "upgrade").returncode == 0
        neutron_conf = berth_conf(neutron) + f"cni_daemon_port = {free_port()}\n"
        conf = dep.conf(NEUTRON_HOST, f"host = {NEUTRON_HOST}", neutron_conf)
        daemon = ServiceProcess("berth-cni-daemon", [bin_path("berth-cni-daemon"),
                                                     "--config-file", str(conf)],
                                dep.root / "cni-daemon.log").start()
        try:
            wait_for(lambda: daemon.check_alive() or "CNI daemon serving" in
                     daemon.log_text(), 120, 0.2, what="berth-cni-daemon to serve")
            agent = ServiceProcess(f"berth-compute {NEUTRON_HOST}",
                                   [bin_path("berth-compute"), "--config-file", str(conf)],
                                   dep.root / "agent.log")
            dep.agents[NEUTRON_HOST] = agent.start()
            wait_for(lambda: agent.check_alive() or
                     f"compute agent {NEUTRON_HOST} is up" in agent.log_text(), 180, 0.2,
                     what="berth-compute to listen")
            api, dep.url = dep.start_another_api("api", timeout=180, extra_conf=neutron_conf)
            dep.api = api
            dep.wait_service(NEUTRON_HOST, "up", 120)
            with dep.http() as admin:
                http_headers = {"X-Auth-Token": USER_TOKEN}
                resp = admin.post("/v1/containers", params={"run": "true"},
                                  headers=http_headers,
                                  json={"image": TEST_IMAGE, "command": ["sleep", "3600"],
                                        "nets": [{"network": net["id"]}]})
                assert resp.status_code == 202, resp.text
                uuid = resp.json()["uuid"]

                def settled() -> dict[str, Any] | None:
                    body = admin.get(f"/v1/containers/{uuid}", headers=http_headers).json()
                    return body if body["status"] in ("Running", "Error") else None
                body = wait_for(settled, 180, 0.2, what="the container to run")
                assert isinstance(body, dict)
                assert body["status"] == "Running", body["status_reason"]
                (port,) = ports_of(uuid)
                assert port["status"] == "ACTIVE"
                assert body["addresses"][net["id"]][0]["port"] == port["id"]
                assert "is ACTIVE" in daemon.log_text()
                resp = admin.delete(f"/v1/containers/{uuid}", params={"stop": "true"},
                                    headers=http_headers)
                assert resp.status_code == 204, resp.text
                wait_for(lambda: ports_of(uuid) == [], 120, 0.2, what="the port to go")
                assert f"tap{port['id'][:11]}" not in ovs_ports()
        finally:
            dep.close()
            daemon.stop()
            remove_leftovers()
