"""The OpenStack Placement driver against the real ``openstack-placement`` service
(PyPI, noauth2, token ``admin``), started by ``.ci/ci-services.sh start placement``
when it does not answer. Every check reads Placement back over raw HTTP, not through
the driver under test."""

from __future__ import annotations

import os
import subprocess
import time
import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest
from oslo_config import cfg
from support.berth_proc import TEST_IMAGE, wait_for
from support.migrated_sqlite import migrated_url

import berth.conf
from berth.cmd import wiring
from berth.db import nodes
from berth.db.engine import Database
from berth.placement.base import (
    CONFLICT_ATTEMPTS,
    MEMORY_MB,
    TRAIT_COMPUTE_STATUS_DISABLED,
    VCPU,
    AllocationFailed,
    Inventory,
    PlacementError,
    ProviderNotFound,
    ResourceProviderUpdateConflict,
)
from berth.placement.openstack import CONSUMER_TYPE, MICROVERSION, OpenStackPlacement
from berth.placement.report import report_node
from berth.placement.requests import NodeReservations
from berth.scheduler.host_state import load_host_states

pytestmark = pytest.mark.integration

PORT = os.environ.get("BERTH_PLACEMENT_PORT", "8778")
URL = f"http://127.0.0.1:{PORT}"
SCRIPT = Path(__file__).resolve().parents[3] / ".ci" / "ci-services.sh"
HEADERS = {"X-Auth-Token": "admin", "OpenStack-API-Version": f"placement {MICROVERSION}"}


def _answers() -> bool:
    try:
        return httpx.get(f"{URL}/", timeout=3).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="session")
def placement_url() -> Iterator[str]:
    """The real service; started (and stopped afterwards) when it is not up. A start
    that fails is a test failure with the script's output, never a skip."""
    started = False
    if not _answers():
        t0 = time.monotonic()
        proc = subprocess.run(["bash", str(SCRIPT), "start", "placement"], check=False,
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 or not _answers():
            pytest.fail(f"could not start Placement with {SCRIPT} (exit {proc.returncode}):\n"
                        f"{proc.stdout}\n{proc.stderr}")
        started = True
        print(f"Placement started in {time.monotonic() - t0:.1f} s")
    yield URL
    if started:
        subprocess.run(["bash", str(SCRIPT), "stop", "placement"], check=False,
                       capture_output=True, timeout=120)


@pytest.fixture
def raw(placement_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=placement_url, headers=HEADERS, timeout=30) as client:
        yield client


@pytest.fixture
def driver(placement_url: str) -> OpenStackPlacement:
    return OpenStackPlacement.with_token(placement_url, "admin", conflict_wait=0.01)


@pytest.fixture
def consumers(raw: httpx.Client) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    for c in made:
        raw.delete(f"/allocations/{c}")


@pytest.fixture
def rp(raw: httpx.Client, driver: OpenStackPlacement, consumers: list[str]) -> Iterator[str]:
    """A fresh provider; its allocations and itself are removed afterwards."""
    uuid = str(uuidlib.uuid4())
    driver.ensure_provider(uuid, f"berth-test-{uuid}")
    yield uuid
    for c in raw.get(f"/resource_providers/{uuid}/allocations").json().get("allocations", {}):
        raw.delete(f"/allocations/{c}")
    raw.delete(f"/resource_providers/{uuid}")


def new_consumer(consumers: list[str]) -> str:
    c = str(uuidlib.uuid4())
    consumers.append(c)
    return c


def generation(raw: httpx.Client, rp: str) -> int:
    return int(raw.get(f"/resource_providers/{rp}").json()["generation"])


def bump_generation_behind_its_back(raw: httpx.Client, rp: str) -> None:
    """Change the provider (a new aggregate) so that any generation cached before is
    stale. (Writing the same traits again does not count as a change.)"""
    before = raw.get(f"/resource_providers/{rp}/aggregates").json()
    resp = raw.put(f"/resource_providers/{rp}/aggregates", json={
        "aggregates": before["aggregates"] + [str(uuidlib.uuid4())],
        "resource_provider_generation": before["resource_provider_generation"]})
    assert resp.status_code == 200, resp.text
    assert resp.json()["resource_provider_generation"] > before["resource_provider_generation"]


class CallLog:
    """Wraps the driver's one HTTP entry point: records (method, url, status), and
    can run a hook just before matching requests."""

    def __init__(self, driver: OpenStackPlacement) -> None:
        self.calls: list[tuple[str, str, int]] = []
        self.before: dict[tuple[str, str], Any] = {}
        original = driver._call

        def call(method: str, url: str, body: Any = None) -> Any:
            hook = self.before.get((method, url))
            if hook is not None:
                hook()
            resp = original(method, url, body)
            self.calls.append((method, url, resp.status_code))
            return resp

        driver._call = call  # type: ignore[method-assign]

    def statuses(self, method: str, url: str) -> list[int]:
        return [s for m, u, s in self.calls if (m, u) == (method, url)]


INV = {VCPU: Inventory(total=4, reserved=1, allocation_ratio=2.0),       # capacity 6
       MEMORY_MB: Inventory(total=2048, reserved=512, allocation_ratio=1.0)}   # 1536


def test_provider_is_created_once(driver: OpenStackPlacement, raw: httpx.Client,
                                  placement_url: str) -> None:
    uuid = str(uuidlib.uuid4())
    try:
        made = driver.ensure_provider(uuid, f"berth-test-{uuid}")
        assert made.uuid == uuid
        got = raw.get(f"/resource_providers/{uuid}").json()
        assert got["name"] == f"berth-test-{uuid}"
        # Idempotent, also from a driver with nothing cached.
        fresh = OpenStackPlacement.with_token(placement_url, "admin")
        assert fresh.ensure_provider(uuid, f"berth-test-{uuid}").uuid == uuid
        assert raw.get("/resource_providers", params={"name": f"berth-test-{uuid}"}
                       ).json()["resource_providers"][0]["uuid"] == uuid
        with pytest.raises(PlacementError, match="name"):
            fresh.ensure_provider(str(uuidlib.uuid4()), f"berth-test-{uuid}")
    finally:
        raw.delete(f"/resource_providers/{uuid}")


def test_inventory_is_written_only_when_it_changes(driver: OpenStackPlacement,
                                                   raw: httpx.Client, rp: str) -> None:
    log = CallLog(driver)
    assert driver.set_inventory(rp, INV) is True
    got = raw.get(f"/resource_providers/{rp}/inventories").json()["inventories"]
    assert got[VCPU] == {"total": 4, "reserved": 1, "min_unit": 1, "max_unit": 4,
                         "step_size": 1, "allocation_ratio": 2.0}
    assert got[MEMORY_MB]["reserved"] == 512
    before = generation(raw, rp)
    assert driver.set_inventory(rp, INV) is False
    assert generation(raw, rp) == before
    url = f"/resource_providers/{rp}/inventories"
    assert log.statuses("PUT", url) == [200]
    assert driver.set_inventory(rp, {VCPU: Inventory(total=4, allocation_ratio=4.0)}) is True
    assert set(raw.get(url).json()["inventories"]) == {VCPU}
    assert driver.get_inventory(rp)[VCPU].allocation_ratio == 4.0


def test_traits_and_aggregates(driver: OpenStackPlacement, raw: httpx.Client, rp: str) -> None:
    driver.set_inventory(rp, INV)
    assert report_node(driver, rp, "ignored", INV, service_disabled=True) is True
    assert raw.get(f"/resource_providers/{rp}/traits").json()["traits"] == [
        TRAIT_COMPUTE_STATUS_DISABLED]
    assert raw.get(f"/traits/{TRAIT_COMPUTE_STATUS_DISABLED}").status_code == 204
    assert driver.set_traits(rp, [TRAIT_COMPUTE_STATUS_DISABLED, "HW_CPU_X86_AVX"]) is True
    assert report_node(driver, rp, "ignored", INV, service_disabled=False) is True
    assert raw.get(f"/resource_providers/{rp}/traits").json()["traits"] == ["HW_CPU_X86_AVX"]
    agg = str(uuidlib.uuid4())
    assert driver.set_aggregates(rp, [agg]) is True
    assert driver.set_aggregates(rp, [agg]) is False
    assert raw.get(f"/resource_providers/{rp}/aggregates").json()["aggregates"] == [agg]


def test_allocation_per_container(driver: OpenStackPlacement, raw: httpx.Client, rp: str,
                                  consumers: list[str]) -> None:
    driver.set_inventory(rp, INV)
    c = new_consumer(consumers)
    driver.allocate(c, rp, {VCPU: 4, MEMORY_MB: 1000}, "project-a", "user-a")
    got = raw.get(f"/allocations/{c}").json()
    assert got["allocations"][rp]["resources"] == {VCPU: 4, MEMORY_MB: 1000}
    assert (got["project_id"], got["user_id"]) == ("project-a", "user-a")
    assert got["consumer_type"] == CONSUMER_TYPE
    # Again (a retried create): replaced, not added.
    driver.allocate(c, rp, {VCPU: 4, MEMORY_MB: 1000}, "project-a", "user-a")
    assert driver.usages(rp) == {VCPU: 4, MEMORY_MB: 1000}
    assert driver.get_allocation(c) == {rp: {VCPU: 4, MEMORY_MB: 1000}}


def test_provider_allocations_lists_every_consumer(driver: OpenStackPlacement, rp: str,
                                                   consumers: list[str]) -> None:
    driver.set_inventory(rp, INV)
    assert driver.provider_allocations(rp) == {}
    a, b = new_consumer(consumers), new_consumer(consumers)
    driver.allocate(a, rp, {VCPU: 2, MEMORY_MB: 100}, "p", "u")
    driver.allocate(b, rp, {VCPU: 1}, "p", "u")
    assert driver.provider_allocations(rp) == {a: {VCPU: 2, MEMORY_MB: 100}, b: {VCPU: 1}}
    driver.remove_allocation(a)
    assert driver.provider_allocations(rp) == {b: {VCPU: 1}}
    with pytest.raises(ProviderNotFound):
        driver.provider_allocations(str(uuidlib.uuid4()))


def test_allocation_that_does_not_fit(driver: OpenStackPlacement, raw: httpx.Client, rp: str,
                                      consumers: list[str]) -> None:
    driver.set_inventory(rp, INV)
    driver.allocate(new_consumer(consumers), rp, {VCPU: 4}, "p", "u")
    c = new_consumer(consumers)
    with pytest.raises(AllocationFailed, match="capacity"):
        driver.allocate(c, rp, {VCPU: 3}, "p", "u")              # 4 + 3 > 6
    with pytest.raises(AllocationFailed, match="DISK_GB"):
        driver.allocate(c, rp, {VCPU: 1, "DISK_GB": 1}, "p", "u")  # no such inventory
    assert raw.get(f"/allocations/{c}").json()["allocations"] == {}
    with pytest.raises(ProviderNotFound):
        driver.allocate(c, str(uuidlib.uuid4()), {VCPU: 1}, "p", "u")


def test_remove_allocation_is_idempotent(driver: OpenStackPlacement, raw: httpx.Client,
                                         rp: str, consumers: list[str]) -> None:
    driver.set_inventory(rp, INV)
    c = new_consumer(consumers)
    driver.allocate(c, rp, {VCPU: 2, MEMORY_MB: 10}, "p", "u")
    assert driver.remove_allocation(c) is True
    assert raw.get(f"/allocations/{c}").json()["allocations"] == {}
    assert driver.remove_allocation(c) is False
    assert driver.usages(rp) == {VCPU: 0, MEMORY_MB: 0}


def test_generation_conflict_is_retried(driver: OpenStackPlacement, raw: httpx.Client,
                                        rp: str) -> None:
    driver.set_inventory(rp, INV)
    bump_generation_behind_its_back(raw, rp)
    log = CallLog(driver)
    wanted = {VCPU: Inventory(total=8, allocation_ratio=2.0), MEMORY_MB: INV[MEMORY_MB]}
    assert driver.set_inventory(rp, wanted) is True
    url = f"/resource_providers/{rp}/inventories"
    assert log.statuses("PUT", url) == [409, 200]
    assert raw.get(url).json()["inventories"][VCPU]["total"] == 8


def test_generation_conflict_gives_up_after_four_attempts(
        driver: OpenStackPlacement, raw: httpx.Client, rp: str) -> None:
    driver.set_inventory(rp, INV)
    log = CallLog(driver)
    url = f"/resource_providers/{rp}/inventories"
    log.before[("PUT", url)] = lambda: bump_generation_behind_its_back(raw, rp)
    with pytest.raises(ResourceProviderUpdateConflict):
        driver.set_inventory(rp, {VCPU: Inventory(total=8)})
    assert log.statuses("PUT", url) == [409] * CONFLICT_ATTEMPTS
    assert raw.get(url).json()["inventories"][VCPU]["total"] == 4


def test_consumer_generation_conflict_is_retried(driver: OpenStackPlacement,
                                                 raw: httpx.Client, rp: str,
                                                 consumers: list[str]) -> None:
    """Someone else writes the container's allocation between the driver's read and
    its write: the driver reads the consumer generation again and wins."""
    driver.set_inventory(rp, INV)
    c = new_consumer(consumers)
    url = f"/allocations/{c}"

    def other_writer() -> None:
        log.before.pop(("PUT", url))
        resp = raw.put(url, json={"allocations": {rp: {"resources": {VCPU: 1}}},
                                  "project_id": "p", "user_id": "u",
                                  "consumer_generation": None, "consumer_type": "OTHER"})
        assert resp.status_code == 204, resp.text

    log = CallLog(driver)
    log.before[("PUT", url)] = other_writer
    driver.allocate(c, rp, {VCPU: 2}, "p", "u")
    assert log.statuses("PUT", url) == [409, 204]
    got = raw.get(url).json()
    assert got["allocations"][rp]["resources"] == {VCPU: 2}
    assert got["consumer_type"] == CONSUMER_TYPE


def test_unreachable_placement_is_a_placement_error() -> None:
    driver = OpenStackPlacement.with_token("http://127.0.0.1:9", "admin", timeout=3)
    with pytest.raises(PlacementError, match="Placement is up"):
        driver.usages(str(uuidlib.uuid4()))


def test_the_apis_scheduler_reads_each_nodes_inventory_from_placement(
        driver: OpenStackPlacement, rp: str, tmp_path: Path) -> None:
    """berth-api wired for [placement]driver = openstack: the node's capacity is what
    its agent reported to Placement (ratio 2, 1 core reserved), not what the API's own
    [compute] options (ratio 16) would make of its cores."""
    conf_file = tmp_path / "api.conf"
    conf_file.write_text(f"[placement]\ndriver = openstack\nendpoint = {URL}\n"
                         f"token = admin\n")
    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    conf(args=["--config-file", str(conf_file)], default_config_files=[])
    db = Database(migrated_url(tmp_path))
    try:
        driver.set_inventory(rp, INV)
        nodes.upsert_compute_node(db, "os-node", {"cpus": 4, "mem_total": 2048, "rp_uuid": rp})
        nodes.report_service_up(db, "os-node", nodes.COMPUTE_BINARY, None)
        elsewhere = wiring.reported_inventories(conf, db)
        assert elsewhere is not None
        [state] = load_host_states(db, NodeReservations(), 60, "nova", elsewhere)
        assert (state.cpus, state.memory_mib, state.cores) == (6.0, 1536, 4)
    finally:
        db.dispose()


@pytest.fixture
def shared_berth(placement_url: str, raw: httpx.Client) -> Iterator[Any]:
    """``make(host)``: a real ``berth serve`` named ``host`` on this Placement with
    ``[compute]host_shared_with_nova = true``; stopped afterwards, and the providers
    named ``host`` removed."""
    from support.berth_proc import BerthProcess, remove_local_networks, unmount_volumes

    made: list[BerthProcess] = []

    def make(host: str) -> BerthProcess:
        proc = BerthProcess(f"[placement]\ndriver = openstack\nendpoint = {placement_url}\n"
                            f"token = admin\n[compute]\nhost_shared_with_nova = true\n",
                            host=host)
        made.append(proc)
        return proc.start(60)

    yield make
    for proc in made:
        proc.stop()
        engine = docker.from_env()            # what a failed test left running
        try:
            for c in engine.containers.list(all=True, filters={"label": f"berth.host={proc.host}"}):
                c.remove(force=True)
        finally:
            engine.close()
        remove_local_networks(proc)
        unmount_volumes(proc)
        for rp in raw.get("/resource_providers", params={"name": proc.host}).json()[
                "resource_providers"]:
            raw.delete(f"/resource_providers/{rp['uuid']}")


def test_a_node_shared_with_nova_reports_on_novas_provider(
        shared_berth: Any, raw: httpx.Client) -> None:
    """Nova made the node's provider (named after its hypervisor_hostname, with an
    instance's allocation on it); berth's agent reports its inventory there and makes
    no provider of its own."""
    host = f"nova-{uuidlib.uuid4().hex[:8]}"
    novas = str(uuidlib.uuid4())
    resp = raw.post("/resource_providers", json={"uuid": novas, "name": host})
    assert resp.status_code in (200, 201), resp.text
    resp = raw.put(f"/resource_providers/{novas}/inventories", json={
        "resource_provider_generation": 0,
        "inventories": {VCPU: {"total": 2, "allocation_ratio": 4.0},
                        MEMORY_MB: {"total": 4096}}})
    assert resp.status_code == 200, resp.text
    instance = str(uuidlib.uuid4())
    resp = raw.put(f"/allocations/{instance}", json={
        "allocations": {novas: {"resources": {VCPU: 1, MEMORY_MB: 512}}},
        "project_id": "p", "user_id": "u", "consumer_generation": None,
        "consumer_type": "INSTANCE"})
    assert resp.status_code == 204, resp.text
    try:
        berth = shared_berth(host)
        inventories = raw.get(f"/resource_providers/{novas}/inventories").json()["inventories"]
        assert set(inventories) == {VCPU, MEMORY_MB, "DISK_GB"}
        assert inventories[VCPU]["total"] == (os.cpu_count() or 0)
        assert inventories[VCPU]["allocation_ratio"] == 4.0   # Nova's: berth's is unset
        assert inventories["DISK_GB"]["allocation_ratio"] == 1.0   # initial_disk_...
        named = raw.get("/resource_providers", params={"name": host}).json()
        assert [rp["uuid"] for rp in named["resource_providers"]] == [novas]
        held = raw.get(f"/allocations/{instance}").json()["allocations"]
        assert {rp: a["resources"] for rp, a in held.items()} == {
            novas: {VCPU: 1, MEMORY_MB: 512}}
        assert f"node {host} reports to Nova's resource provider {novas}" in berth.log_text()
        # A container is allocated there, beside the instance.
        zun = berth.client()
        c = zun.containers.run(name=f"shared-{host}", image=TEST_IMAGE, command=["sleep", "60"],
                               image_pull_policy="ifnotpresent", cpu=1, memory=64)
        try:
            wait_for(lambda: zun.containers.get(c.uuid).status == "Running", 60,
                     what=f"container {c.uuid} to run")
            on_novas = raw.get(f"/resource_providers/{novas}/allocations").json()["allocations"]
            assert on_novas[c.uuid]["resources"] == {VCPU: 1, MEMORY_MB: 64}
            assert on_novas[instance]["resources"] == {VCPU: 1, MEMORY_MB: 512}
        finally:
            zun.containers.delete(c.uuid, force=True)
            wait_for(lambda: c.uuid not in raw.get(f"/resource_providers/{novas}/allocations"
                                                   ).json()["allocations"], 60,
                     what=f"the allocation of {c.uuid} to go")
    finally:
        raw.delete(f"/allocations/{instance}")


def test_a_node_shared_with_nova_without_novas_provider_says_what_to_change(
        shared_berth: Any, raw: httpx.Client) -> None:
    host = f"nova-{uuidlib.uuid4().hex[:8]}"
    berth = shared_berth(host)
    log = berth.log_text()
    assert (f"[compute]host_shared_with_nova is true but Placement has no resource provider "
            f"named '{host}'") in log
    assert "or set [compute]host_shared_with_nova = false" in log
    assert raw.get("/resource_providers", params={"name": host}).json()[
        "resource_providers"] == []
