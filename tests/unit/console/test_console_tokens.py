"""Console tokens: random, hashed at rest, bound, single-use, expiring, and gone with
their container; against a real SQLite file migrated with Alembic."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from sqlalchemy import func, select

from berth.console import execs, tokens
from berth.db import containers
from berth.db.engine import Database
from berth.db.models import ConsoleToken, ExecInstance

EXEC_A = "a" * 64
EXEC_B = "b" * 64


class Clock:
    """A settable clock (naive UTC, like the database)."""

    def __init__(self) -> None:
        self.now = dt.datetime(2026, 1, 1, 12, 0, 0)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += dt.timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make(db: Database, name: str = "web"):  # type: ignore[no-untyped-def]
    return containers.create(db, {"name": name, "project_id": "p1", "status": "Running",
                                  "container_id": "d" * 64, "host": "h1"})


def stored(db: Database) -> list[ConsoleToken]:
    with db.reader() as s:
        return list(s.scalars(select(ConsoleToken)))


def test_token_is_long_random_and_only_its_hash_is_stored(db: Database, clock: Clock) -> None:
    row = make(db)
    first = tokens.issue(db, row.uuid, ttl=600, now=clock)
    second = tokens.issue(db, row.uuid, ttl=600, now=clock)
    assert first != second
    assert len(first) >= 43          # 32 random bytes, base64url
    rows = stored(db)
    assert {r.token_hash for r in rows} == {tokens.digest(first), tokens.digest(second)}
    assert all(first not in (r.token_hash, r.exec_id) for r in rows)
    assert rows[0].expires_at == clock.now + dt.timedelta(seconds=600)


def test_attach_token_opens_its_container_once(db: Database, clock: Clock) -> None:
    row = make(db)
    token = tokens.issue(db, row.uuid, ttl=600, now=clock)
    grant = tokens.consume(db, token, row.uuid, now=clock)
    assert grant == tokens.Grant(container_uuid=row.uuid, kind=tokens.KIND_ATTACH,
                                 exec_id=None)
    with pytest.raises(tokens.TokenRefused, match="already used"):
        tokens.consume(db, token, row.uuid, now=clock)


def test_token_may_name_the_container_by_name(db: Database, clock: Clock) -> None:
    row = make(db, name="shell1")
    token = tokens.issue(db, row.uuid, ttl=600, now=clock)
    assert tokens.consume(db, token, "shell1", now=clock).container_uuid == row.uuid


def test_expired_token_is_refused(db: Database, clock: Clock) -> None:
    row = make(db)
    token = tokens.issue(db, row.uuid, ttl=600, now=clock)
    clock.advance(600)
    with pytest.raises(tokens.TokenRefused, match="expired"):
        tokens.consume(db, token, row.uuid, now=clock)


def test_token_is_good_until_just_before_it_expires(db: Database, clock: Clock) -> None:
    row = make(db)
    token = tokens.issue(db, row.uuid, ttl=600, now=clock)
    clock.advance(599.9)
    assert tokens.consume(db, token, row.uuid, now=clock).container_uuid == row.uuid


def test_token_for_one_container_does_not_open_another_and_is_not_spent(
        db: Database, clock: Clock) -> None:
    a, b = make(db, "a1"), make(db, "b1")
    token = tokens.issue(db, a.uuid, ttl=600, now=clock)
    with pytest.raises(tokens.TokenRefused, match="another container"):
        tokens.consume(db, token, b.uuid, now=clock)
    with pytest.raises(tokens.TokenRefused, match="another container"):
        tokens.consume(db, token, "b1", now=clock)
    assert tokens.consume(db, token, a.uuid, now=clock).container_uuid == a.uuid


def test_exec_token_is_bound_to_its_exec(db: Database, clock: Clock) -> None:
    row = make(db)
    token = tokens.issue(db, row.uuid, ttl=600, exec_id=EXEC_A, now=clock)
    with pytest.raises(tokens.TokenRefused, match="issued for exec"):
        tokens.consume(db, token, row.uuid, exec_id=EXEC_B, now=clock)
    with pytest.raises(tokens.TokenRefused, match="issued for exec"):
        tokens.consume(db, token, row.uuid, now=clock)          # used as an attach token
    grant = tokens.consume(db, token, row.uuid, exec_id=EXEC_A, now=clock)
    assert (grant.kind, grant.exec_id) == (tokens.KIND_EXEC, EXEC_A)


def test_attach_token_does_not_open_an_exec(db: Database, clock: Clock) -> None:
    row = make(db)
    token = tokens.issue(db, row.uuid, ttl=600, now=clock)
    with pytest.raises(tokens.TokenRefused, match="attach console"):
        tokens.consume(db, token, row.uuid, exec_id=EXEC_A, now=clock)


@pytest.mark.parametrize("presented", [None, "", "not-a-token", "x" * 10_000])
def test_unknown_or_missing_token_is_refused(db: Database, clock: Clock,
                                             presented: str | None) -> None:
    row = make(db)
    tokens.issue(db, row.uuid, ttl=600, now=clock)
    with pytest.raises(tokens.TokenRefused):
        tokens.consume(db, presented, row.uuid, now=clock)


def test_the_stored_hash_itself_is_not_a_token(db: Database, clock: Clock) -> None:
    row = make(db)
    tokens.issue(db, row.uuid, ttl=600, now=clock)
    with pytest.raises(tokens.TokenRefused, match="unknown token"):
        tokens.consume(db, stored(db)[0].token_hash, row.uuid, now=clock)


def test_racing_consumers_spend_a_token_exactly_once(db: Database, clock: Clock) -> None:
    row = make(db)
    token = tokens.issue(db, row.uuid, ttl=600, now=clock)
    wins: list[str] = []
    losses: list[str] = []
    start = threading.Barrier(8)

    def attempt() -> None:
        start.wait()
        try:
            tokens.consume(db, token, row.uuid, now=clock)
            wins.append("won")
        except tokens.TokenRefused as err:
            losses.append(err.msg)

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(wins) == 1
    assert len(losses) == 7 and all("already used" in m for m in losses)


def test_issuing_deletes_expired_tokens(db: Database, clock: Clock) -> None:
    row = make(db)
    tokens.issue(db, row.uuid, ttl=10, now=clock)
    clock.advance(11)
    fresh = tokens.issue(db, row.uuid, ttl=10, now=clock)
    assert [r.token_hash for r in stored(db)] == [tokens.digest(fresh)]


def test_tokens_and_exec_records_go_with_their_container(db: Database, clock: Clock) -> None:
    row = make(db)
    token = tokens.issue(db, row.uuid, ttl=600, now=clock)
    execs.record(db, row.id, EXEC_A)
    assert execs.belongs(db, row.id, EXEC_A)
    containers.destroy(db, row.uuid)
    with db.reader() as s:
        assert s.scalar(select(func.count()).select_from(ConsoleToken)) == 0
        assert s.scalar(select(func.count()).select_from(ExecInstance)) == 0
    with pytest.raises(tokens.TokenRefused, match="unknown token"):
        tokens.consume(db, token, row.uuid, now=clock)


def test_exec_records_are_per_container(db: Database) -> None:
    a, b = make(db, "a1"), make(db, "b1")
    execs.record(db, a.id, EXEC_A)
    assert execs.belongs(db, a.id, EXEC_A)
    assert not execs.belongs(db, b.id, EXEC_A)
    assert not execs.belongs(db, a.id, EXEC_B)


def test_an_attach_token_bound_to_a_stream_opens_that_stream_as_an_attach(
        db: Database, clock: Clock) -> None:
    row = make(db)
    token = tokens.issue(db, row.uuid, ttl=60, exec_id=EXEC_A, kind=tokens.KIND_ATTACH,
                         now=clock)
    with pytest.raises(tokens.TokenRefused):
        tokens.consume(db, token, row.uuid, None, now=clock)     # the stream is named
    grant = tokens.consume(db, token, row.uuid, EXEC_A, now=clock)
    assert (grant.kind, grant.exec_id) == (tokens.KIND_ATTACH, EXEC_A)


def test_a_size_asked_for_a_cri_console_is_read_back_by_its_record(db: Database) -> None:
    row = make(db)
    execs.record(db, row.id, EXEC_A, url="http://127.0.0.1:1/attach/abc")
    execs.record(db, row.id, EXEC_B, url="http://127.0.0.1:1/exec/def")
    assert execs.size_of(db, row.id, EXEC_A) is None
    attach = execs.latest_with_url(db, row.id, "/attach/")
    assert attach is not None and attach.exec_id == EXEC_A
    execs.ask_size(db, attach.id, 33, 101)
    assert execs.size_of(db, row.id, EXEC_A) == (33, 101)
    assert execs.size_of(db, row.id, EXEC_B) is None
    found = execs.find_by_exec_id(db, EXEC_B)
    assert found is not None and found.container_id == row.id
