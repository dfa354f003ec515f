"""Queries on the container table, against a real SQLite file migrated with Alembic
(the same schema ``berth serve`` uses)."""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

import pytest

from berth.common import exceptions as exc
from berth.db import containers
from berth.db.containers import Expect
from berth.db.engine import Database


def make(db: Database, **values: object):  # type: ignore[no-untyped-def]
    values.setdefault("project_id", "p1")
    values.setdefault("status", "Running")
    return containers.create(db, values)


# -- create / get -----------------------------------------------------------------------------

def test_create_assigns_a_uuid_and_the_container_type(db: Database) -> None:
    row = make(db, name="web")
    assert str(uuidlib.UUID(row.uuid)) == row.uuid
    assert row.container_type == containers.CONTAINER
    assert containers.get_by_uuid(db, row.uuid).name == "web"


def test_get_finds_by_uuid_in_any_case_and_by_name(db: Database) -> None:
    row = make(db, name="web")
    assert containers.get(db, row.uuid).id == row.id
    assert containers.get(db, row.uuid.upper()).id == row.id
    assert containers.get(db, "web").id == row.id


def test_get_unknown_raises_container_not_found(db: Database) -> None:
    with pytest.raises(exc.ContainerNotFound):
        containers.get(db, str(uuidlib.uuid4()))
    with pytest.raises(exc.ContainerNotFound):
        containers.get(db, "nobody")
    with pytest.raises(exc.ContainerNotFound):
        containers.get_by_uuid(db, str(uuidlib.uuid4()))
    assert containers.find_by_uuid(db, str(uuidlib.uuid4())) is None


def test_get_is_scoped_to_the_project_unless_none(db: Database) -> None:
    row = make(db, name="web", project_id="p1")
    with pytest.raises(exc.ContainerNotFound):
        containers.get(db, row.uuid, project_id="p2")
    with pytest.raises(exc.ContainerNotFound):
        containers.get(db, "web", project_id="p2")
    assert containers.get(db, "web", project_id="p1").id == row.id
    assert containers.get(db, "web", project_id=None).id == row.id
    assert containers.get(db, row.uuid.upper(), project_id="p1").id == row.id
    assert containers.get(db, row.uuid, project_id=None).id == row.id


def test_ambiguous_name_is_a_conflict_that_says_to_use_the_uuid(db: Database) -> None:
    make(db, name="twin")
    make(db, name="twin")
    with pytest.raises(exc.Conflict) as info:
        containers.get(db, "twin")
    assert "uuid" in info.value.msg
    # The ambiguity is per scope: in another project there is no match at all.
    with pytest.raises(exc.ContainerNotFound):
        containers.get(db, "twin", project_id="other")


def test_a_name_that_looks_like_a_uuid_is_still_found_by_name(db: Database) -> None:
    name = str(uuidlib.uuid4())
    row = make(db, name=name)
    assert containers.get(db, name).id == row.id


def test_name_taken_is_case_insensitive_and_scoped(db: Database) -> None:
    make(db, name="Web", project_id="p1")
    assert containers.name_taken(db, "web", None)
    assert containers.name_taken(db, "WEB", "p1")
    assert not containers.name_taken(db, "web", "p2")
    assert not containers.name_taken(db, "db", None)


# -- list ---------------------------------------------------------------------------------------

def listed(db: Database, project_id: str | None = None,
           filters: dict[str, Any] | None = None, **kw: Any) -> list[Any]:
    """A page as the API's list reads it (``list_columns``), of the uuid and name."""
    return containers.list_columns(db, ("uuid", "name"), project_id=project_id,
                                   filters=filters or {}, **kw)


def names(rows) -> list[str | None]:  # type: ignore[no-untyped-def]
    return [r.name for r in rows]


def test_list_orders_by_id_and_pages_with_limit_and_marker(db: Database) -> None:
    rows = [make(db, name=f"c{i}") for i in range(5)]
    page1 = listed(db, limit=2)
    assert names(page1) == ["c0", "c1"]
    page2 = listed(db, limit=2, marker=page1[-1].uuid)
    assert names(page2) == ["c2", "c3"]
    page3 = listed(db, limit=2, marker=page2[-1].uuid)
    assert names(page3) == ["c4"]
    assert listed(db, limit=2, marker=rows[-1].uuid) == []


def test_list_sorts_desc_and_pages_backwards(db: Database) -> None:
    for name in ("b", "d", "a", "c"):
        make(db, name=name)
    page1 = listed(db, limit=3, sort_key="name", sort_dir="desc")
    assert names(page1) == ["d", "c", "b"]
    page2 = listed(db, limit=3, sort_key="name", sort_dir="desc", marker=page1[-1].uuid)
    assert names(page2) == ["a"]


def _walk(db: Database, sort_key: str, sort_dir: str, limit: int) -> list[str | None]:
    seen: list[str | None] = []
    marker = None
    for _ in range(50):
        page = listed(db, limit=limit, sort_key=sort_key, sort_dir=sort_dir, marker=marker)
        if not page:
            return seen
        seen += names(page)
        marker = page[-1].uuid
    raise AssertionError(f"paging never ended: {seen}")


@pytest.mark.parametrize("sort_dir", ["asc", "desc"])
@pytest.mark.parametrize("limit", [1, 2, 3])
def test_paging_over_a_column_with_nulls_and_ties_visits_every_row_once(
        db: Database, sort_dir: str, limit: int) -> None:
    # hostname: two NULLs, a tie on "h1", one "h2"; the order is (NULLs first when
    # ascending, last when descending), then value, then id.
    specs = [("n1", None), ("a", "h1"), ("n2", None), ("b", "h2"), ("c", "h1")]
    for name, hostname in specs:
        make(db, name=name, hostname=hostname)
    expected_asc = ["n1", "n2", "a", "c", "b"]
    expected = expected_asc if sort_dir == "asc" else list(reversed(expected_asc))
    full = listed(db, limit=100, sort_key="hostname", sort_dir=sort_dir)
    assert names(full) == expected
    assert _walk(db, "hostname", sort_dir, limit) == expected


def test_marker_on_a_null_valued_row_continues_after_it(db: Database) -> None:
    make(db, name="x", hostname=None)
    marker = make(db, name="y", hostname=None)
    make(db, name="z", hostname="h")
    after = listed(db, limit=10, sort_key="hostname", marker=marker.uuid)
    assert names(after) == ["z"]
    before = listed(db, limit=10, sort_key="hostname", sort_dir="desc", marker=marker.uuid)
    assert names(before) == ["x"]


def test_list_filters_and_project_scope(db: Database) -> None:
    make(db, name="a", project_id="p1", status="Running")
    make(db, name="b", project_id="p1", status="Stopped")
    make(db, name="c", project_id="p2", status="Running")
    assert names(listed(db, project_id="p1", limit=10)) == ["a", "b"]
    assert names(listed(db, filters={"status": "Running"}, limit=10)) == ["a", "c"]
    assert names(listed(db, project_id="p2", filters={"status": "Stopped"}, limit=10)) == []


def test_list_with_unknown_marker_or_sort_key_fails(db: Database) -> None:
    make(db, name="a")
    with pytest.raises(exc.ContainerNotFound):
        listed(db, limit=10, marker=str(uuidlib.uuid4()))
    with pytest.raises(exc.InvalidParameterValue) as info:
        listed(db, limit=10, sort_key="nope")
    assert "sort_key" in info.value.msg


def test_list_leaves_out_other_container_types(db: Database) -> None:
    make(db, name="plain")
    make(db, name="capsule", container_type=1)
    assert names(listed(db, limit=10)) == ["plain"]
    assert names(listed(db, limit=10, container_type=1)) == ["capsule"]


# -- update_ (compare-and-swap) ----------------------------------------------------------------

def test_update_without_expectation_writes_and_stamps_updated_at(db: Database) -> None:
    row = make(db, name="a")
    assert row.updated_at is None
    out = containers.update_(db, row.uuid, {"status": "Stopped"})
    assert out.status == "Stopped"
    assert out.updated_at is not None


def test_update_expecting_a_task_state_is_compare_and_swap(db: Database) -> None:
    row = make(db, name="a")
    taken = containers.update_(db, row.uuid, {"task_state": "container_stopping"},
                               expect=Expect(task_state=None))
    assert taken.task_state == "container_stopping"
    # A second actor expecting "no task" loses and learns what is in progress.
    with pytest.raises(exc.TaskInProgress) as info:
        containers.update_(db, row.uuid, {"task_state": "container_starting"},
                           expect=Expect(task_state=None))
    assert "container_stopping" in info.value.msg
    assert containers.get_by_uuid(db, row.uuid).task_state == "container_stopping"
    # The owner releases it by expecting its own value.
    done = containers.update_(db, row.uuid, {"task_state": None},
                              expect=Expect(task_state="container_stopping"))
    assert done.task_state is None


def test_update_expectation_may_be_a_collection_including_none(db: Database) -> None:
    row = make(db, name="a", task_state=None)
    containers.update_(db, row.uuid, {"status": "Stopped"},
                       expect=Expect(task_state=[None, "container_stopping"]))
    containers.update_(db, row.uuid, {"task_state": "container_starting"})
    with pytest.raises(exc.TaskInProgress):
        containers.update_(db, row.uuid, {"status": "Running"},
                           expect=Expect(task_state=(None, "container_stopping")))
    assert containers.get_by_uuid(db, row.uuid).status == "Stopped"


def test_one_update_shape_serves_every_row_with_its_own_values(db: Database) -> None:
    """update_ builds its statement once per shape (keys and kinds of expectation);
    each call binds its own values: JSON, times, and expectations included."""
    import datetime as dt

    deadline = dt.datetime(2026, 1, 2, 3, 4, 5)
    a = make(db, name="a", status="Creating", task_state="container_creating",
             task_deadline=deadline)
    b = make(db, name="b", status="Created", task_state="container_starting",
             task_deadline=deadline + dt.timedelta(seconds=1))
    for row, labels in ((a, {"k": "a"}), (b, {"k": "b", "n": "2"})):
        done = containers.update_(db, row.uuid, {"labels": labels, "task_state": None},
                                  expect=Expect(task_state=row.task_state,
                                                status=row.status,
                                                task_deadline=row.task_deadline))
        assert (done.labels, done.task_state, done.status) == (labels, None, row.status)
    assert containers.get_by_uuid(db, a.uuid).labels == {"k": "a"}
    assert containers.get_by_uuid(db, b.uuid).labels == {"k": "b", "n": "2"}
    # The same shape, a deadline that no longer matches: refused, nothing written.
    c = make(db, name="c", task_state="container_creating", task_deadline=deadline)
    with pytest.raises(exc.TaskInProgress):
        containers.update_(db, c.uuid, {"labels": {"k": "c"}, "task_state": None},
                           expect=Expect(task_state="container_creating", status="Running",
                                         task_deadline=deadline + dt.timedelta(seconds=9)))
    assert containers.get_by_uuid(db, c.uuid).labels in (None, {})
    # IN with only None is IS NULL.
    containers.update_(db, a.uuid, {"status": "Stopped"}, expect=Expect(task_state=[None]))
    assert containers.get_by_uuid(db, a.uuid).status == "Stopped"


def test_update_expecting_a_status(db: Database) -> None:
    row = make(db, name="a", status="Creating")
    with pytest.raises(exc.TaskInProgress):
        containers.update_(db, row.uuid, {"status": "Running"}, expect=Expect(status="Stopped"))
    assert containers.update_(db, row.uuid, {"status": "Created"},
                              expect=Expect(status="Creating")).status == "Created"


def test_update_of_a_missing_row_is_not_found(db: Database) -> None:
    with pytest.raises(exc.ContainerNotFound):
        containers.update_(db, str(uuidlib.uuid4()), {"status": "Stopped"})
    with pytest.raises(exc.ContainerNotFound):
        containers.update_(db, str(uuidlib.uuid4()), {"status": "Stopped"},
                           expect=Expect(task_state=None))


def test_destroy_removes_the_row_once(db: Database) -> None:
    row = make(db, name="a")
    assert containers.destroy(db, row.uuid) is True
    assert containers.destroy(db, row.uuid) is False
    assert containers.find_by_uuid(db, row.uuid) is None


# -- usage ---------------------------------------------------------------------------------------

def test_usage_on_host_counts_only_rows_that_hold_resources(db: Database) -> None:
    make(db, host="h1", cpu=1.0, memory="512", status="Running")
    make(db, host="h1", cpu=0.5, memory="256", status="Creating")
    make(db, host="h1", cpu=2.0, memory="1024", status="Stopped")
    make(db, host="h1", cpu=4.0, memory="4096", status="Error")
    make(db, host="h1", cpu=4.0, memory="4096", status="Deleted")
    make(db, host="h2", cpu=8.0, memory="8192", status="Running")
    make(db, host=None, cpu=8.0, memory="8192", status="Creating")
    assert containers.usage_on_host(db, "h1") == (3.5, 1792, 3)
    assert containers.usage_on_host(db, "h3") == (0, 0, 0)


def test_usage_on_host_can_exclude_the_claiming_container(db: Database) -> None:
    a = make(db, host="h1", cpu=1.0, memory="512")
    make(db, host="h1", cpu=1.0, memory="100")
    assert containers.usage_on_host(db, "h1", exclude=[a.uuid]) == (1.0, 100, 1)


def test_usage_ignores_memory_that_is_not_a_number_of_mib(db: Database) -> None:
    make(db, host="h1", cpu=None, memory=None)
    make(db, host="h1", cpu=1.0, memory="1g")
    assert containers.usage_on_host(db, "h1") == (1.0, 0, 2)


def test_update_returns_the_whole_row_including_its_registry_uuid(db: Database) -> None:
    from berth.db import registries

    registry = registries.create(db, {"name": "r", "domain": "reg.example",
                                      "project_id": "p1", "user_id": "u"})
    pulling = make(db, name="a", registry_id=registry.id, environment={"A": "1"})
    plain = make(db, name="b", environment={"B": "2"})
    out = containers.update_(db, pulling.uuid, {"status": "Stopped"})
    assert out.__dict__["registry_uuid"] == registry.uuid      # what the view reads
    assert (out.status, out.environment, out.name) == ("Stopped", {"A": "1"}, "a")
    out = containers.update_(db, plain.uuid, {"status": "Stopped", "labels": {"x": "y"}})
    assert (out.status, out.environment, out.labels, out.id) == \
        ("Stopped", {"B": "2"}, {"x": "y"}, plain.id)
    assert out.created_at == plain.created_at and out.updated_at is not None


def test_json_columns_read_back_what_was_written_including_empty_ones() -> None:
    from berth.db.engine import _json_loads

    assert _json_loads('{"a": [1, 2.5, null, "é"]}') == {"a": [1, 2.5, None, "é"]}
    first, second = _json_loads("{}"), _json_loads("{}")
    assert first == {} and first is not second          # never a shared object
    assert _json_loads("[]") == [] and _json_loads("null") is None
    assert _json_loads(" {} ") == {}


def test_loop_reads_hold_no_snapshot_and_survive_a_failed_read(db: Database) -> None:
    """The event loop's kept connection reads in autocommit: a read never leaves a
    transaction open (a writer's commit is seen by the next read, and the WAL can be
    checkpointed), and a failed statement leaves the next read a working connection."""
    from sqlalchemy import text

    row = containers.create(db, {"name": "a", "project_id": "p1", "status": "Creating"})
    cols = ("uuid", "status")
    assert containers.get_columns_on_loop(db, row.uuid, cols).status == "Creating"
    with db.loop_connection() as conn:
        assert conn.exec_driver_sql("SELECT 1").scalar() == 1
        assert not conn.connection.dbapi_connection.in_transaction  # type: ignore[union-attr]
    containers.update_(db, row.uuid, {"status": "Running"})
    assert containers.get_columns_on_loop(db, "a", cols).status == "Running"
    with pytest.raises(Exception, match="no such table"), db.loop_connection() as conn:
        conn.execute(text("SELECT * FROM no_such_table"))
    assert containers.get_columns_on_loop(db, row.uuid, cols, project_id="p1").uuid == row.uuid
    with pytest.raises(exc.ContainerNotFound):
        containers.get_columns_on_loop(db, row.uuid, cols, project_id="p2")
    containers.create(db, {"name": "a", "project_id": "p1", "status": "Creating"})
    with pytest.raises(exc.Conflict):
        containers.get_columns_on_loop(db, "a", cols)


def test_create_returns_the_row_as_stored_and_writes_its_action_with_it(db: Database) -> None:
    """create: the returned row carries its id and every column's default, as a read
    of it shows; the records ``along`` gives are written in the same transaction, so
    a failing one leaves no container row behind."""
    from berth.api.views import ADMIN_KEYS, container_view
    from berth.common.context import RequestContext
    from berth.db import actions

    ctx = RequestContext.admin()
    row = containers.create(db, {"name": "c", "project_id": "p1", "status": "Creating"},
                            along=lambda u: [actions.new_action(ctx, u, "create")])
    stored = containers.get_by_uuid(db, row.uuid)
    assert row.id == stored.id and row.id is not None
    assert row.cpu_policy == "shared" and row.interactive is False and row.container_type == 0
    assert row.created_at == stored.created_at
    assert container_view(row, shown=ADMIN_KEYS) == container_view(stored, shown=ADMIN_KEYS)
    assert [a.action for a in actions.list_actions(db, row.uuid)] == ["create"]

    def broken(uuid: str) -> list[Any]:
        action = actions.new_action(ctx, uuid, "create")
        action.container_uuid = None     # NOT NULL: the insert fails
        return [action]

    with pytest.raises(Exception, match="NOT NULL"):
        containers.create(db, {"name": "d", "project_id": "p1", "status": "Creating"},
                          along=broken)
    with pytest.raises(exc.ContainerNotFound):
        containers.get(db, "d")
