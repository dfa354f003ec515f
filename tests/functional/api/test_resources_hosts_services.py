"""Hosts, services and availability zones end to end: python-zunclient (its Python
API, the ``zun`` CLI and ``openstack appcontainer``) against ``berth serve`` on the
real Docker engine. Service changes run on a private berth, since a disabled or
forced-down node refuses every new container."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import docker
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, bin_path, wait_for
from support.lifecycle import Made
from zunclient import exceptions as zexc

BINARY = "zun-compute"


def cli(proc: BerthProcess, tool: str, *args: str) -> str:
    env = proc.openstack_env() if tool == "openstack" else proc.zun_cli_env()
    done = subprocess.run([bin_path(tool), *args], check=False, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{tool} {' '.join(args)} (exit {done.returncode}):\n" \
                                 f"{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture
def made(zun, docker_client):  # type: ignore[no-untyped-def]
    m = Made(zun, docker_client)
    yield m
    m.cleanup()


@pytest.fixture(scope="module")
def private_berth(docker_url):  # type: ignore[no-untyped-def]
    """One private berth for this module's service tests (a disabled or forced-down
    node refuses every new container, so the shared berth must not be touched). Its
    heartbeat beats every 10 s (periodic_interval_max), not the default minute, so that
    a deleted service record comes back within the tests' waits."""
    proc = BerthProcess("[DEFAULT]\nperiodic_interval_max = 10\n").start()
    yield proc
    proc.stop()
    client = docker.from_env()
    try:
        for c in client.containers.list(all=True, ignore_removed=True,
                filters={"label": f"berth.host={proc.host}"}):
            c.remove(force=True)
    finally:
        client.close()


@pytest.fixture
def private(private_berth):  # type: ignore[no-untyped-def]
    """The private berth and its client; its service is enabled and up again after
    each test, whatever the test did."""
    zun = private_berth.client()
    yield private_berth, zun
    wait_for(lambda: any(s.host == private_berth.host for s in zun.services.list()), 30,
             what="the private agent's service record")
    zun.services.enable(private_berth.host, BINARY)
    zun.services.force_down(private_berth.host, BINARY, False)


def _host(zun: Any, hostname: str) -> Any:
    return next(h for h in zun.hosts.list() if h.hostname == hostname)


# -- hosts ----------------------------------------------------------------------------

def test_host_list_and_show_report_the_node_and_count_berths_containers(
        berth, zun, made, docker_client):
    host = _host(zun, berth.host)
    info = docker_client.info()
    assert host.cpus == info["NCPU"]
    assert host.mem_total > 0 and host.disk_total > 0
    assert host.architecture == info["Architecture"]
    assert host.kernel_version == info["KernelVersion"]
    assert "runc" in host.runtimes
    assert host.enable_cpu_pinning is False

    # The shared berth also holds other tests' containers, whose deletes may still be
    # in flight, and the agent publishes the count after its claim: so compare the
    # host's count with the containers listed on it once both have settled.
    def counted_matches_listed(expect_member: str | None) -> bool:
        with berth.http() as http:
            listed = http.get("/v1/containers", params={"host": berth.host,
                                                        "all_projects": "1"}).json()
        uuids = {c["uuid"] for c in listed["containers"]}
        if expect_member is not None and expect_member not in uuids:
            return False
        return zun.hosts.get(host.uuid).total_containers == len(uuids)

    uuid = made.create()
    wait_for(lambda: counted_matches_listed(uuid), 60,
             what="total_containers to count the new container")
    shown = zun.hosts.get(host.uuid)
    assert shown.hostname == berth.host
    assert shown.total_containers >= 1
    assert shown.cpu_used >= 1.0 and shown.mem_used >= 512
    assert zun.hosts.get(berth.host).uuid == host.uuid          # by name too

    zun.containers.delete(uuid, force=True)
    wait_for(lambda: counted_matches_listed(None) and all(
        c.uuid != uuid for c in zun.containers.list()), 60,
        what="total_containers to drop after the delete")


def test_hosts_need_microversion_1_4_and_an_admin(berth):
    with berth.http(version="container 1.3") as http:
        old = http.get("/v1/hosts/")
    assert old.status_code == 406, old.text
    assert "1.4" in old.json()["errors"][0]["detail"]
    with berth.http(token="alice:hostsproj") as http:
        denied = http.get("/v1/hosts/")
    assert denied.status_code == 403, denied.text
    with berth.http() as http:
        missing = http.get("/v1/hosts/no-such-host")
        bad_limit = http.get("/v1/hosts/?limit=0")
        bad_sort = http.get("/v1/hosts/?sort_key=nope")
    assert missing.status_code == 404
    assert "no-such-host" in missing.json()["errors"][0]["title"]
    assert bad_limit.status_code == 400 and "positive integer" in bad_limit.text
    assert bad_sort.status_code == 400 and "sort_key" in bad_sort.text


def test_openstack_cli_lists_hosts_and_the_zun_cli_shows_one(berth):
    rows = json.loads(cli(berth, "openstack", "appcontainer", "host", "list", "-f", "json"))
    assert berth.host in [r["hostname"] for r in rows]
    out = cli(berth, "zun", "host-show", berth.host)
    assert berth.host in out and "total_containers" in out


# -- services ---------------------------------------------------------------------------

def test_service_list_shows_the_agent_up_with_its_zone(berth, zun):
    svc = next(s for s in zun.services.list() if s.host == berth.host)
    assert (svc.binary, svc.state, svc.disabled, svc.forced_down) == \
        (BINARY, "up", False, False)
    assert svc.availability_zone == "nova"
    assert svc.report_count >= 1 and svc.last_seen_up
    out = cli(berth, "zun", "service-list")
    assert berth.host in out and BINARY in out and " up " in out
    zones = [z.availability_zone for z in zun.availability_zones.list()]
    assert zones == ["nova"]


def test_a_disabled_service_gets_no_new_containers_until_it_is_enabled(
        private, docker_client):
    proc, zun = private
    _, body = zun.services.disable(proc.host, BINARY, "maintenance")
    assert body["service"] == {"host": proc.host, "binary": BINARY, "disabled": True,
                               "disabled_reason": "maintenance"}
    svc = next(s for s in zun.services.list() if s.host == proc.host)
    assert (svc.disabled, svc.disabled_reason, svc.state) == (True, "maintenance", "up")

    refused = zun.containers.run(image=TEST_IMAGE, command=["sleep", "300"])
    assert refused.status == "Error"
    assert "not enough hosts" in refused.status_reason
    assert "service disabled (maintenance)" in refused.status_reason
    assert not docker_client.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"berth.host={proc.host}"})
    zun.containers.delete(refused.uuid)

    out = cli(proc, "zun", "service-enable", proc.host, BINARY)
    assert "False" in out
    made = Made(zun, docker_client)
    try:
        uuid = made.create()
        assert made.inspect(uuid)["State"]["Running"] is True
    finally:
        made.cleanup()


def test_a_forced_down_service_is_down_and_gets_no_containers(private, docker_client):
    proc, zun = private
    _, body = zun.services.force_down(proc.host, BINARY, True)
    assert body["service"] == {"host": proc.host, "binary": BINARY, "forced_down": True}
    svc = next(s for s in zun.services.list() if s.host == proc.host)
    assert (svc.forced_down, svc.state) == (True, "down")
    refused = zun.containers.run(image=TEST_IMAGE, command=["sleep", "300"])
    assert refused.status == "Error" and "down" in refused.status_reason
    zun.containers.delete(refused.uuid)

    out = cli(proc, "zun", "service-force-down", "--unset", proc.host, BINARY)
    assert "False" in out
    svc = next(s for s in zun.services.list() if s.host == proc.host)
    assert (svc.forced_down, svc.state) == (False, "up")


def test_service_actions_refuse_missing_unknown_and_badly_typed_parameters(private):
    proc, zun = private
    with proc.http() as http:
        no_binary = http.put(f"/v1/services/enable?host={proc.host}")
        no_host = http.put("/v1/services/disable?binary=zun-compute")
        no_flag = http.put(f"/v1/services/force_down?host={proc.host}&binary={BINARY}")
        bad_flag = http.put(f"/v1/services/force_down?host={proc.host}&binary={BINARY}"
                            f"&forced_down=maybe")
        bad_host = http.put(f"/v1/services/enable?host=a%20b&binary={BINARY}")
        unknown = http.put(f"/v1/services/enable?host=nowhere&binary={BINARY}")
        not_admin = http.get("/v1/services", headers={"X-Auth-Token": "bob:proj"})
    for resp, word in ((no_binary, "binary"), (no_host, "host"), (no_flag, "forced_down"),
                       (bad_flag, "forced_down"), (bad_host, "host")):
        assert resp.status_code == 400, resp.text
        assert word in resp.json()["errors"][0]["title"]
    assert unknown.status_code == 404
    assert "nowhere" in unknown.json()["errors"][0]["title"]
    assert not_admin.status_code == 403
    svc = next(s for s in zun.services.list() if s.host == proc.host)
    assert (svc.disabled, svc.forced_down) == (False, False)       # nothing changed


def test_service_delete_removes_the_record_until_the_next_heartbeat(private):
    proc, zun = private
    zun.services.delete(proc.host, BINARY)
    with pytest.raises(zexc.NotFound):
        zun.services.delete(proc.host, BINARY)
    # The agent is alive: its heartbeat (every 10 s at most) registers it again.
    wait_for(lambda: any(s.host == proc.host for s in zun.services.list()), 30,
             what="the agent to register its service again")


def test_availability_zone_list_through_the_cli(berth):
    out = cli(berth, "zun", "availability-zone-list")
    assert "nova" in out
    with berth.http() as http:
        body = http.get("/v1/availability_zones?limit=1").json()
    assert body == {"availability_zones": [{"availability_zone": "nova"}], "next": None}

