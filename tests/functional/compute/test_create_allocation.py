"""Placement allocations of containers with the embedded driver (the default), end to
end: python-zunclient against a private ``berth serve`` on the real Docker engine,
checked in the embedded tables of berth's SQLite database.

Zun removes the allocation only when the claim fails; berth removes it on every
failure branch of create (design.md item 5), and delete removes it before the row."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select, text
from support.berth_proc import TEST_IMAGE, wait_for
from support.lifecycle import database_of
from zunclient.common.apiclient import exceptions as zexc

from berth.db import nodes
from berth.db.engine import Database
from berth.db.models import Container
from berth.placement.base import MEMORY_MB, VCPU
from berth.placement.embedded import EmbeddedPlacement

MISSING_IMAGE = "127.0.0.1:5000/berth-test/does-not-exist:latest"
NO_IMAGE_CHECK = "[api]\nenable_image_validation = false\n"


def allocation_rows(db: Database) -> list[tuple[str, int, str, int]]:
    with db.reader() as s:
        return [tuple(r) for r in s.execute(text(   # type: ignore[misc]
            "SELECT consumer_id, resource_provider_id, resource_class, used FROM allocation "
            "ORDER BY consumer_id, resource_class")).all()]


def status_of(zun: Any, uuid: str) -> str | None:
    c = zun.containers.get(uuid)
    return str(c.status) if c.task_state is None else None


def gone(zun: Any, uuid: str) -> bool:
    try:
        zun.containers.get(uuid)
    except zexc.NotFound:
        return True
    return False


@pytest.fixture
def node(berth_factory):  # type: ignore[no-untyped-def]
    """A private berth whose API does not pre-check images (so a create can fail at
    the pull), with its database and its provider uuid."""
    proc = berth_factory(NO_IMAGE_CHECK).start()
    with database_of(proc) as db:
        rp = nodes.get_compute_node(db, proc.host).rp_uuid
        yield proc, db, rp


def test_failed_pull_leaves_no_allocation_and_delete_releases_it(node):  # type: ignore[no-untyped-def]
    proc, db, rp = node
    zun = proc.client()
    placement = EmbeddedPlacement(db)
    assert placement.get_inventory(rp)[VCPU].total >= 1      # the node was reported
    before = placement.get_provider(rp).generation

    bad = zun.containers.create(image=MISSING_IMAGE, image_pull_policy="always",
                                command=["sleep", "300"], cpu=0.5, memory="32")
    wait_for(lambda: status_of(zun, bad.uuid) == "Error", 60, what="the failed pull")
    assert "does-not-exist" in (zun.containers.get(bad.uuid).status_reason or "")
    # The undo releases the allocation right after the Error is written.
    wait_for(lambda: allocation_rows(db) == [], 10, what="the allocation to be released")
    # Allocated, then released: each bumps the provider's generation.
    assert placement.get_provider(rp).generation >= before + 2

    good = zun.containers.run(image=TEST_IMAGE, image_pull_policy="ifnotpresent",
                              command=["sleep", "300"], cpu=1.5, memory="64")
    wait_for(lambda: status_of(zun, good.uuid) == "Running", 60, what="the container to run")
    assert placement.get_allocation(good.uuid) == {rp: {VCPU: 2, MEMORY_MB: 64}}
    assert {(c, rc) for c, _, rc, _ in allocation_rows(db)} == {
        (good.uuid, VCPU), (good.uuid, MEMORY_MB)}
    assert placement.usages(rp)[VCPU] == 2

    zun.containers.delete(good.uuid, force=True)
    wait_for(lambda: gone(zun, good.uuid), 60, what="the container to be deleted")
    assert allocation_rows(db) == []
    zun.containers.delete(bad.uuid)
    wait_for(lambda: gone(zun, bad.uuid), 60, what="the failed container to be deleted")


def test_a_disk_limit_no_host_can_enforce_is_a_400(berth_factory, docker_client):  # type: ignore[no-untyped-def]
    """overlay2 on ext4 (this machine's engine) cannot limit a root filesystem: a
    create asking for 'disk' is refused before anything is made (Zun accepted it and
    let it fail on the node)."""
    proc = berth_factory().start()
    with database_of(proc) as db:
        assert not nodes.get_compute_node(db, proc.host).disk_quota_supported
        with proc.http() as http:
            resp = http.post("/v1/containers", json={"image": TEST_IMAGE, "disk": 5})
        assert resp.status_code == 400, resp.text
        assert "limit a container's disk" in resp.json()["errors"][0]["detail"]
        with db.reader() as s:
            assert list(s.scalars(select(Container.uuid))) == []
        assert allocation_rows(db) == []


def test_a_node_whose_vcpus_placement_holds_is_not_scheduled(berth_factory, docker_client):  # type: ignore[no-untyped-def]
    """Placement counts whole VCPUs: at ratio 1, a node's cores fill with as many
    containers of 0.1 cpu. The scheduler counts them the same way, so the next create
    is refused at scheduling (Zun's contract: 202, the row in Error) instead of being
    sent to an agent whose allocation must fail: no Docker container, no allocation."""
    proc = berth_factory("[compute]\ncpu_allocation_ratio = 1\n").start()
    zun = proc.client()
    with database_of(proc) as db:
        rp = nodes.get_compute_node(db, proc.host).rp_uuid
        placement = EmbeddedPlacement(db)
        vcpus = int(placement.get_inventory(rp)[VCPU].capacity)
        assert 1 <= vcpus <= 64, f"a node of {vcpus} VCPUs: the test needs 1 to 64"
        held = []
        for _ in range(vcpus):
            c = zun.containers.run(image=TEST_IMAGE, image_pull_policy="ifnotpresent",
                                   command=["sleep", "300"], cpu=0.1, memory="32")
            held.append(c.uuid)
        for uuid in held:
            wait_for(lambda u=uuid: status_of(zun, u) == "Running", 60,
                     what="the containers that fill the node to run")
        assert placement.usages(rp)[VCPU] == vcpus

        refused = zun.containers.run(image=TEST_IMAGE, image_pull_policy="ifnotpresent",
                                     command=["sleep", "300"], cpu=0.1, memory="32")
        assert refused.status == "Error"
        assert "not enough hosts" in refused.status_reason
        assert "whole VCPU in Placement" in refused.status_reason, refused.status_reason
        assert placement.get_allocation(refused.uuid) == {}
        assert docker_client.containers.list(
            all=True, ignore_removed=True, filters={"name": f"zun-{refused.uuid}"}) == []
        for uuid in [*held, refused.uuid]:
            zun.containers.delete(uuid, force=True)


def test_a_rebuild_of_a_failed_create_claims_and_allocates_again(node):  # type: ignore[no-untyped-def]
    """Found by the crash-point suite (tests/reliability): a create that failed holds
    nothing (Error, allocation released); a rebuild gave it a Docker container again
    without an allocation. Now the rebuild records its resources like a create."""
    proc, db, rp = node
    zun = proc.client()
    placement = EmbeddedPlacement(db)
    bad = zun.containers.create(image=MISSING_IMAGE, image_pull_policy="always",
                                command=["sleep", "300"], cpu=0.5, memory="32")
    wait_for(lambda: status_of(zun, bad.uuid) == "Error", 60, what="the failed pull")
    assert allocation_rows(db) == []
    with proc.http() as http:
        resp = http.post(f"/v1/containers/{bad.uuid}/rebuild",
                         params={"image": TEST_IMAGE, "image_pull_policy": "ifnotpresent"})
    assert resp.status_code == 202, resp.text
    wait_for(lambda: status_of(zun, bad.uuid) == "Created", 60, what="the rebuild")
    assert placement.get_allocation(bad.uuid) == {rp: {VCPU: 1, MEMORY_MB: 32}}
    assert nodes.get_compute_node(db, proc.host).mem_used == 32
    zun.containers.delete(bad.uuid, force=True)
    wait_for(lambda: gone(zun, bad.uuid), 60, what="the container to be deleted")
    assert allocation_rows(db) == []
