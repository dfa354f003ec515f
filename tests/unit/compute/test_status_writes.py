"""The one table of status moves (states.TRANSITIONS, model.md §5.2) and the one module
that writes a row's status (compute.status_writes): a move outside the table is logged
and still made (Zun refuses none of its row writes), and no other module writes a
status itself."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest

from berth.compute import status_writes
from berth.compute.states import (
    ENGINE_STATUSES,
    INITIAL_STATUSES,
    TRANSITIONS,
    VALID_STATES,
    Status,
    transition_allowed,
)
from berth.db import containers
from berth.db.containers import Expect
from berth.db.engine import Database

ROOT = Path(__file__).resolve().parents[3]


def test_every_status_has_a_row_in_the_table() -> None:
    assert set(TRANSITIONS) == set(Status)


def test_error_is_reached_from_every_status_as_every_failure_path_writes_it() -> None:
    assert [s for s in Status if not transition_allowed(s, Status.ERROR)] == []


@pytest.mark.parametrize(("action", "to"), [
    ("rebuild", Status.REBUILDING), ("reboot", Status.RESTARTING),
    ("delete_force", Status.DELETING), ("delete_stop", Status.DELETING),
    ("start", Status.RUNNING), ("stop", Status.STOPPED), ("pause", Status.PAUSED),
    ("unpause", Status.RUNNING), ("kill", Status.STOPPED)])
def test_each_action_moves_every_status_it_starts_from(action: str, to: Status) -> None:
    assert [s for s in VALID_STATES[action] if not transition_allowed(s, to)] == []


def test_the_engine_state_is_copied_into_every_row_a_flow_does_not_own() -> None:
    for was in Status:
        for to in ENGINE_STATUSES:
            assert transition_allowed(was, to) == (was != Status.DELETED or was == to), \
                (was, to)


@pytest.mark.parametrize(("was", "to"), [
    (Status.DELETING, Status.REBUILDING), (Status.DELETING, Status.CREATING),
    (Status.PAUSED, Status.DELETING), (Status.RUNNING, Status.CREATING),
    (Status.DELETED, Status.RUNNING), (Status.ERROR, Status.CREATING),
    (Status.CREATING, Status.REBUILDING)])
def test_moves_no_flow_makes_are_outside_the_table(was: Status, to: Status) -> None:
    assert not transition_allowed(was, to)


def test_a_new_row_starts_creating_or_in_error_only() -> None:
    assert {s for s in Status if transition_allowed(None, s)} == INITIAL_STATUSES \
        == {Status.CREATING, Status.ERROR}


def test_writing_a_row_its_own_status_again_is_no_move() -> None:
    assert all(transition_allowed(s, s) for s in Status)


def test_a_move_outside_the_table_is_logged_naming_the_row_and_the_write(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=status_writes.__name__):
        assert status_writes.check("u1", Status.RUNNING, Status.CREATING, "a test") is False
        assert status_writes.check("u2", Status.RUNNING, Status.STOPPED, "a test") is True
        assert status_writes.check("u3", None, Status.CREATING, "a test") is True
    assert [r.getMessage() for r in caplog.records] == [
        ("container u1 moved from Running to Creating by a test: a move outside "
         "berth.compute.states.TRANSITIONS (written anyway, as Zun would)")]


def _row(db: Database, status: Status) -> str:
    return containers.create(db, {"name": "c", "image": "busybox", "status": status.value,
                                  "project_id": "p", "user_id": "u"}).uuid


def test_an_illegal_move_is_still_written_as_zun_would(
        db: Database, caplog: pytest.LogCaptureFixture) -> None:
    uuid = _row(db, Status.DELETING)
    with caplog.at_level(logging.WARNING, logger=status_writes.__name__):
        row = status_writes.mark_rebuilding(db, uuid, was=Status.DELETING)
    assert row.status == Status.REBUILDING
    assert containers.get_by_uuid(db, uuid).status == Status.REBUILDING
    assert "from Deleting to Rebuilding by mark_rebuilding" in caplog.text


def test_a_compare_and_swap_checks_the_status_it_expects(
        db: Database, caplog: pytest.LogCaptureFixture) -> None:
    uuid = _row(db, Status.PAUSED)
    with caplog.at_level(logging.WARNING, logger=status_writes.__name__):
        status_writes.mark_deleting(db, uuid, was=None,
                                    expect=Expect(status=Status.PAUSED.value))
    assert containers.get_by_uuid(db, uuid).status == Status.DELETING
    assert "from Paused to Deleting by mark_deleting" in caplog.text


def test_mark_error_writes_the_reason_and_the_columns_given(db: Database) -> None:
    uuid = _row(db, Status.RUNNING)
    row = status_writes.mark_error(db, uuid, "it broke; delete it", was=Status.RUNNING,
                                   columns={"status_detail": None, "task_state": None})
    assert (row.status, row.status_reason, row.status_detail) == (
        "Error", "it broke; delete it", None)


# --- no status written anywhere else -------------------------------------------------

#: Where rows are written (the agent's flows, the API's operations and evacuation),
#: and the modules allowed to name a status column there: this module's subject, and
#: the engine-state mapping whose result ``flows.common.apply_runtime_state`` checks.
_WRITERS = ("berth/compute", "berth/api/operations", "berth/api/evacuation.py")
_ALLOWED = {"berth/compute/status_writes.py", "berth/compute/status_mapping.py"}
#: The database calls that write a row's columns.
_DB_WRITES = {"update_", "update_with", "update_members", "create"}


def _status_keys(tree: ast.AST) -> list[int]:
    """Lines that set a ``status`` column to one of Zun's statuses: a ``{"status":
    Status.X...}`` literal, ``dict(..., status=...)``, ``.update(status=...)`` or
    ``values["status"] = ...``."""
    return [node.lineno for node in ast.walk(tree) if _sets_status(node)]


def _callee(call: ast.Call) -> str | None:
    """The name a call calls: ``f`` of ``f(...)`` and of ``a.b.f(...)``."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else \
        func.id if isinstance(func, ast.Name) else None


def _names_status(value: ast.AST | None) -> bool:
    """The value names Zun's status vocabulary (``Status.X``): a row's status, not an
    image's or a service's."""
    return value is not None and any(isinstance(n, ast.Name) and n.id == "Status"
                                     for n in ast.walk(value))


def _sets_status(node: ast.AST) -> bool:
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == "status" and _names_status(v)
                   for k, v in zip(node.keys, node.values, strict=True))
    if isinstance(node, ast.Call):
        return _callee(node) in ("dict", "update") and any(
            k.arg == "status" and _names_status(k.value) for k in node.keywords)
    return isinstance(node, ast.Assign) and _names_status(node.value) and any(
        isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
        and t.slice.value == "status" for t in node.targets)


def _raw_db_writes(tree: ast.AST) -> list[int]:
    """Lines anywhere that hand a database write a literal status."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and _callee(node) in _DB_WRITES
            and any(isinstance(arg, ast.Dict) and any(
                isinstance(k, ast.Constant) and k.value == "status" for k in arg.keys)
                for arg in node.args)]


def test_no_status_is_written_outside_status_writes() -> None:
    found = []
    for path in sorted((ROOT / "berth").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in _ALLOWED or name.startswith("berth/db/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), name)
        lines = set(_raw_db_writes(tree))
        if name.startswith(_WRITERS):
            lines |= set(_status_keys(tree))
        found += [f"{name}:{line}" for line in sorted(lines)]
    assert found == [], ("a row's status written outside berth.compute.status_writes (use "
                         "its named writes, checked against states.TRANSITIONS): "
                         + ", ".join(found))


def test_the_guard_sees_each_form_of_a_raw_status_write() -> None:
    source = '''
containers.update_(db, u, {"status": Status.ERROR.value})
values = dict(fields, status=Status.CREATING.value)
values.update(status=Status.ERROR.value)
values["status"] = Status.DELETED.value
found = [{"id": i.id, "status": i.status} for i in images]
containers.update_(db, u, {"status": "Error"})
'''
    assert sorted(_status_keys(ast.parse(source))) == [2, 3, 4, 5]
    assert sorted(_raw_db_writes(ast.parse(source))) == [2, 7]
