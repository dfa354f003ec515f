"""A list's pages, from statements built once per shape with their values bound
(``berth.db.container_pages``), on every database berth runs on: the marker's value
and id, the limit, the filters and the project as parameters."""

from __future__ import annotations

from typing import Any

import pytest

from berth.db import containers
from berth.db.engine import Database

pytestmark = pytest.mark.integration


def walk(db: Database, limit: int, **kw: Any) -> list[str]:
    seen: list[str] = []
    marker = None
    for _ in range(20):
        page = containers.list_columns(db, ("uuid", "name"), limit=limit, marker=marker,
                                       **kw)
        if not page:
            return seen
        seen += [row.name for row in page]
        marker = page[-1].uuid
    raise AssertionError(f"paging never ended: {seen}")


@pytest.mark.parametrize("sort_dir", ["asc", "desc"])
def test_pages_over_nulls_and_ties_with_filters_and_scope(any_db: Database,
                                                          sort_dir: str) -> None:
    for name, hostname, project, status in [
            ("n1", None, "p1", "Running"), ("a", "h1", "p1", "Running"),
            ("n2", None, "p1", "Running"), ("b", "h2", "p1", "Running"),
            ("c", "h1", "p1", "Running"), ("s", "h1", "p1", "Stopped"),
            ("o", "h1", "p2", "Running")]:
        containers.create(any_db, {"name": name, "hostname": hostname,
                                   "project_id": project, "status": status})
    expected = ["n1", "n2", "a", "c", "b"]
    if sort_dir == "desc":
        expected.reverse()
    for limit in (1, 2, 3):
        assert walk(any_db, limit, project_id="p1", filters={"status": "Running"},
                    sort_key="hostname", sort_dir=sort_dir) == expected
    # A marker's value of another type: the creation time (ties broken by the id).
    by_time = walk(any_db, 2, project_id="p1", filters={}, sort_key="created_at",
                   sort_dir=sort_dir)
    assert sorted(by_time) == sorted(expected + ["s"])
    # Without the scope and the filter, the same shapes' statements with other values.
    assert sorted(walk(any_db, 4, project_id=None, filters={},
                       sort_key="hostname", sort_dir=sort_dir)) == \
        sorted(expected + ["s", "o"])


def test_json_columns_read_by_columns_as_the_orm_reads_them(any_db: Database) -> None:
    # ``container_pages.JSON_READ``: the list's and the show's reads of JSON columns
    # give what SQLAlchemy's JSON type gives, NULL, empty, nested, a number beyond 64
    # bits and text outside ASCII included.
    values = {"name": "j", "project_id": "p1", "status": "Running",
              "command": ["sh", "-c", "echo é"], "environment": {},
              "labels": {"k": "v", "n": {"deep": [1, 2.5, None, True]}},
              "ports": [], "addresses": None, "security_groups": ["default"],
              "restart_policy": {"Name": "no", "MaximumRetryCount": "0"},
              "healthcheck": {"big": 12345678901234567890123}}
    made = containers.create(any_db, values)
    json_keys = ("command", "entrypoint", "environment", "labels", "ports", "addresses",
                 "security_groups", "restart_policy", "healthcheck")
    [listed] = containers.list_columns(any_db, ("uuid",) + json_keys, project_id="p1",
                                       filters={}, limit=10)
    whole = containers.find_by_uuid(any_db, made.uuid)
    assert whole is not None
    for key in json_keys:
        assert getattr(listed, key) == getattr(whole, key), key
    assert listed.healthcheck == {"big": 12345678901234567890123}
    assert listed.labels["n"] == {"deep": [1, 2.5, None, True]}
    assert listed.addresses is None and listed.entrypoint is None
