"""flows.common.recorded: an event's record around a flow's block, and the end that
the block's last write may have made already (``Recording.ending``: on PostgreSQL;
here, on SQLite, made by hand as that write would)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.fake_runtime import FakeRuntime

from berth.common.context import RequestContext
from berth.compute.capsules.docker.engine import DockerCapsules
from berth.compute.claims import ResourceTracker
from berth.compute.deps import AgentDeps, AgentSettings
from berth.compute.flows import common
from berth.db import actions, containers
from berth.db.engine import Database

CREATE, START = "compute__do_container_create", "compute__do_container_start"


@pytest.fixture
def deps(db: Database) -> Iterator[AgentDeps]:
    d = AgentDeps(db=db, runtime=FakeRuntime(), tracker=ResourceTracker(db, "n1"),
                  settings=AgentSettings(host="n1"), capsules=DockerCapsules())
    yield d
    d.overlap.shutdown(wait=True)


def _container(db: Database, ctx: RequestContext) -> str:
    return containers.create(db, {"status": "Creating", "host": "n1"},
                             along=lambda u: [actions.new_action(ctx, u, "create")]).uuid


def _log(db: Database, uuid: str, ctx: RequestContext
         ) -> tuple[str | None, list[tuple[str, str | None]]]:
    action, events = actions.get_action(db, uuid, ctx.request_id)
    return action.message, sorted((e.event, e.result) for e in events)


def _end_as_the_write_would(db: Database, ending: actions.EventEnding) -> None:
    ending.next_event_id = actions.event_finish(
        db, ending.event_id, False, then=("?", None, ending.then) if ending.then else None)
    ending.ended = True


def test_an_event_the_write_ended_is_not_ended_again(deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    uuid = _container(deps.db, ctx)
    with common.recorded(deps, ctx, uuid, CREATE, finish_action=False, then=START) as rec:
        assert rec.ending is not None and rec.ending.then == START
        _end_as_the_write_would(deps.db, rec.ending)
        ended_at = actions.get_action(deps.db, uuid, ctx.request_id)[1][0].finish_time
    assert rec.next_event_id == rec.ending.next_event_id is not None
    _, events = actions.get_action(deps.db, uuid, ctx.request_id)
    assert [(e.event, e.result, e.finish_time) for e in events if e.event == CREATE] == \
        [(CREATE, "Success", ended_at)]                      # written once
    assert _log(deps.db, uuid, ctx) == (None, [(CREATE, "Success"), (START, None)])


def test_a_failure_after_the_write_ended_it_ends_both_events_in_error(
        deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    uuid = _container(deps.db, ctx)
    with pytest.raises(RuntimeError), \
            common.recorded(deps, ctx, uuid, CREATE, then=START) as rec:
        assert rec.ending is not None
        _end_as_the_write_would(deps.db, rec.ending)
        raise RuntimeError("boom after the last write")
    assert _log(deps.db, uuid, ctx) == ("Error", [(CREATE, "Error"), (START, "Error")])


def test_an_event_no_write_ended_is_ended_on_leaving(deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    uuid = _container(deps.db, ctx)
    with common.recorded(deps, ctx, uuid, CREATE) as rec:
        assert rec.ending is not None and not rec.ending.ended
    assert _log(deps.db, uuid, ctx) == (None, [(CREATE, "Success")])
    action, _ = actions.get_action(deps.db, uuid, ctx.request_id)
    assert action.finish_time is not None
