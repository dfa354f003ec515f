"""``nodes.publish_usage``: the node's usage counted by the database in one UPDATE,
on each database berth runs on (SQLite, PostgreSQL, MariaDB): what the rows placed
on the node hold, what they are, and nothing of another node's; and
``nodes.usage_of_hosts``, the same census of several nodes read in one query (what
host-show shows)."""

from __future__ import annotations

from typing import Any

from support.statements import Statements

from berth.db import containers, nodes, paging
from berth.db.engine import Database
from berth.db.models import ComputeNode

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


def test_the_host_list_sorts_by_the_usage_it_shows_not_by_the_lagging_row(
        any_db: Database) -> None:
    db = any_db
    # The rows say the opposite of what the containers hold (the agent has not
    # published since): the list must follow what it shows, the containers' census.
    for host, memory, count in (("node-a", 4096, 9), ("node-b", 2048, 5), ("node-c", 0, 1)):
        nodes.upsert_compute_node(db, host, {"cpus": 8, "mem_total": 16384,
                                             "mem_used": memory, "total_containers": count})
    _row(db, host="node-a", status="Running", memory="256")
    _row(db, host="node-b", status="Running", memory="512")
    _row(db, host="node-b", status="Stopped", memory="512")       # holds its memory
    _row(db, host="node-c", status="Running", memory="2048", cpu=2.0)
    _row(db, host="node-c", status="Error", memory="4096")        # holds nothing
    _row(db, host="node-c", status="Error", memory="4096")
    def listed(sort_key: str, sort_dir: str = "asc", limit: int = 1) -> list[str]:
        out: list[str] = []
        marker = None
        while True:     # page by page: the marker's place is the computed value too
            rows = paging.page(db, ComputeNode, limit=limit, marker=marker,
                               sort_key=sort_key, sort_dir=sort_dir, what="host",
                               computed=nodes.LIVE_USAGE_ORDER,
                               not_found=lambda m: AssertionError(m))
            out += [r.hostname for r in rows]
            if len(rows) < limit:
                return out
            marker = rows[-1].uuid

    assert listed("mem_used") == ["node-a", "node-b", "node-c"]     # 256, 1024, 2048
    assert listed("mem_used", "desc", limit=2) == ["node-c", "node-b", "node-a"]
    assert listed("total_containers", limit=2) == ["node-a", "node-b", "node-c"]  # 1, 2, 3
    assert listed("cpu_used", "desc")[0] == "node-c"
    assert listed("hostname", "desc") == ["node-c", "node-b", "node-a"]
