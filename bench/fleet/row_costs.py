"""P15R: the client CPU of the agents' commonest statements on PostgreSQL, berth's way
against SQLAlchemy's ORM session (berth's way before), in one run.

The fleet's agents spend most of their CPU in the database client (bench P15's yappi
profile: SQLAlchemy and psycopg, about two thirds), ten statements per container, and
a fleet run's figures move by a fifth from one run to the next on these machines: the
cost of one statement, timed in one process, is the figure that shows a change to it.

    python -m bench.fleet.row_costs [--ops 2000] [--rounds 5]

Each pair times ``--ops`` operations of each way in turn, ``--rounds`` times, on the
run's own database (made and dropped here): process CPU per operation, median of the
rounds, and the ratio berth / baseline. The pairs:

- ``update``: a container's update that returns the row (``containers.update_``: Core,
  ``rows.detached``) against the ORM ``UPDATE ... RETURNING`` through a session;
- ``read``: a container read by uuid (``containers.find_by_uuid``) against
  ``select(Container)`` through a session;
- ``describe``: that Core update on berth's engine (``psycopg_cursor``) against an
  engine with psycopg's own cursor;
- ``json``: reading 50 rows with JSON columns on berth's engine (``_json_loads``)
  against an engine with psycopg's own JSON loader;
- ``checkout``: a one-column read by uuid on a connection of berth's pool, which waits
  there in autocommit, against the same on an engine whose connections wait at READ
  COMMITTED and are switched to autocommit for the read and back after it (berth's
  way until 2026-12-06).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Table, bindparam, create_engine, select, update
from sqlalchemy.orm import sessionmaker

from bench.fleet.services import scratch_database
from berth.db import containers, migrate
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.db.models import Container
from berth.db.psycopg_cursor import DescribedOnceCursor


def cpu_ms_per_op(op: Callable[[], object], ops: int) -> float:
    began = time.process_time()
    for _ in range(ops):
        op()
    return (time.process_time() - began) * 1000 / ops


def pairs(url: str) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    """name -> (berth's way, the baseline), on ``url``'s migrated database."""
    db = Database(url, pool_size=2)
    uuid_ = containers.create(db, {"project_id": "p", "status": "Running",
                                   "labels": {"app": "web"}, "command": ["sleep", "1"],
                                   "environment": {"A": "1"}}).uuid
    for _ in range(49):
        containers.create(db, {"project_id": "p", "status": "Running",
                               "labels": {"app": "web"}, "environment": {"A": "1"}})
    # The baseline engine: psycopg's own cursor and JSON loader, its connections in
    # autocommit as berth's (``engine._pooled_level``).
    plain_reads = create_engine(url, pool_size=2, isolation_level="AUTOCOMMIT")
    berth_reads = db.engine
    berth_sessions = sessionmaker(berth_reads, expire_on_commit=False)
    switching = create_engine(url, pool_size=2, isolation_level="READ COMMITTED",
                              connect_args={"cursor_factory": DescribedOnceCursor}
                              ).execution_options(isolation_level="AUTOCOMMIT")
    orm_update = (update(Container).where(Container.uuid == bindparam("w_uuid"))
                  .values(status_reason=bindparam("v_status_reason"),
                          updated_at=bindparam("v_updated_at"))
                  .execution_options(synchronize_session=False).returning(Container))
    table: Table = Container.__table__  # type: ignore[assignment]
    core_update = (update(table).where(table.c.uuid == bindparam("w_uuid"))
                   .values(status_reason=bindparam("v_status_reason"),
                           updated_at=bindparam("v_updated_at")).returning(*table.c))
    by_uuid = select(Container).where(Container.uuid == bindparam("uuid"))
    every_row = select(*table.c)
    status_of = select(table.c.status).where(table.c.uuid == bindparam("uuid"))

    def params() -> dict[str, Any]:
        return {"w_uuid": uuid_, "v_status_reason": "bench",
                "v_updated_at": utcnow()}

    def orm_update_once() -> object:
        with berth_sessions() as s:
            return s.scalars(orm_update, params()).first()

    def orm_read_once() -> object:
        with berth_sessions() as s:
            return s.scalars(by_uuid, {"uuid": uuid_}).first()

    def core_update_on(engine: Any) -> Callable[[], object]:
        def once() -> object:
            with engine.connect() as conn:
                return conn.execute(core_update, params()).first()
        return once

    def rows_on(engine: Any) -> Callable[[], object]:
        def once() -> object:
            with engine.connect() as conn:
                return conn.execute(every_row).all()
        return once

    def status_on(engine: Any) -> Callable[[], object]:
        def once() -> object:
            with engine.connect() as conn:
                return conn.execute(status_of, {"uuid": uuid_}).scalar()
        return once

    return {
        "update": (lambda: containers.update_(db, uuid_, {"status_reason": "bench"}),
                   orm_update_once),
        "read": (lambda: containers.find_by_uuid(db, uuid_), orm_read_once),
        "describe": (core_update_on(berth_reads), core_update_on(plain_reads)),
        "json": (rows_on(berth_reads), rows_on(plain_reads)),
        "checkout": (status_on(berth_reads), status_on(switching)),
    }


def measure(url: str, ops: int, rounds: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, (ours, baseline) in pairs(url).items():
        for op in (ours, baseline):     # warm: statement caches, prepared statements
            cpu_ms_per_op(op, 20)
        a: list[float] = []
        b: list[float] = []
        for _ in range(rounds):
            a.append(cpu_ms_per_op(ours, ops))
            b.append(cpu_ms_per_op(baseline, ops))
        ratios = sorted(x / y for x, y in zip(a, b, strict=True))
        out[name] = {"berth_ms": round(statistics.median(a), 4),
                     "baseline_ms": round(statistics.median(b), 4),
                     "ratio": round(statistics.median(ratios), 3)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fleet.row_costs",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    with scratch_database("berth_rowcost_") as url:
        migrate.upgrade(url)
        figures = measure(url, args.ops, args.rounds)
    for name, f in figures.items():
        print(f"P15R {name}: {f['berth_ms']:.3f} ms against {f['baseline_ms']:.3f} ms "
              f"of CPU per operation, ratio {f['ratio']}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
