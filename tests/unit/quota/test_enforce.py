"""berth.quota: the pure rules, and the check run inside the writer's transaction,
which must hold under concurrency (issue 24: 50 concurrent creates under a quota of 10
made 16 rows). Here on SQLite, with two Database objects standing for two processes;
tests/integration/quota runs the same races on PostgreSQL and MariaDB."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.migrated_sqlite import migrated_url
from support.quota_race import PROJECT, creates_never_exceed, growth_never_exceeds, race_creates

from berth.common import exceptions as exc
from berth.db import containers
from berth.db import quotas as db_quotas
from berth.db.engine import Database
from berth.quota import QuotaEnforcer, overs

CONFIG = {"containers": 40, "memory": 51200, "cpu": 20, "disk": 100}


def test_overs_names_only_the_resources_a_request_grows_past_their_limit() -> None:
    limits = {"containers": 2, "memory": 1024, "cpu": 2, "disk": -1}
    usage = {"containers": 2, "memory": 512, "cpu": 1.5, "disk": 500}
    assert overs(limits, usage, {"containers": 1, "memory": 512, "cpu": 0.5,
                                 "disk": 10}) == ["containers"]
    assert overs(limits, usage, {"cpu": 0.6}) == ["cpu"]
    assert overs(limits, usage, {"memory": 513}) == ["memory"]
    # shrinking (or not growing) never trips a limit, even one already exceeded
    assert overs(limits, usage, {"containers": 0, "cpu": -1.0}) == []
    # -1 is unlimited
    assert overs(limits, usage, {"disk": 10_000}) == []


def test_overs_allows_reaching_a_limit_exactly_with_fractional_cpus() -> None:
    limits = {"containers": 10, "memory": 100, "cpu": 1, "disk": 10}
    usage = {"containers": 0, "memory": 0, "cpu": 0.7, "disk": 0}
    assert overs(limits, usage, {"cpu": 0.3}) == []
    assert overs(limits, usage, {"cpu": 0.31}) == ["cpu"]


@pytest.fixture
def dbs(tmp_path: Path) -> Iterator[list[Database]]:
    url = migrated_url(tmp_path)
    both = [Database(url), Database(url)]
    yield both
    for db in both:
        db.dispose()


def test_concurrent_creates_never_exceed_the_container_quota(dbs: list[Database]) -> None:
    creates_never_exceed(dbs, QuotaEnforcer(CONFIG))


def test_concurrent_creates_never_exceed_the_memory_quota(dbs: list[Database]) -> None:
    db_quotas.set_project_limits(dbs[0], PROJECT, {"memory": 16 * 7})
    done, refused, errors = race_creates(dbs, QuotaEnforcer(CONFIG), 30)
    assert errors == [] and (done, refused) == (7, 23)
    assert db_quotas.project_usage(dbs[0], PROJECT)["memory"] == 16 * 7


def test_concurrent_growth_never_exceeds_the_cpu_quota(dbs: list[Database]) -> None:
    growth_never_exceeds(dbs, QuotaEnforcer(CONFIG))


def test_a_refused_check_leaves_the_write_undone(dbs: list[Database]) -> None:
    db_quotas.set_project_limits(dbs[0], PROJECT, {"containers": 0})
    deltas = {"containers": 1, "cpu": 0.1, "memory": 16}
    with pytest.raises(exc.OverQuota) as err:
        containers.create(dbs[0], {"project_id": PROJECT, "cpu": 0.1, "memory": "16",
                                   "status": "Creating"},
                          guard=lambda conn: QuotaEnforcer(CONFIG).check(conn, PROJECT, deltas))
    assert "zun quota-update" in err.value.msg and err.value.kwargs["overs"] == ["containers"]
    assert db_quotas.project_usage(dbs[0], PROJECT)["containers"] == 0


def test_unlimited_resources_take_no_lock_and_always_pass(dbs: list[Database]) -> None:
    db_quotas.set_project_limits(dbs[0], PROJECT, {"containers": -1, "cpu": -1,
                                                    "memory": -1, "disk": -1})
    done, refused, errors = race_creates(dbs, QuotaEnforcer(CONFIG), 20)
    assert errors == [] and (done, refused) == (20, 0)
