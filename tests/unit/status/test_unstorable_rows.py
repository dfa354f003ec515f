"""berth.status.unstorable_rows: each stored row that holds a NUL or a lone surrogate
(let in by a berth before issue 42) is named, table, row, column and field, with what
to do; a database without one passes."""

from __future__ import annotations

from pathlib import Path

from oslo_upgradecheck.upgradecheck import Code
from support.migrated_sqlite import migrated_url

from berth.db import containers
from berth.db.engine import Database
from berth.status.unstorable_rows import NAMED, check_unstorable_rows

GOOD = {"project_id": "p", "user_id": "u", "status": "Running", "image": "busybox",
        "name": "good", "environment": {"A": "é 😀"}, "labels": {"k": "日本"}}


def test_a_database_without_such_rows_passes(tmp_path: Path) -> None:
    url = migrated_url(tmp_path)
    db = Database(url)
    containers.create(db, GOOD)
    db.dispose()
    result = check_unstorable_rows(url)
    assert result.code == Code.SUCCESS, result.details


def test_each_bad_value_is_named_with_its_row_column_and_field(tmp_path: Path) -> None:
    url = migrated_url(tmp_path)
    db = Database(url)
    good = containers.create(db, GOOD)
    poison = containers.create(db, {**GOOD, "name": "poison",
                                    "environment": {"A": "\ud800"},
                                    "command": ["sleep", "6\x000"]})
    with db.write_connection() as conn:   # a text column an older berth let NUL into
        conn.exec_driver_sql("UPDATE container SET hostname = 'h' || char(0) WHERE uuid = ?",
                             (poison.uuid,))
    db.dispose()
    result = check_unstorable_rows(url)
    assert result.code == Code.WARNING
    assert "3 value(s)" in result.details
    for named in ("environment field A", "command field [1]", "hostname"):
        assert f"container uuid {poison.uuid} {named}" in result.details
    assert good.uuid not in result.details
    assert "openstack appcontainer delete --force" in result.details


def test_many_bad_rows_are_counted_past_the_named_ones(tmp_path: Path) -> None:
    url = migrated_url(tmp_path)
    db = Database(url)
    for i in range(NAMED + 3):
        containers.create(db, {**GOOD, "name": f"p{i}", "labels": {"k": "\udc00"}})
    db.dispose()
    result = check_unstorable_rows(url)
    assert result.code == Code.WARNING
    assert f"{NAMED + 3} value(s)" in result.details and "and 3 more" in result.details


def test_a_database_it_cannot_read_is_a_failure(tmp_path: Path) -> None:
    result = check_unstorable_rows(f"sqlite:///{tmp_path / 'none' / 'x.sqlite'}")
    assert result.code == Code.FAILURE and "Cannot read" in result.details
