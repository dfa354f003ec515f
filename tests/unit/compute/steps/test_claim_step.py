"""The claim step (``berth.compute.steps.claim``) over a real SQLite database and the
node's ``ResourceTracker`` (4 CPUs, 8192 MiB; tests/support/agent_deps.py): a claim
that fits records the container on the node, one that does not gives the one
ResourcesUnavailable wording and changes nothing, and its release writes nothing (the
Error write of the failed flow releases it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.agent_deps import HOST, agent_deps, node_database
from support.fake_runtime import FakeRuntime

from berth.common import exceptions as exc
from berth.compute import status_writes
from berth.compute.deps import AgentDeps
from berth.compute.steps.claim import Claim
from berth.compute.steps.failures import StepFailed, resources_unavailable
from berth.db import containers
from berth.db.models import Container


@pytest.fixture
def deps(tmp_path: Path) -> Iterator[AgentDeps]:
    for db in node_database(tmp_path):
        yield agent_deps(db, FakeRuntime())


def creating(deps: AgentDeps, cpu: float, host: str | None = None) -> Container:
    return containers.create(deps.db, {"status": "Creating", "project_id": "p1",
                                       "cpu": cpu, "memory": "512", "host": host})


def held(deps: AgentDeps) -> tuple[float, int]:
    cpu, memory, _ = containers.usage_on_host(deps.db, HOST)
    return cpu, memory


def test_a_claim_that_fits_records_the_container_on_the_node(deps: AgentDeps) -> None:
    row = creating(deps, 1.5)
    Claim(deps, row).acquire()
    assert containers.get_by_uuid(deps.db, row.uuid).host == HOST
    assert held(deps) == (1.5, 512)


def test_its_release_writes_nothing_and_the_error_write_releases_it(deps: AgentDeps) -> None:
    row = creating(deps, 1.5)
    step = Claim(deps, row)
    step.release()                       # without acquire: nothing
    step.acquire()
    step.release()
    step.release()
    assert held(deps) == (1.5, 512)
    status_writes.mark_error(deps.db, row.uuid, "the pull failed")
    assert held(deps) == (0.0, 0)


def test_a_claim_that_does_not_fit_is_refused_in_one_wording_and_writes_nothing(
        deps: AgentDeps) -> None:
    Claim(deps, creating(deps, 3.0)).acquire()
    row = creating(deps, 2.0)
    with pytest.raises(StepFailed) as failed:
        Claim(deps, row).acquire()
    assert isinstance(failed.value.error, exc.ResourcesUnavailable)
    assert failed.value.reason == resources_unavailable(HOST, failed.value.error.msg)
    assert "cpu: requested 2, free 1 of 4" in failed.value.reason
    assert failed.value.clear_host
    assert containers.get_by_uuid(deps.db, row.uuid).host is None
    assert held(deps) == (3.0, 512)


def test_a_claim_the_api_made_already_is_not_checked_again(deps: AgentDeps) -> None:
    # The API's placing checked the node and wrote the host with the row.
    row = creating(deps, 8.0, host=HOST)
    Claim(deps, row, held=True).acquire()
    assert held(deps) == (8.0, 512)
    with pytest.raises(StepFailed):
        Claim(deps, row).acquire()      # checked, it would not fit
