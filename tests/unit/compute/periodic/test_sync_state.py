"""sync_container_state on a real SQLite database and the in-memory engine
(tests/support/fake_runtime.py): what it reads, what it copies, what it skips, and
what it does with vanished containers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.flows import sync
from berth.compute.periodic import sync_state
from berth.compute.periodic.sync_state import needs_inspect, sync_container_state
from berth.compute.states import Status
from berth.db import actions, containers, nodes
from berth.db.engine import Database
from berth.db.models import Container
from berth.runtime import base as rt
from berth.runtime.base import RunState

SYNC_HOST = "node1"
RowFactory = Callable[..., Container]
Engine = Any      # conftest.CountingRuntime: FakeRuntime + inspected, listed, set_state()


def get(db: Database, r: Container) -> Container:
    return containers.get_by_uuid(db, r.uuid)


def test_reads_only_this_hosts_rows_and_one_listing(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    mine = [sync_row(Status.RUNNING, RunState.RUNNING) for _ in range(3)]
    others = [sync_row(Status.RUNNING, host="other-host", container_id=f"gone{i}")
              for i in range(5)]
    before = {o.uuid: get(sync_db, o).updated_at for o in others}

    report = sync_container_state(sync_deps)

    assert report.rows_read == len(mine)
    assert sync_engine.listed == [None]
    assert sync_engine.inspected == []                # every listed state agrees with its row
    assert report.outcomes == {"unchanged": 3}
    for o in others:
        after = get(sync_db, o)
        assert (after.status, after.status_reason, after.host) == (Status.RUNNING, None,
                                                                   "other-host")
        assert after.updated_at == before[o.uuid]


def test_copies_the_status_of_a_container_that_stopped_and_skips_busy_rows(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    stopped = sync_row(Status.RUNNING, RunState.EXITED)
    busy = sync_row(Status.RUNNING, RunState.EXITED, task_state="container_stopping")
    creating = sync_row(Status.CREATING, RunState.EXITED)
    deleting = sync_row(Status.DELETING, RunState.EXITED)

    report = sync_container_state(sync_deps)

    assert get(sync_db, stopped).status == Status.STOPPED
    assert get(sync_db, busy).status == Status.RUNNING
    assert get(sync_db, creating).status == Status.CREATING
    assert get(sync_db, deleting).status == Status.DELETING
    assert sync_engine.inspected == [get(sync_db, stopped).container_id]
    assert report.outcomes == {"updated": 1, "skipped": 3}


def test_a_container_being_removed_is_left_for_its_destroy_event(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    r = sync_row(Status.RUNNING, RunState.RUNNING)
    sync_engine.set_state(r.container_id, RunState.REMOVING)
    assert sync_container_state(sync_deps).outcomes == {"removing": 1}
    assert get(sync_db, r).status == Status.RUNNING


def test_vanished_containers_become_deleted_error_or_rebuilt(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine, sync_row: RowFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    rebuilt: list[tuple[str, bool, str]] = []

    def fake_rebuild(deps: AgentDeps, ctx: RequestContext, uuid: str, run: bool,
                     judged: object = None) -> bool:
        rebuilt.append((uuid, run, ctx.request_id))
        return True

    monkeypatch.setattr(sync.rebuild, "rebuild_container", fake_rebuild)
    removed = sync_row(Status.STOPPED, container_id="c-auto", auto_remove=True)
    lost = sync_row(Status.RUNNING, container_id="c-lost")
    heal_running = sync_row(Status.RUNNING, container_id="c-h1", auto_heal=True,
                       user_id="alice")
    heal_stopped = sync_row(Status.STOPPED, container_id="c-h2", auto_heal=True)
    paused = sync_row(Status.PAUSED, container_id="c-p", auto_heal=True)   # not rebuildable
    never = sync_row(Status.ERROR, container_id=None)

    report = sync_container_state(sync_deps)

    assert get(sync_db, removed).status == Status.DELETED
    after = get(sync_db, lost)
    assert after.status == Status.ERROR
    assert after.status_reason.startswith("No such container: c-lost in docker")
    assert get(sync_db, paused).status == Status.ERROR
    assert get(sync_db, never).status == Status.ERROR and get(sync_db, never).status_reason is None
    assert sorted((u, run) for u, run, _ in rebuilt) == sorted(
        [(heal_running.uuid, True), (heal_stopped.uuid, False)])
    action = actions.list_actions(sync_db, heal_running.uuid)[0]
    assert (action.action, action.project_id, action.user_id) == ("rebuild", "p1", "alice")
    assert action.request_id == next(r for u, _, r in rebuilt if u == heal_running.uuid)
    assert report.outcomes == {"deleted": 1, "error": 2, "healed": 2, "skipped": 1}

    # An Error already saying so is not rewritten on the next run.
    stamp = get(sync_db, lost).updated_at
    assert sync_container_state(sync_deps).outcomes.get("error") is None
    assert get(sync_db, lost).updated_at == stamp


def test_a_local_container_of_a_row_on_a_down_host_is_taken_over(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    nodes.report_service_up(sync_db, "live-host", nodes.COMPUTE_BINARY, "nova")
    moved = sync_row(Status.RUNNING, host="old-name")
    sync_engine.containers.clear()
    cid = sync_engine.add(moved.uuid, "old-name", RunState.EXITED)
    containers.update_(sync_db, moved.uuid, {"container_id": cid})
    shared = sync_row(Status.RUNNING, host="live-host")
    sync_engine.add(shared.uuid, "live-host", RunState.RUNNING)
    sync_engine.add("uuid-of-another-berth", "elsewhere", RunState.RUNNING)

    report = sync_container_state(sync_deps)

    after = get(sync_db, moved)
    assert (after.host, after.status) == (SYNC_HOST, Status.STOPPED)
    assert get(sync_db, shared).host == "live-host"
    assert report.rehomed == 1
    assert report.rows_read == 2           # the two rows found by the local containers' uuids


def test_a_stale_copy_of_an_evacuated_container_is_removed_and_its_row_left_alone(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    """This node was down; the API moved the row to another node, which made a new
    Docker container. The copy labelled for this node is removed, the row is not
    taken back, even when the other node is down now too."""
    evacuated = sync_row(Status.RUNNING, host="rescuer", container_id="new-on-rescuer")
    sync_engine.containers.clear()
    stale = sync_engine.add(evacuated.uuid, SYNC_HOST, RunState.RUNNING)
    before = get(sync_db, evacuated)

    report = sync_container_state(sync_deps)

    assert stale not in {c.id for c in sync_engine.list()}
    assert report.orphans_removed == 1 and report.rehomed == 0
    after = get(sync_db, evacuated)
    assert (after.host, after.container_id, after.status, after.updated_at) == (
        "rescuer", "new-on-rescuer", Status.RUNNING, before.updated_at)


def test_a_row_moved_to_a_new_docker_container_is_not_taken_over(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    """A local container labelled for a down host, whose row refers to another Docker
    container, is not a renamed node's: the row stays where it is."""
    row = sync_row(Status.RUNNING, host="down-host", container_id="elsewhere")
    sync_engine.containers.clear()
    sync_engine.add(row.uuid, "down-host", RunState.RUNNING)
    report = sync_container_state(sync_deps)
    assert report.rehomed == 0
    assert get(sync_db, row).host == "down-host"


def test_one_failing_row_does_not_stop_the_run(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    bad = sync_row(Status.RUNNING, RunState.EXITED)
    good = sync_row(Status.RUNNING, RunState.EXITED)
    sync_engine.broken[bad.container_id] = rt.RuntimeUnavailable(reason="timeout")
    report = sync_container_state(sync_deps)
    assert report.failed == 1
    assert get(sync_db, bad).status == Status.RUNNING
    assert get(sync_db, good).status == Status.STOPPED


def test_a_failed_listing_fails_the_run_without_writing(
        sync_db: Database, sync_deps: AgentDeps, sync_row: RowFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    r = sync_row(Status.RUNNING, container_id="c1")

    def down(host: str | None = None) -> list[rt.RuntimeContainer]:
        raise rt.RuntimeUnavailable(reason="no socket")

    monkeypatch.setattr(sync_deps.runtime, "list", down)
    with pytest.raises(rt.RuntimeUnavailable):
        sync_container_state(sync_deps)
    assert get(sync_db, r).status == Status.RUNNING


@pytest.mark.parametrize(("status", "listed", "expected"), [
    (Status.RUNNING, RunState.RUNNING, False),
    (Status.STOPPED, RunState.EXITED, False),
    (Status.CREATED, RunState.CREATED, False),
    (Status.RUNNING, RunState.EXITED, True),
    (Status.ERROR, RunState.EXITED, True),
    (Status.RUNNING, RunState.UNKNOWN, True),
])
def test_needs_inspect_when_the_listing_disagrees(status: str, listed: RunState,
                                                  expected: bool) -> None:
    r = Container(uuid="u", status=status)
    seen = rt.RuntimeContainer(id="c", name="n", uuid="u", image="i",
                               state=rt.ContainerState(status=listed))
    assert needs_inspect(r, seen) is expected
    assert sync_state.LISTED_STATUS.get(RunState.REMOVING) is None


def test_a_container_of_this_host_without_a_row_is_removed_and_counted(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    kept = sync_row(Status.RUNNING, RunState.RUNNING)
    orphan = sync_engine.add("0b7c3e1a-5d2f-4a6b-8c9d-1e2f3a4b5c6d", SYNC_HOST, RunState.RUNNING)
    foreign = sync_engine.add("uuid-of-another-berth", "elsewhere", RunState.RUNNING)

    report = sync_container_state(sync_deps)

    ids = {c.id for c in sync_engine.list()}
    assert orphan not in ids
    assert {kept.container_id, foreign} <= ids
    assert report.orphans_removed == 1
    assert "1 without a row removed" in report.summary()


def test_orphans_are_only_this_hosts_containers_whose_row_does_not_exist() -> None:
    def seen(uuid: str, host: str) -> rt.RuntimeContainer:
        return rt.RuntimeContainer(id=f"id-{uuid}", name=uuid, uuid=uuid, image="i",
                                   state=None, labels={rt.LABEL_HOST: host})

    listed = [seen("mine-gone", "h"), seen("mine-elsewhere", "h"), seen("theirs", "x"),
              seen("own-row", "h")]
    found = sync_state.orphans("h", listed, {"mine-gone", "mine-elsewhere", "theirs"},
                               {"mine-elsewhere"})
    assert [c.uuid for c in found] == ["mine-gone"]
