"""A list's statement is built once per shape (``berth.db.container_pages``): the same
statement object serves every request of that shape, with its values as parameters,
and each shape (columns, sort, filters, scope, marker) has a statement of its own."""

from __future__ import annotations

import pytest

from berth.common import exceptions as exc
from berth.db import container_pages, containers
from berth.db.engine import Database


def make(db: Database, **values: object):  # type: ignore[no-untyped-def]
    values.setdefault("project_id", "p1")
    values.setdefault("status", "Running")
    return containers.create(db, values)


def query(db: Database, **kw: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = {"project_id": "p1", "filters": {}, "limit": 10,
                               "marker": None, "sort_key": "id", "sort_dir": "asc",
                               "container_type": containers.CONTAINER}
    args.update(kw)
    with db.connection() as conn:
        return container_pages.page_query(conn, ("uuid", "name"), **args)  # type: ignore[arg-type]


def test_one_statement_serves_every_request_of_a_shape(db: Database) -> None:
    first, params = query(db, project_id="p1", filters={"status": "Running"}, limit=5)
    again, other = query(db, project_id="p2", filters={"status": "Stopped"}, limit=7)
    assert again is first
    assert params == {"ctype": 0, "limit": 5, "project_id": "p1", "filter_status": "Running"}
    assert other == {"ctype": 0, "limit": 7, "project_id": "p2", "filter_status": "Stopped"}


def test_each_shape_has_a_statement_of_its_own(db: Database) -> None:
    with_value = make(db, name="a", hostname="h1")
    without = make(db, name="b", hostname=None)
    shapes = [
        query(db)[0],
        query(db, project_id=None)[0],
        query(db, filters={"status": "Running"})[0],
        query(db, filters={"status": "Running", "host": "n1"})[0],
        query(db, sort_key="name")[0],
        query(db, sort_dir="desc")[0],
        query(db, sort_key="hostname", marker=with_value.uuid)[0],
        query(db, sort_key="hostname", marker=without.uuid)[0],
    ]
    assert len({id(s) for s in shapes}) == len(shapes)
    # Filters given in another order are the same shape.
    assert query(db, filters={"host": "n1", "status": "Running"})[0] is shapes[3]


def test_a_markers_values_are_parameters(db: Database) -> None:
    a = make(db, name="a", hostname="h1")
    b = make(db, name="b", hostname="h2")
    stmt_a, params_a = query(db, sort_key="hostname", marker=a.uuid)
    stmt_b, params_b = query(db, sort_key="hostname", marker=b.uuid)
    assert stmt_a is stmt_b
    assert (params_a["marker_value"], params_a["marker_id"]) == ("h1", a.id)
    assert (params_b["marker_value"], params_b["marker_id"]) == ("h2", b.id)
    null = make(db, name="n", hostname=None)
    assert "marker_value" not in query(db, sort_key="hostname", marker=null.uuid)[1]


def test_unknown_sort_keys_and_markers_are_refused(db: Database) -> None:
    with pytest.raises(exc.InvalidParameterValue, match="sort_key"):
        query(db, sort_key="nope")
    with pytest.raises(exc.ContainerNotFound):
        query(db, marker="6a0f1b0e-0000-4000-8000-000000000000")


def test_json_columns_are_read_in_one_call_where_the_driver_hands_text() -> None:
    from sqlalchemy.dialects import mysql, postgresql, sqlite

    from berth.db.engine import read_json
    assert container_pages.JSON_READ.result_processor(sqlite.dialect(), None) is read_json
    assert container_pages.JSON_READ.result_processor(mysql.dialect(), None) is read_json
    # psycopg reads JSON itself (with berth's reader): nothing more on top.
    assert container_pages.JSON_READ.result_processor(
        postgresql.psycopg.dialect(), None) is None
    assert read_json(None) is None
    assert read_json('{"a": [1]}') == {"a": [1]}
    assert read_json(b"[]") == []
