"""A pooled connection is checked (a round trip) before it is handed out only when
it has been idle for the threshold; a dead one is then replaced. On a real SQLite
engine with a QueuePool and an injected clock: a connection closed underneath the
pool stands for one the server dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, exc, text
from sqlalchemy.pool import QueuePool

from berth.db.engine import ping_when_idle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def engine_with_one_connection(tmp_path: Path, clock: Clock):  # type: ignore[no-untyped-def]
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}", poolclass=QueuePool,
                           pool_size=1, max_overflow=0,
                           connect_args={"check_same_thread": False})
    ping_when_idle(engine, 1.0, clock)
    return engine


def kill_the_pooled_connection(engine) -> None:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
    raw.close()         # back in the pool: the server dropped it there


def test_a_connection_idle_past_the_threshold_is_checked_and_replaced_when_dead(
        tmp_path: Path) -> None:
    clock = Clock()
    engine = engine_with_one_connection(tmp_path, clock)
    kill_the_pooled_connection(engine)
    clock.now += 1.5
    with engine.connect() as conn:
        assert conn.execute(text("SELECT 42")).scalar() == 42
    engine.dispose()


def test_a_connection_back_a_moment_ago_is_handed_out_without_a_round_trip(
        tmp_path: Path) -> None:
    clock = Clock()
    engine = engine_with_one_connection(tmp_path, clock)
    kill_the_pooled_connection(engine)
    clock.now += 0.5
    # Not checked: the dead connection is handed out, its statement fails and the
    # pool drops it; the next checkout connects afresh.
    with pytest.raises(exc.DBAPIError), engine.connect() as conn:
        conn.execute(text("SELECT 1"))
    with engine.connect() as conn:
        assert conn.execute(text("SELECT 1")).scalar() == 1
    engine.dispose()
