"""A resize (PATCH cpu/memory) keeps the container's Placement allocation true, with the
embedded driver (the default), end to end on the real Docker engine. Zun left the
allocation at the create's values, so Placement's view of a node drifted with every
resize; berth moves it with the claim, and gives it back when Docker refuses."""

from __future__ import annotations

from typing import Any

from support.berth_proc import TEST_IMAGE, wait_for
from support.lifecycle import database_of

from berth.db import containers, nodes
from berth.placement.base import MEMORY_MB, VCPU
from berth.placement.embedded import EmbeddedPlacement

MIB = 2 ** 20


def _running(zun: Any, cpu: float, memory: str = "64") -> str:
    c = zun.containers.run(image=TEST_IMAGE, image_pull_policy="ifnotpresent",
                           command=["sleep", "300"], cpu=cpu, memory=memory)
    wait_for(lambda: zun.containers.get(c.uuid).status == "Running", 60,
             what="the container to run")
    return str(c.uuid)


def _docker_limits(docker_client: Any, uuid: str) -> tuple[int, int]:
    host_config = docker_client.api.inspect_container(f"zun-{uuid}")["HostConfig"]
    return host_config["Memory"], host_config["CpuShares"]


def test_a_resize_moves_the_allocation_with_the_claim(berth_factory, docker_client):  # type: ignore[no-untyped-def]
    proc = berth_factory().start()
    zun = proc.client()
    with database_of(proc) as db:
        rp = nodes.get_compute_node(db, proc.host).rp_uuid
        placement = EmbeddedPlacement(db)
        uuid = _running(zun, cpu=0.5)
        assert placement.get_allocation(uuid) == {rp: {VCPU: 1, MEMORY_MB: 64}}

        zun.containers.update(uuid, memory="128", cpu="1.5")
        assert placement.get_allocation(uuid) == {rp: {VCPU: 2, MEMORY_MB: 128}}
        assert placement.usages(rp)[MEMORY_MB] == 128
        assert _docker_limits(docker_client, uuid) == (128 * MIB, 1536)

        # Within one VCPU and the same memory, Placement is not asked again.
        generation = placement.get_provider(rp).generation
        zun.containers.update(uuid, cpu="1.8")
        assert placement.get_provider(rp).generation == generation
        assert placement.get_allocation(uuid) == {rp: {VCPU: 2, MEMORY_MB: 128}}
        zun.containers.delete(uuid, force=True)


def test_a_resize_placement_refuses_is_409_and_changes_nothing(berth_factory, docker_client):  # type: ignore[no-untyped-def]
    """The claim counts cpu as a fraction, Placement in whole VCPUs: with every VCPU
    allocated to containers of 0.1 cpu, growing one to 1.5 cpu fits the claim but not
    Placement. The refusal leaves the row, the allocation and Docker as they were."""
    proc = berth_factory("[compute]\ncpu_allocation_ratio = 1\n").start()
    zun = proc.client()
    with database_of(proc) as db, proc.http() as http:
        rp = nodes.get_compute_node(db, proc.host).rp_uuid
        placement = EmbeddedPlacement(db)
        vcpus = int(placement.get_inventory(rp)[VCPU].capacity)
        assert 2 <= vcpus <= 64, f"a node of {vcpus} VCPUs: the test needs 2 to 64"
        uuids = [_running(zun, cpu=0.1) for _ in range(vcpus)]
        assert placement.usages(rp)[VCPU] == vcpus
        target = uuids[0]
        before = (placement.get_allocation(target), _docker_limits(docker_client, target))

        r = http.patch(f"/v1/containers/{target}", json={"cpu": 1.5})
        assert r.status_code == 409, r.text
        title = r.json()["errors"][0]["title"]
        assert "no room" in title and "Placement refused 2 VCPU" in title, title

        row = containers.get_by_uuid(db, target)
        assert row.cpu == 0.1 and row.memory == "64"
        assert (placement.get_allocation(target),
                _docker_limits(docker_client, target)) == before
        assert placement.usages(rp)[VCPU] == vcpus
        for uuid in uuids:
            zun.containers.delete(uuid, force=True)


def test_a_resize_docker_refuses_gives_the_allocation_back(berth_factory, docker_client):  # type: ignore[no-untyped-def]
    """Docker refuses a memory limit below 6 MiB after the claim and Placement took
    the new value: both are given back."""
    proc = berth_factory().start()
    zun = proc.client()
    with database_of(proc) as db, proc.http() as http:
        rp = nodes.get_compute_node(db, proc.host).rp_uuid
        placement = EmbeddedPlacement(db)
        uuid = _running(zun, cpu=0.5)
        before = (placement.get_allocation(uuid), _docker_limits(docker_client, uuid))

        r = http.patch(f"/v1/containers/{uuid}", json={"memory": "4"})
        assert 400 <= r.status_code < 500, r.text
        assert containers.get_by_uuid(db, uuid).memory == "64"
        assert (placement.get_allocation(uuid), _docker_limits(docker_client, uuid)) == before
        assert before[0] == {rp: {VCPU: 1, MEMORY_MB: 64}}
        zun.containers.delete(uuid, force=True)


def test_the_audit_puts_a_drifted_allocation_right(berth_factory):  # type: ignore[no-untyped-def]
    """What a failed undo leaves in Placement (a resize given back in the row only, a
    deleted container's allocation) is put right by the agent's periodic
    audit_allocations, end to end in ``berth serve``. No failure was seen here: the
    audit's full run finds it (every 20 periodic_interval_max: 20 s here)."""
    proc = berth_factory("[DEFAULT]\nperiodic_interval_max = 1\n").start()
    zun = proc.client()
    with database_of(proc) as db:
        rp = nodes.get_compute_node(db, proc.host).rp_uuid
        placement = EmbeddedPlacement(db)
        uuid = _running(zun, cpu=0.5)
        placement.allocate(uuid, rp, {VCPU: 2, MEMORY_MB: 256}, "p", "u")
        leaked = "9d3b5f8e-3c1a-4d57-9a51-2a4f0e1c7b60"
        placement.allocate(leaked, rp, {VCPU: 1, MEMORY_MB: 32}, "p", "u")
        wait_for(lambda: placement.provider_allocations(rp) == {
                     uuid: {VCPU: 1, MEMORY_MB: 64}}, 60,
                 what="the audit to correct the allocation and release the leaked one")
        assert "no container holds any more" in proc.log_text()
        zun.containers.delete(uuid, force=True)
