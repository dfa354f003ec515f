"""``nodes.publish_usage``: the node's usage counted by the database in one UPDATE,
on each database berth runs on (SQLite, PostgreSQL, MariaDB): what the rows placed
on the node hold, what they are, and nothing of another node's; and
``nodes.usage_of_hosts``, the same census of several nodes read in one query (what
host-show shows)."""

from __future__ import annotations

from typing import Any

from support.statements import Statements

from berth.db import containers, nodes
from berth.db.engine import Database

HOST = "node-a"


def _row(db: Database, host: str | None = HOST, **values: Any) -> None:
    containers.create(db, {"project_id": "p1", "host": host, **values})


def _usage(db: Database, host: str = HOST) -> tuple[Any, ...]:
    node = nodes.get_compute_node(db, host)
    return (node.cpu_used, node.mem_used, node.disk_used, node.running_containers,
            node.total_containers, node.paused_containers, node.stopped_containers)


def test_the_usage_of_the_nodes_own_rows_in_one_statement(any_db: Database) -> None:
    db = any_db
    for host in (HOST, "node-b"):
        nodes.upsert_compute_node(db, host, {"cpus": 8, "mem_total": 16384})
    _row(db, status="Running", cpu=1.5, memory="512", disk=2)
    _row(db, status="Paused", cpu=0.5, memory="256", disk=None)
    _row(db, status="Stopped", cpu=None, memory="1024", disk=1)
    _row(db, status="Running", cpu=1.0, memory="512M")       # legacy: holds no memory
    _row(db, status="Creating", cpu=2.0, memory=None, container_type=1)   # a capsule
    _row(db, status="Error", cpu=4.0, memory="4096", disk=10)          # holds nothing
    _row(db, status="Deleted", cpu=4.0, memory="4096", disk=10)
    _row(db, status="Running", cpu=3.0, memory="2048", container_type=2)  # a member
    _row(db, status="Running", cpu=3.0, memory="2048", host="node-b")
    _row(db, status="Running", cpu=3.0, memory="2048", host=None)
    seen = Statements(db)
    nodes.publish_usage(db, HOST)
    if db.engine.dialect.name != "sqlite":      # (whose writes have an engine apart)
        assert seen.sent == ["UPDATE"]
    # cpu, memory MiB, disk GiB and the number of the rows that hold resources; all of
    # the node's containers and capsules; Paused; Stopped.
    assert _usage(db) == (5.0, 1792, 3, 5, 7, 1, 1)
    assert _usage(db, "node-b")[4] == 0           # not published: untouched

    seen = Statements(db)
    read = nodes.usage_of_hosts(db, [HOST, "node-b", "node-c"])
    assert [w for w in seen.sent if w != "BEGIN"] == ["SELECT"]    # (SQLite's BEGIN)
    assert read == {HOST: nodes.NodeUsage(5.0, 1792, 3, 5, 7, 1, 1),
                    "node-b": nodes.NodeUsage(3.0, 2048, 0, 1, 1, 0, 0),
                    "node-c": nodes.NodeUsage()}         # no containers: all zero
    assert [type(v) for v in (read[HOST].cpu_used, read[HOST].mem_used)] == [float, int]
    assert nodes.usage_of_hosts(db, []) == {}


def test_a_node_without_containers_holds_nothing(any_db: Database) -> None:
    db = any_db
    nodes.upsert_compute_node(db, HOST, {"cpus": 8, "mem_total": 16384, "cpu_used": 3.0,
                                         "mem_used": 100, "total_containers": 4})
    nodes.publish_usage(db, HOST)
    assert _usage(db) == (0.0, 0, 0, 0, 0, 0, 0)
