"""With its memo (the agent's timer), an inventory run writes only what changed: an
idle node's run costs no statement; a change of the node, of its service's disabled
flag, or the full run every ``full_every`` seconds writes again (free memory, which
moves all the time, only the last). A real SQLite
database, the embedded Placement and the simulated engine; statements counted with
SQLAlchemy's cursor events."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from berth.compute.claims import ResourceTracker
from berth.compute.periodic import inventory
from berth.compute.periodic.inventory import InventoryMemo, InventorySettings, inventory_host
from berth.db import nodes
from berth.db.engine import Database
from berth.placement.embedded import EmbeddedPlacement
from berth.runtime.simulated.engine import SimulatedNode, SimulatedRuntime

HOST = "n1"


@pytest.fixture
def statements(db: Database) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    # Every engine's (the database's writes go through an engine of their own).
    event.listen(Engine, "after_cursor_execute", count)
    yield seen
    event.remove(Engine, "after_cursor_execute", count)


def test_an_unchanged_node_writes_nothing_until_it_changes(
        db: Database, statements: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    meminfo = {"MemTotal": 32768, "MemFree": 16000, "MemAvailable": 20000}
    monkeypatch.setattr(inventory, "read_meminfo", lambda: dict(meminfo))
    now = [0.0]
    memo = InventoryMemo(full_every=600, clock=lambda: now[0])
    runtime = SimulatedRuntime(node=SimulatedNode(cpus=4))
    placement = EmbeddedPlacement(db)
    settings = InventorySettings(host=HOST)
    tracker = ResourceTracker(db, HOST)
    assert nodes.beat(db, HOST, nodes.COMPUTE_BINARY, None) is None   # row made: not read
    memo.disabled = nodes.beat(db, HOST, nodes.COMPUTE_BINARY, None)
    assert memo.disabled is False

    def run() -> int:
        statements.clear()
        inventory_host(db, runtime, tracker, settings, placement=placement, memo=memo)
        return len(statements)

    assert run() > 0                                  # the first run writes everything
    rp = nodes.get_compute_node(db, HOST).rp_uuid
    assert rp and placement.get_inventory(rp)["VCPU"].total == 4
    now[0] = 60
    meminfo["MemFree"] += 3000                        # free memory alone: not yet
    assert run() == 0
    assert nodes.get_compute_node(db, HOST).mem_free == 16000
    nodes.update_service(db, HOST, nodes.COMPUTE_BINARY, {"disabled": True})
    memo.disabled = nodes.beat(db, HOST, nodes.COMPUTE_BINARY, None)
    assert memo.disabled is True                      # the beat read it (SQLite returns it)
    assert run() > 0
    assert "CUSTOM_ZUN_COMPUTE_STATUS_DISABLED" in placement.get_traits(rp)
    assert run() == 0
    runtime.node = SimulatedNode(cpus=8)              # the node changed
    assert run() > 0
    assert placement.get_inventory(rp)["VCPU"].total == 8
    assert run() == 0
    now[0] = 700                                      # the full run, whatever changed
    assert run() > 0
    assert nodes.get_compute_node(db, HOST).mem_free == 19000
    tracker.stop()


def test_without_a_memo_every_run_writes(db: Database, statements: list[str]) -> None:
    runtime = SimulatedRuntime()
    tracker = ResourceTracker(db, HOST)
    nodes.beat(db, HOST, nodes.COMPUTE_BINARY, None)
    for _ in range(2):
        statements.clear()
        inventory_host(db, runtime, tracker, InventorySettings(host=HOST),
                       placement=EmbeddedPlacement(db))
        assert len(statements) > 0
    tracker.stop()
