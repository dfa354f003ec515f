"""ResourceTracker.claim_update: resizing a placed container's claim (PATCH cpu/memory)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.common import exceptions as exc
from berth.compute.claims import Capacity, ResourceTracker
from berth.db import containers, migrate, nodes
from berth.db.engine import Database

HOST = "node1"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    url = f"sqlite:///{tmp_path / 'berth.sqlite'}"
    migrate.upgrade(url)
    database = Database(url)
    nodes.upsert_compute_node(database, HOST, {"cpus": 2, "mem_total": 2048})
    yield database
    database.dispose()


@pytest.fixture
def tracker(db: Database) -> ResourceTracker:
    t = ResourceTracker(db, HOST)
    t.set_capacity(Capacity(cpus=2.0, memory_mib=1024))
    return t


def placed(db: Database, cpu: float, memory: str) -> str:
    return containers.create(db, {"status": "Running", "host": HOST, "cpu": cpu,
                                  "memory": memory}).uuid


def test_growing_within_the_room_left_writes_the_new_values_and_usage(db, tracker) -> None:
    uuid = placed(db, 1.0, "512")
    placed(db, 0.5, "256")
    tracker.claim_update(uuid, 1.5, "768")          # its own old claim does not count
    row = containers.get_by_uuid(db, uuid)
    assert (row.cpu, row.memory) == (1.5, "768")
    node = nodes.get_compute_node(db, HOST)
    assert (node.cpu_used, node.mem_used) == (2.0, 1024)


def test_growing_beyond_the_room_left_is_refused_and_the_row_kept(db, tracker) -> None:
    uuid = placed(db, 1.0, "512")
    placed(db, 0.5, "512")
    with pytest.raises(exc.ResourcesUnavailable) as info:
        tracker.claim_update(uuid, 1.0, "600")
    assert "memory: requested 600 MiB, free 512 MiB of 1024 MiB" in info.value.msg
    row = containers.get_by_uuid(db, uuid)
    assert (row.cpu, row.memory) == (1.0, "512")


def test_shrinking_always_fits(db, tracker) -> None:
    uuid = placed(db, 2.0, "1024")
    tracker.claim_update(uuid, 0.5, "128")
    assert containers.get_by_uuid(db, uuid).memory == "128"


def test_no_capacity_reported_yet_is_refused(db) -> None:
    uuid = placed(db, 1.0, "512")
    with pytest.raises(exc.ResourcesUnavailable):
        ResourceTracker(db, HOST).claim_update(uuid, 1.0, "256")


def test_a_resize_the_project_quota_cannot_hold_is_refused_in_the_claim(db, tracker) -> None:
    """The agent checks the project's quota again in the claim's own transaction
    (issue 24 item 1: the API's check alone let concurrent resizes exceed it)."""
    from berth.compute.capsules.docker.engine import DockerCapsules
    from berth.compute.deps import AgentDeps, AgentSettings
    from berth.compute.flows import actions
    from berth.db import quotas as db_quotas
    from berth.quota import QuotaEnforcer

    uuid = containers.create(db, {"status": "Running", "host": HOST, "cpu": 0.5,
                                  "memory": "256", "project_id": "p1",
                                  "container_id": "c1"}).uuid
    containers.create(db, {"status": "Running", "host": HOST, "cpu": 0.5, "memory": "256",
                           "project_id": "p1"})
    db_quotas.set_project_limits(db, "p1", {"cpu": 1, "memory": 600})
    deps = AgentDeps(db=db, runtime=None, tracker=tracker,  # type: ignore[arg-type]
                     settings=AgentSettings(host=HOST), capsules=DockerCapsules(),
                     quota=QuotaEnforcer())
    with pytest.raises(exc.OverQuota) as refused:
        actions.update_container(deps, uuid, {"cpu": 0.75})
    assert refused.value.kwargs["overs"] == ["cpu"]
    with pytest.raises(exc.OverQuota):
        actions.update_container(deps, uuid, {"memory": 400})
    row = containers.get_by_uuid(db, uuid)
    assert (row.cpu, row.memory) == (0.5, "256")          # the claim was not written
