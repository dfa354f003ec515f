"""listed_view (a row of containers.list_columns) renders exactly what container_view
renders for the same container, for admins and for everyone else, on a real SQLite
database: the list and show answers must never disagree."""

from __future__ import annotations

from berth.api.views import ADMIN_KEYS, LIST_COLUMNS, container_view, listed_view
from berth.db import containers, registries
from berth.db.engine import Database


def test_listed_rows_render_as_shown_rows(db: Database) -> None:
    reg = registries.create(db, {"name": "r", "domain": "registry.example:5000",
                                 "project_id": "p1"})
    plain = containers.create(db, {"name": "plain", "project_id": "p1", "status": "Running",
                                   "host": "n1", "cpu": 0.5, "memory": "64"})
    full = containers.create(db, {
        "name": "full", "project_id": "p1", "status": "Created", "host": "n1",
        "image": "busybox", "command": ["sh", "-c", "sleep 1"], "environment": {"A": "1"},
        "labels": {"l": "v"}, "ports": [80], "addresses": {"net": [{"addr": "10.0.0.2"}]},
        "restart_policy": {"Name": "always"}, "security_groups": ["default"],
        "healthcheck": {"test": "true"}, "registry_id": reg.id, "privileged": True,
        "runtime": "runc", "image_pull_policy": "always"})
    rows = containers.list_columns(db, LIST_COLUMNS, project_id=None, filters={}, limit=10)
    shown = {c.uuid: containers.get_by_uuid(db, c.uuid) for c in (plain, full)}
    assert [r.uuid for r in rows] == [plain.uuid, full.uuid]
    for row in rows:
        for is_admin in (True, False):
            assert listed_view(row, shown=ADMIN_KEYS if is_admin else ()) == \
                container_view(shown[row.uuid], shown=ADMIN_KEYS if is_admin else ())
    assert listed_view(rows[1], shown=())["registry_id"] == reg.uuid
    assert listed_view(rows[0], shown=())["labels"] == {}
    assert "host" not in listed_view(rows[0], shown=())


def test_rows_read_on_the_loop_render_as_shown_rows(db: Database) -> None:
    """show's event-loop answer (a row of SHOW_COLUMNS, read on the loop's own
    connection) is container_view with links, by uuid and by name."""
    from types import SimpleNamespace

    from starlette.requests import Request

    from berth.api.views import SHOW_COLUMNS, shown_view

    reg = registries.create(db, {"name": "r", "domain": "registry.example:5000",
                                 "project_id": "p1"})
    full = containers.create(db, {
        "name": "full", "project_id": "p1", "status": "Running", "host": "n1",
        "image": "busybox", "command": ["sh"], "environment": {"A": "1"},
        "labels": {"l": "v"}, "ports": [80], "registry_id": reg.id, "privileged": True,
        "container_id": "abc", "runtime": "runc"})
    request = Request({"type": "http", "scheme": "http", "server": ("127.0.0.1", 9517),
                       "path": "/v1/containers", "headers": [], "state": {},
                       "app": SimpleNamespace(state=SimpleNamespace())})
    stored = containers.get_by_uuid(db, full.uuid)
    for ident in (full.uuid, "full"):
        row = containers.get_columns_on_loop(db, ident, SHOW_COLUMNS)
        assert row.container_id == "abc"
        for is_admin in (True, False):
            assert shown_view(row, shown=ADMIN_KEYS if is_admin else (), request=request) == \
                container_view(stored, shown=ADMIN_KEYS if is_admin else (), request=request)
