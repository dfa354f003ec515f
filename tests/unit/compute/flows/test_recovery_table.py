"""Start-up recovery (init_containers), the seed's table row by row, on a real SQLite
database and an in-memory engine (tests/support/fake_runtime.py)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support.agent_deps import HOST, agent_deps, node_database
from support.fake_runtime import FakeRuntime

from berth.compute.deps import AgentDeps
from berth.compute.flows import recovery
from berth.compute.states import Status, TaskState
from berth.db import containers, nodes
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.runtime.base import RunState


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    yield from node_database(tmp_path)


@pytest.fixture
def engine() -> FakeRuntime:
    return FakeRuntime()


@pytest.fixture
def deps(db: Database, engine: FakeRuntime) -> AgentDeps:
    return agent_deps(db, engine)


def row(db: Database, status: str, task: str | None = None, container_id: str | None = None,
        host: str | None = HOST, cpu: float = 1.0, **extra: Any):  # type: ignore[no-untyped-def]
    return containers.create(db, dict(project_id="p1", status=status, task_state=task,
                                      container_id=container_id, host=host, cpu=cpu,
                                      memory="256", **extra))


def cpu_used(db: Database) -> float:
    return float(nodes.get_compute_node(db, HOST).cpu_used or 0.0)


# -- interrupted creates ----------------------------------------------------------------------

def test_creating_row_without_task_becomes_error_and_releases_its_claim(
        db: Database, deps: AgentDeps) -> None:
    kept = row(db, Status.RUNNING, container_id=None, cpu=0.5)
    r = row(db, Status.CREATING, cpu=2.0)
    deps.tracker.publish_usage()
    assert cpu_used(db) == 2.5

    report = recovery.init_containers(deps)

    after = containers.get_by_uuid(db, r.uuid)
    assert after.status == Status.ERROR
    assert after.status_reason.startswith("Container failed to create correctly")
    assert "before it began the create" in after.status_reason
    assert after.task_state is None and after.task_deadline is None
    assert cpu_used(db) == 0.5            # only the Running row still holds resources
    assert containers.get_by_uuid(db, kept.uuid).status == Status.RUNNING
    assert report.failed_creates == 1 and report.untouched == 1 and report.failures == 0


@pytest.mark.parametrize("task", [TaskState.CONTAINER_CREATING, TaskState.IMAGE_PULLING,
                                  TaskState.NETWORK_ATTACHING, TaskState.NETWORK_DETACHING,
                                  TaskState.SG_ADDING, TaskState.SG_REMOVING])
def test_every_create_like_task_becomes_error(db: Database, deps: AgentDeps, task: str) -> None:
    # Status Created with a create-like task too: the task decides, not the status.
    r = row(db, Status.CREATED, task=task, task_deadline=utcnow())
    report = recovery.init_containers(deps)
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.status, after.task_state, after.task_deadline) == (Status.ERROR, None, None)
    assert f"stopped during {task}" in after.status_reason
    assert report.failed_creates == 1


def test_container_created_before_the_id_was_saved_is_found_by_label_and_removed(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = row(db, Status.CREATING, task=TaskState.CONTAINER_CREATING)   # no container_id yet
    cid = engine.add(r.uuid, HOST, RunState.CREATED, started=False)
    report = recovery.init_containers(deps)
    assert cid not in engine.containers
    after = containers.get_by_uuid(db, r.uuid)
    assert after.status == Status.ERROR and after.container_id is None
    assert report.failed_creates == 1 and report.orphans_removed == 0


def test_container_without_the_uuid_label_is_found_by_name_and_removed(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = row(db, Status.CREATING, task=TaskState.CONTAINER_CREATING)
    # A container named zun-<uuid> but missing berth's uuid label: list() cannot see it.
    cid = engine.add(r.uuid, HOST, RunState.CREATED, started=False,
                     labels={"berth.host": HOST})
    recovery.init_containers(deps)
    assert cid not in engine.containers
    assert containers.get_by_uuid(db, r.uuid).status == Status.ERROR


def test_container_id_already_saved_is_removed(db: Database, deps: AgentDeps,
                                               engine: FakeRuntime) -> None:
    r = row(db, Status.CREATING, task=TaskState.CONTAINER_CREATING)
    cid = engine.add(r.uuid, HOST, RunState.CREATED, started=False)
    containers.update_(db, r.uuid, {"container_id": cid})
    recovery.init_containers(deps)
    assert cid not in engine.containers
    assert ("delete", cid) in engine.calls


def test_creating_row_placed_after_the_agent_started_is_left_for_its_cast(
        db: Database, deps: AgentDeps) -> None:
    started_at = utcnow() - dt.timedelta(seconds=5)
    r = row(db, Status.CREATING)              # created_at = now, after started_at
    report = recovery.init_containers(deps, started_at=started_at)
    assert containers.get_by_uuid(db, r.uuid).status == Status.CREATING
    assert report.untouched == 1 and report.failed_creates == 0


# -- interrupted deletes ----------------------------------------------------------------------

@pytest.mark.parametrize("status, task", [(Status.DELETING, None),
                                          (Status.STOPPED, TaskState.CONTAINER_DELETING),
                                          (Status.DELETING, TaskState.CONTAINER_DELETING)])
def test_interrupted_delete_is_finished_with_force(db: Database, deps: AgentDeps,
                                                   engine: FakeRuntime, status: str,
                                                   task: str | None) -> None:
    r = row(db, status, task=task)
    cid = engine.add(r.uuid, HOST, RunState.RUNNING)
    containers.update_(db, r.uuid, {"container_id": cid})
    report = recovery.init_containers(deps)
    assert containers.find_by_uuid(db, r.uuid) is None
    assert cid not in engine.containers
    assert report.deleted == 1


def test_interrupted_delete_whose_container_is_gone_still_removes_the_row(
        db: Database, deps: AgentDeps) -> None:
    r = row(db, Status.DELETING, task=TaskState.CONTAINER_DELETING, container_id="gone" * 16)
    report = recovery.init_containers(deps)
    assert containers.find_by_uuid(db, r.uuid) is None
    assert report.deleted == 1 and report.failures == 0


def test_interrupted_delete_before_the_id_was_saved_leaves_no_container(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    # Deleted with force while its create was between docker create and the DB write.
    r = row(db, Status.DELETING)
    cid = engine.add(r.uuid, HOST, RunState.CREATED, started=False)
    report = recovery.init_containers(deps)
    assert containers.find_by_uuid(db, r.uuid) is None
    assert cid not in engine.containers
    assert report.deleted == 1 and report.orphans_removed == 1


# -- interrupted actions ----------------------------------------------------------------------

def test_interrupted_stop_is_run_again(db: Database, deps: AgentDeps,
                                       engine: FakeRuntime) -> None:
    r = row(db, Status.RUNNING, task=TaskState.CONTAINER_STOPPING, task_deadline=utcnow())
    cid = engine.add(r.uuid, HOST, RunState.RUNNING)
    containers.update_(db, r.uuid, {"container_id": cid})
    report = recovery.init_containers(deps)
    after = containers.get_by_uuid(db, r.uuid)
    assert engine.status_of(cid) == RunState.EXITED
    assert (after.status, after.task_state, after.task_deadline) == (Status.STOPPED, None, None)
    assert report.retried == 1


@pytest.mark.parametrize("status", [Status.CREATED, Status.CREATING])
def test_interrupted_start_is_run_again(db: Database, deps: AgentDeps,
                                        engine: FakeRuntime, status: str) -> None:
    # Creating: a create with run stopped after recording its Docker container and
    # handing its task to the start (flows.create._create)
    r = row(db, status, task=TaskState.CONTAINER_STARTING)
    cid = engine.add(r.uuid, HOST, RunState.CREATED, started=False)
    containers.update_(db, r.uuid, {"container_id": cid})
    report = recovery.init_containers(deps)
    after = containers.get_by_uuid(db, r.uuid)
    assert engine.status_of(cid) == RunState.RUNNING
    assert (after.status, after.task_state) == (Status.RUNNING, None)
    assert report.retried == 1


def test_interrupted_stop_whose_container_is_gone_does_not_crash_recovery(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    gone = row(db, Status.RUNNING, task=TaskState.CONTAINER_STOPPING, container_id="x" * 64)
    nxt = row(db, Status.CREATING)
    report = recovery.init_containers(deps)
    after = containers.get_by_uuid(db, gone.uuid)
    assert after.task_state is None
    assert after.status == Status.ERROR and "No such container" in after.status_reason
    assert containers.get_by_uuid(db, nxt.uuid).status == Status.ERROR   # next row done
    assert report.failures == 0


@pytest.mark.parametrize("task, flow", [(TaskState.CONTAINER_REBOOTING, "reboot_container"),
                                        (TaskState.CONTAINER_PAUSING, "pause_container"),
                                        (TaskState.CONTAINER_UNPAUSING, "unpause_container")])
def test_action_with_a_flow_is_rerun_through_it(db: Database, deps: AgentDeps,
                                                monkeypatch: pytest.MonkeyPatch, task: str,
                                                flow: str) -> None:
    seen: list[tuple[Any, ...]] = []

    def fake(d: AgentDeps, ctx: Any, uuid: str, **kw: Any) -> None:
        seen.append((uuid, kw, containers.get_by_uuid(d.db, uuid).task_state))

    fake.__name__ = flow
    monkeypatch.setitem(recovery._RETRIES, task, (fake, flow == "reboot_container"))
    r = row(db, Status.RUNNING, task=task)
    report = recovery.init_containers(deps)
    # The task was cleared before the flow ran (the flow sets its own).
    expected_kw = {"timeout": None} if flow == "reboot_container" else {}
    assert seen == [(r.uuid, expected_kw, None)]
    assert report.retried == 1


@pytest.mark.parametrize("task", [TaskState.CONTAINER_REBOOTING, TaskState.CONTAINER_PAUSING,
                                  TaskState.CONTAINER_UNPAUSING, TaskState.CONTAINER_KILLING])
def test_action_without_a_flow_clears_the_task_and_reads_docker(
        db: Database, deps: AgentDeps, engine: FakeRuntime,
        monkeypatch: pytest.MonkeyPatch, task: str) -> None:
    if task != TaskState.CONTAINER_KILLING:
        monkeypatch.setitem(recovery._RETRIES, task, None)
    r = row(db, Status.RUNNING, task=task)
    cid = engine.add(r.uuid, HOST, RunState.PAUSED)
    containers.update_(db, r.uuid, {"container_id": cid})
    report = recovery.init_containers(deps)
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.status, after.task_state) == (Status.PAUSED, None)
    assert report.refreshed == 1
    assert engine.calls == []               # nothing was sent to the engine (no kill resent)


def test_restarting_row_without_a_task_reruns_the_reboot(db: Database, deps: AgentDeps,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The API set Restarting, then the agent died before its worker took the cast."""
    seen: list[str] = []

    def reboot_container(d: AgentDeps, ctx: Any, uuid: str, timeout: int | None) -> None:
        seen.append(uuid)

    monkeypatch.setitem(recovery._RETRIES, TaskState.CONTAINER_REBOOTING,
                        (reboot_container, True))
    r = row(db, Status.RESTARTING)
    recent = row(db, Status.RESTARTING)     # changed after the agent started: left alone
    started_at = utcnow() - dt.timedelta(hours=1)
    containers.update_(db, r.uuid, {"updated_at": started_at - dt.timedelta(minutes=1)})
    report = recovery.init_containers(deps, started_at=started_at)
    assert seen == [r.uuid]
    assert recent.uuid not in seen
    assert report.retried == 1 and report.untouched == 1


def test_rebuilding_row_without_a_task_becomes_error(db: Database, deps: AgentDeps) -> None:
    r = row(db, Status.REBUILDING)
    report = recovery.init_containers(deps)
    after = containers.get_by_uuid(db, r.uuid)
    assert after.status == Status.ERROR
    assert after.status_reason.startswith("the rebuild was interrupted")
    assert report.failed_tasks == 1


def test_other_interrupted_task_becomes_error_with_a_reason(db: Database, deps: AgentDeps,
                                                            engine: FakeRuntime) -> None:
    r = row(db, Status.REBUILDING, task=TaskState.CONTAINER_REBUILDING)
    report = recovery.init_containers(deps)
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.status, after.task_state) == (Status.ERROR, None)
    assert after.status_reason.startswith("container_rebuilding was interrupted")
    assert report.failed_tasks == 1


# -- resume_container_state -------------------------------------------------------------------

@pytest.mark.parametrize("resume", [True, False])
def test_running_row_found_stopped_is_started_only_with_resume(
        db: Database, engine: FakeRuntime, resume: bool) -> None:
    deps = agent_deps(db, engine, resume_container_state=resume)
    r = row(db, Status.RUNNING)
    cid = engine.add(r.uuid, HOST, RunState.EXITED)
    up = row(db, Status.RUNNING)
    up_cid = engine.add(up.uuid, HOST, RunState.RUNNING)
    containers.update_(db, r.uuid, {"container_id": cid})
    containers.update_(db, up.uuid, {"container_id": up_cid})
    report = recovery.init_containers(deps)
    assert engine.status_of(cid) == (RunState.RUNNING if resume else RunState.EXITED)
    assert ("start", up_cid) not in engine.calls
    assert report.resumed == (1 if resume else 0)


def test_resume_skips_a_running_row_whose_container_is_gone(db: Database,
                                                            engine: FakeRuntime) -> None:
    deps = agent_deps(db, engine, resume_container_state=True)
    r = row(db, Status.RUNNING, container_id="y" * 64)
    report = recovery.init_containers(deps)
    assert containers.get_by_uuid(db, r.uuid).status == Status.RUNNING   # the sync's job
    assert report.untouched == 1 and report.failures == 0


# -- containers no row can reach, and failures -------------------------------------------------

def test_unreachable_containers_of_this_host_are_removed_and_others_kept(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    no_row = engine.add("6f1c1c52-0000-4000-8000-000000000001", HOST)
    other_host = engine.add("6f1c1c52-0000-4000-8000-000000000002", "node2")
    undone = row(db, Status.ERROR, host=None)
    undone_cid = engine.add(undone.uuid, HOST, RunState.CREATED, started=False)
    kept = row(db, Status.RUNNING)
    kept_cid = engine.add(kept.uuid, HOST)
    containers.update_(db, kept.uuid, {"container_id": kept_cid})
    kept_err = row(db, Status.ERROR)       # e.g. a failed start: keeps its container
    kept_err_cid = engine.add(kept_err.uuid, HOST, RunState.CREATED, started=False)
    containers.update_(db, kept_err.uuid, {"container_id": kept_err_cid})

    report = recovery.init_containers(deps)

    assert no_row not in engine.containers and undone_cid not in engine.containers
    assert {other_host, kept_cid, kept_err_cid} <= set(engine.containers)
    assert report.orphans_removed == 2


def test_a_node_back_from_the_dead_removes_its_copies_of_evacuated_containers(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    """The API moved these rows to node2 while this node was down (berth.api.evacuation):
    one already rebuilt there, one not yet (no Docker container). This node's copies are
    removed before anything could start them again, and the rows are not written. A
    row taken over by node2 from this very Docker container (a renamed node) is left."""
    rebuilt = row(db, Status.RUNNING, host="node2", container_id="n2" * 32)
    pending = row(db, Status.REBUILDING, host="node2", container_id=None)
    copies = [engine.add(r.uuid, HOST) for r in (rebuilt, pending)]
    taken = row(db, Status.RUNNING, host="node2")
    taken_cid = engine.add(taken.uuid, HOST)
    containers.update_(db, taken.uuid, {"container_id": taken_cid})
    before = [containers.get_by_uuid(db, r.uuid) for r in (rebuilt, pending)]

    report = recovery.init_containers(deps)

    assert not set(copies) & set(engine.containers)
    assert taken_cid in engine.containers
    assert report.orphans_removed == 2
    assert [containers.get_by_uuid(db, r.uuid).updated_at for r in (rebuilt, pending)] == \
        [b.updated_at for b in before]
    assert containers.get_by_uuid(db, pending.uuid).host == "node2"


def test_one_failing_row_is_counted_and_the_next_is_recovered(
        db: Database, engine: FakeRuntime) -> None:
    deps = agent_deps(db, engine, resume_container_state=True)
    bad = row(db, Status.RUNNING, container_id="z" * 64)
    engine.broken["z" * 64] = ValueError("engine answered nonsense")
    nxt = row(db, Status.CREATING)
    report = recovery.init_containers(deps)
    assert report.failures == 1 and report.failed_creates == 1
    assert containers.get_by_uuid(db, bad.uuid).status == Status.RUNNING
    assert containers.get_by_uuid(db, nxt.uuid).status == Status.ERROR


def test_rows_of_other_hosts_are_not_touched(db: Database, deps: AgentDeps) -> None:
    r = row(db, Status.CREATING, host="node2")
    report = recovery.init_containers(deps)
    assert containers.get_by_uuid(db, r.uuid).status == Status.CREATING
    assert report.summary().startswith("failed creates 0")


# -- Placement allocations ----------------------------------------------------------------------

def with_placement(db: Database, engine: FakeRuntime):  # type: ignore[no-untyped-def]
    from berth.placement.base import Inventory
    from berth.placement.embedded import EmbeddedPlacement

    placement = EmbeddedPlacement(db)
    node = nodes.get_compute_node(db, HOST)
    rp = node.rp_uuid or node.uuid
    placement.ensure_provider(rp, HOST)
    placement.set_inventory(rp, {"VCPU": Inventory(total=4, allocation_ratio=16.0),
                                 "MEMORY_MB": Inventory(total=8192)})
    deps = agent_deps(db, engine, placement=placement)
    return deps, placement, rp


def test_interrupted_create_releases_its_placement_allocation(
        db: Database, engine: FakeRuntime) -> None:
    deps, placement, rp = with_placement(db, engine)
    r = row(db, Status.CREATING, task=TaskState.CONTAINER_CREATING)
    kept = row(db, Status.RUNNING)
    placement.allocate(r.uuid, rp, {"VCPU": 1, "MEMORY_MB": 256}, "p1", None)
    placement.allocate(kept.uuid, rp, {"VCPU": 1, "MEMORY_MB": 256}, "p1", None)

    recovery.init_containers(deps)

    assert placement.get_allocation(r.uuid) == {}
    assert placement.get_allocation(kept.uuid) == {rp: {"VCPU": 1, "MEMORY_MB": 256}}
    assert placement.usages(rp)["VCPU"] == 1


def test_failed_create_left_holding_an_allocation_is_released_at_start_up(
        db: Database, engine: FakeRuntime) -> None:
    deps, placement, rp = with_placement(db, engine)
    # Failed by the API while the agent was down: Error, no container, allocation held.
    failed = row(db, Status.ERROR)
    failed_start = row(db, Status.ERROR, container_id="s" * 64)   # keeps its allocation
    placement.allocate(failed.uuid, rp, {"VCPU": 1}, "p1", None)
    placement.allocate(failed_start.uuid, rp, {"VCPU": 1}, "p1", None)

    report = recovery.init_containers(deps)

    assert placement.get_allocation(failed.uuid) == {}
    assert placement.get_allocation(failed_start.uuid) != {}
    assert report.allocations_released == 1


# -- resizes killed half-way (found by tests/reliability's crash points) -------------------

def _with_limits(engine: FakeRuntime, cid: str, memory: int, shares: int) -> None:
    engine.containers[cid] = replace(engine.containers[cid], memory_mib=memory,
                                     cpu_shares=shares)


def test_a_resize_killed_after_its_claim_is_finished_in_docker(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    """The row (the claim) says 256 MiB and 1 cpu; Docker still has the old 128 MiB and
    0.5 cpu: the agent died between the claim and the docker update."""
    r = row(db, Status.RUNNING)
    cid = engine.add(r.uuid, HOST, RunState.RUNNING)
    containers.update_(db, r.uuid, {"container_id": cid})
    _with_limits(engine, cid, 128, 512)
    report = recovery.init_containers(deps)
    assert report.resizes_finished == 1
    assert (engine.containers[cid].memory_mib, engine.containers[cid].cpu_shares) == (256, 1024)
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.memory, after.cpu, after.status) == ("256", 1.0, Status.RUNNING)
    assert recovery.init_containers(deps).resizes_finished == 0       # nothing left to do


def test_limits_that_agree_with_the_row_are_left_alone(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = row(db, Status.RUNNING)
    cid = engine.add(r.uuid, HOST, RunState.RUNNING)
    containers.update_(db, r.uuid, {"container_id": cid})
    _with_limits(engine, cid, 256, 1024)
    assert recovery.init_containers(deps).resizes_finished == 0
    assert ("update", cid) not in engine.calls
