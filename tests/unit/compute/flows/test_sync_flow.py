"""sync_container (what one PLEG event does to one row) on a real SQLite database and
the in-memory sync_engine."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.flows import sync
from berth.compute.flows.sync import Outcome, describe, sync_container
from berth.compute.states import Status
from berth.db import actions, containers
from berth.db.containers import Expect
from berth.db.engine import Database
from berth.db.models import Container
from berth.runtime import base as rt
from berth.runtime.base import RunState

RowFactory = Callable[..., Container]
Engine = Any      # conftest.CountingRuntime


def get(db: Database, r: Container) -> Container:
    return containers.get_by_uuid(db, r.uuid)


def test_a_dead_container_makes_its_row_stopped_with_the_oom_reason(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    r = sync_row(Status.RUNNING, RunState.EXITED)
    c = sync_engine.containers[r.container_id]
    assert c.state is not None
    sync_engine.containers[r.container_id] = replace(
        c, state=replace(c.state, exit_code=137, oom_killed=True))
    assert sync_container(sync_deps, r.uuid) is Outcome.UPDATED
    after = get(sync_db, r)
    assert after.status == Status.STOPPED
    assert after.status_reason.startswith("OOMKilled")
    assert sync_container(sync_deps, r.uuid) is Outcome.UNCHANGED


def test_rows_that_are_not_ours_or_busy_are_not_inspected(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    other = sync_row(Status.RUNNING, RunState.EXITED, host="other-host")
    busy = sync_row(Status.RUNNING, RunState.EXITED, task_state="container_stopping")
    deleted = sync_row(Status.DELETED, RunState.EXITED)
    for r in (other, busy, deleted):
        assert sync_container(sync_deps, r.uuid) is Outcome.SKIPPED
    assert sync_container(sync_deps, "not-a-row-of-ours") is Outcome.SKIPPED
    assert sync_engine.inspected == []
    assert get(sync_db, other).status == Status.RUNNING


def test_a_container_being_removed_waits_for_its_destroy_event(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    r = sync_row(Status.RUNNING, RunState.RUNNING)
    sync_engine.set_state(r.container_id, RunState.REMOVING)
    assert sync_container(sync_deps, r.uuid) is Outcome.REMOVING
    assert get(sync_db, r).status == Status.RUNNING
    del sync_engine.containers[r.container_id]
    assert sync_container(sync_deps, r.uuid) is Outcome.ERROR
    assert get(sync_db, r).status_reason.startswith(f"No such container: {r.container_id} in docker")


def test_a_task_that_began_during_the_inspect_wins(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    r = sync_row(Status.RUNNING, RunState.EXITED)
    real_inspect = sync_engine.inspect

    def inspect_while_a_start_begins(cid: str) -> rt.RuntimeContainer:
        containers.update_(sync_db, r.uuid, {"task_state": "container_starting"})
        return real_inspect(cid)

    monkeypatch.setattr(sync_engine, "inspect", inspect_while_a_start_begins)
    assert sync_container(sync_deps, r.uuid) is Outcome.SKIPPED
    assert get(sync_db, r).status == Status.RUNNING


def test_engine_errors_propagate_for_a_retry(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    r = sync_row(Status.RUNNING, RunState.EXITED)
    sync_engine.broken[r.container_id] = rt.RuntimeUnavailable(reason="timeout")
    with pytest.raises(rt.RuntimeUnavailable):
        sync_container(sync_deps, r.uuid)


def test_a_heal_judged_on_a_stale_read_does_nothing(
        sync_db: Database, sync_deps: AgentDeps, sync_row: RowFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The event path and the periodic sync may both find a container vanished and
    queue a heal each: the second runs after the first rebuilt the container, sees
    another Docker container on the row, and leaves it."""
    r = sync_row(Status.RUNNING, container_id="gone", auto_heal=True)
    rebuilt: list[str] = []

    def rebuild_as_new(deps: AgentDeps, ctx: object, uuid: str, run: bool,
                       judged: object = None) -> bool:
        rebuilt.append(uuid)
        containers.update_(sync_db, uuid, {"container_id": "new"})
        return True

    monkeypatch.setattr(sync.rebuild, "rebuild_container", rebuild_as_new)
    assert sync_container(sync_deps, r.uuid) is Outcome.HEALED
    assert sync.heal(sync_deps, r.uuid, "gone") is Outcome.SKIPPED
    assert rebuilt == [r.uuid]


def test_a_heal_queued_behind_a_delete_does_nothing(
        sync_db: Database, sync_deps: AgentDeps, sync_row: RowFactory) -> None:
    """Issue 24 item 5: the API wrote Deleting after the sync judged the container
    vanished; the heal, in the container's turn, must not take the row over (the
    real rebuild flow: no fake)."""
    r = sync_row(Status.RUNNING, container_id="gone", auto_heal=True)
    containers.update_(sync_db, r.uuid, {"status": Status.DELETING.value})
    assert sync.heal(sync_deps, r.uuid, "gone") is Outcome.SKIPPED
    after = get(sync_db, r)
    assert (after.status, after.task_state) == (Status.DELETING, None)


def test_a_rebuild_never_takes_its_task_from_deleting(
        sync_db: Database, sync_deps: AgentDeps, sync_row: RowFactory) -> None:
    """The rebuild flow itself takes its task only from a status a rebuild may start
    from (the heal's own check passed, then a delete came in)."""
    r = sync_row(Status.DELETING, container_id="gone", auto_heal=True)
    ctx = RequestContext.admin()
    actions.action_start(sync_db, ctx, r.uuid, "rebuild")
    assert sync.rebuild.rebuild_container(sync_deps, ctx, r.uuid, True,
                                               judged=Expect(container_id="gone")) is False
    after = get(sync_db, r)
    assert (after.status, after.task_state, after.container_id) == (
        Status.DELETING, None, "gone")
    assert actions.list_actions(sync_db, r.uuid)[0].finish_time is not None


def test_a_vanished_judgement_does_not_outlive_a_rebuild(
        sync_db: Database, sync_deps: AgentDeps, sync_row: RowFactory) -> None:
    """Issue 24 item 3: a row read before a rebuild names the old Docker container,
    and after the rebuild its status is Created again (A-B-A). Marking it vanished
    on that read must not touch the rebuilt row."""
    stale = sync_row(Status.CREATED, container_id="old")
    containers.update_(sync_db, stale.uuid, {"status": Status.REBUILDING.value})
    containers.update_(sync_db, stale.uuid, {"status": Status.CREATED.value,
                                             "container_id": "new"})
    assert sync.handle_vanished(sync_deps, stale) is Outcome.SKIPPED
    after = get(sync_db, stale)
    assert (after.status, after.container_id, after.status_reason) == (
        Status.CREATED, "new", None)


def test_describe_says_what_docker_says() -> None:
    state = rt.ContainerState(status=RunState.EXITED, exit_code=137, oom_killed=True)
    assert describe(state) == "exited (exit 137, OOMKilled)"
    assert describe(rt.ContainerState(status=RunState.RUNNING)) == "running"
    assert describe(None) == "no state"


def _status_at_inspect(db: Database, engine: Engine, r: Container,
                       monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The row's status each time the engine is inspected (Docker answers an inspect
    only after its post-exit clean-up: what the row says meanwhile matters)."""
    seen: list[str] = []
    real_inspect = engine.inspect

    def inspect(cid: str) -> rt.RuntimeContainer:
        seen.append(get(db, r).status)
        return real_inspect(cid)

    monkeypatch.setattr(engine, "inspect", inspect)
    return seen


@pytest.mark.parametrize(("engine_says", "ends"), [
    (RunState.EXITED, Status.STOPPED),
    # Docker may have started it again (a ``docker start`` from outside) before the
    # die is synced: the inspect's Running has the last word
    (RunState.RUNNING, Status.RUNNING),
])
def test_a_die_from_the_stream_says_stopped_before_the_inspect_answers(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory, monkeypatch: pytest.MonkeyPatch, engine_says: RunState,
        ends: Status) -> None:
    r = sync_row(Status.RUNNING, engine_says)
    at_inspect = _status_at_inspect(sync_db, sync_engine, r, monkeypatch)
    death = sync.Death(r.container_id, 137, 1_700_000_000_000_000_000)
    assert sync_container(sync_deps, r.uuid, death) is Outcome.UPDATED
    assert at_inspect == [Status.STOPPED]
    assert get(sync_db, r).status == ends


@pytest.mark.parametrize("columns", [
    {"auto_heal": True},                                   # rm -f kills first: heal sees Running
    {"restart_policy": {"Name": "always", "MaximumRetryCount": 0}},
    {"restart_policy": {"Name": "on-failure", "MaximumRetryCount": 3}},
    {"restart_policy": "unless-stopped"},                  # a row written by another hand
])
def test_a_die_waits_for_the_inspect_where_docker_or_a_heal_acts_on_it(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory, monkeypatch: pytest.MonkeyPatch,
        columns: dict[str, Any]) -> None:
    r = sync_row(Status.RUNNING, RunState.RUNNING, **columns)
    at_inspect = _status_at_inspect(sync_db, sync_engine, r, monkeypatch)
    death = sync.Death(r.container_id, 137, 1_700_000_000_000_000_000)
    sync_container(sync_deps, r.uuid, death)
    assert at_inspect == [Status.RUNNING]
    assert get(sync_db, r).status == Status.RUNNING


def test_a_die_of_another_docker_container_or_a_row_not_running_is_not_written(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    rebuilt = sync_row(Status.RUNNING, RunState.RUNNING)
    at_inspect = _status_at_inspect(sync_db, sync_engine, rebuilt, monkeypatch)
    old = sync.Death("an-earlier-docker-container", 137, 1_700_000_000_000_000_000)
    sync_container(sync_deps, rebuilt.uuid, old)
    assert at_inspect == [Status.RUNNING]
    paused = sync_row(Status.PAUSED, RunState.PAUSED)
    assert not sync.death_applies(paused, sync.Death(paused.container_id, 0, 1))


class RefusingNetworks:
    """A network step whose plug fails as the CNI daemon's does for a namespace that
    is gone."""

    def follow(self, row: Container, seen: rt.RuntimeContainer) -> dict[str, Any]:
        pid = seen.state.pid if seen.state is not None else 0
        raise exc.NetworkPlugFailed(network="n1", reason=f"Network namespace "
                                    f"/proc/{pid}/ns/net does not exist")


@pytest.mark.parametrize("ended", [True, False])
def test_a_plug_that_fails_on_a_process_already_ended_is_no_error(
        ended: bool, sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory, caplog: pytest.LogCaptureFixture) -> None:
    """Docker restarted a container (its restart policy) whose new process ended at
    once: the sync's plug fails on the gone namespace, which is said at INFO; a plug
    that fails while the process lives is an ERROR (tried again at the next sync)."""
    proc = subprocess.Popen(["true"] if ended else ["sleep", "30"])
    try:
        if ended:
            proc.wait()
        r = sync_row(Status.STOPPED, RunState.RUNNING)
        c = sync_engine.containers[r.container_id]
        assert c.state is not None
        sync_engine.containers[r.container_id] = replace(
            c, state=replace(c.state, pid=proc.pid))
        deps = replace(sync_deps, networks=RefusingNetworks())
        with caplog.at_level(logging.INFO, logger="berth.compute.flows.sync"):
            assert sync_container(deps, r.uuid) is Outcome.UPDATED
        assert get(sync_db, r).status == Status.RUNNING
        errors = [rec for rec in caplog.records if rec.levelno >= logging.ERROR]
        assert bool(errors) is not ended
        assert any("ended before its network was plugged" in rec.getMessage()
                   for rec in caplog.records) is ended
    finally:
        proc.kill()
        proc.wait()
