"""Quota limits, their resolution and their enforcement (berth.api.operations.quotas),
against a real migrated SQLite database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.migrated_sqlite import migrated_url

from berth.api.operations import quotas
from berth.api.state import ApiSettings, ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import containers
from berth.db import quotas as db_quotas
from berth.db.engine import Database

ADMIN = RequestContext.admin()
OWNER = RequestContext(user_id="u", project_id="p1", roles=["member"])
STRANGER = RequestContext(user_id="s", project_id="p2", roles=["member"])
CONFIG = {"containers": 40, "memory": 51200, "cpu": 20, "disk": 100}


@pytest.fixture
def state(tmp_path: Path) -> Iterator[ApiState]:
    db = Database(migrated_url(tmp_path))
    yield ApiState(db=db, compute=None, scheduler=None,  # type: ignore[arg-type]
                   settings=ApiSettings(quota_defaults=dict(CONFIG)))
    db.dispose()


def add_container(state: ApiState, project: str = "p1", cpu: float = 1.0,
                  memory: str = "512", **values: Any) -> None:
    containers.create(state.db, dict(values, project_id=project, cpu=cpu, memory=memory,
                                     status="Running"))


# -- limits (the pure rules and the races: tests/unit/quota) ----------------------------

@pytest.mark.parametrize("body, expected", [
    ({"containers": 10}, {"containers": 10}),
    ({"memory": "2048", "cpu": "-1"}, {"memory": 2048, "cpu": -1}),
    ({}, {}),
])
def test_parse_limits_accepts_integers_and_digit_strings(body: Any, expected: Any) -> None:
    assert quotas.parse_limits(body) == expected


@pytest.mark.parametrize("body, word", [
    ({"containers": -2}, "containers"),
    ({"cpu": 1.5}, "cpu"),
    ({"cpu": "1.5"}, "cpu"),
    ({"disk": True}, "disk"),
    ({"memory": "lots"}, "memory"),
    ({"memory": None}, "memory"),
    ({"memory": "1" * 30}, "memory"),
    ({"gpus": 1}, "gpus"),
    ([1, 2], "JSON object"),
])
def test_parse_limits_refuses_bad_values_naming_them(body: Any, word: str) -> None:
    with pytest.raises(exc.InvalidParameterValue) as err:
        quotas.parse_limits(body)
    assert word in err.value.msg


# -- resolution -----------------------------------------------------------------------------

def test_limits_come_from_project_then_class_default_then_config(state: ApiState) -> None:
    assert quotas.limits_for(state, "p1") == CONFIG
    db_quotas.set_class_limits(state.db, "default", {"containers": 5, "cpu": 8})
    assert quotas.limits_for(state, "p1") == dict(CONFIG, containers=5, cpu=8)
    db_quotas.set_project_limits(state.db, "p1", {"containers": 2})
    assert quotas.limits_for(state, "p1") == dict(CONFIG, containers=2, cpu=8)
    assert quotas.limits_for(state, "p2") == dict(CONFIG, containers=5, cpu=8)
    quotas.delete_quota(state, ADMIN, "p1")
    assert quotas.limits_for(state, "p1") == dict(CONFIG, containers=5, cpu=8)
    # another class falls back to the configuration, not to class default
    assert quotas.get_class(state, ADMIN, "gold") == CONFIG


def test_usage_counts_containers_and_capsules_but_not_capsule_members(state: ApiState) -> None:
    add_container(state, cpu=1.0, memory="512", disk=5)
    add_container(state, cpu=0.5, memory="256", container_type=1)       # a capsule
    add_container(state, cpu=0.5, memory="256", container_type=2)       # its member
    add_container(state, project="p2", cpu=4.0, memory="4096")
    got = quotas.get_quota(state, OWNER, "p1", usages=True)
    assert {k: v["in_use"] for k, v in got.items()} == \
        {"containers": 2, "memory": 768, "cpu": 1.5, "disk": 5}
    assert got["containers"]["limit"] == 40


# -- enforcement ----------------------------------------------------------------------------

def test_check_create_counts_the_defaults_and_names_the_resources(state: ApiState) -> None:
    db_quotas.set_project_limits(state.db, "p1", {"memory": 1024, "containers": 1})
    add_container(state, memory="512")
    with pytest.raises(exc.OverQuota) as err:
        quotas.check_create(state, OWNER, "p1", {"cpu": 1.0, "memory": "512", "disk": None})
    assert err.value.msg.startswith("Quota exceeded for resources: ['containers']")
    assert "zun quota-update" in err.value.msg
    assert err.value.kwargs["overs"] == ["containers"]
    db_quotas.set_project_limits(state.db, "p1", {"containers": 5})
    with pytest.raises(exc.OverQuota) as err:
        quotas.check_create(state, OWNER, "p1", {"cpu": 1.0, "memory": "600"})
    assert err.value.kwargs["overs"] == ["memory"]
    quotas.check_create(state, OWNER, "p1", {"cpu": 1.0, "memory": "512"})   # fits exactly


def test_check_quota_delta_refuses_growth_only(state: ApiState) -> None:
    db_quotas.set_project_limits(state.db, "p1", {"cpu": 2})
    add_container(state, cpu=2.0)
    with pytest.raises(exc.OverQuota) as err:
        quotas.check_quota_delta(state, OWNER, "p1", 0.5, 0)
    assert err.value.kwargs["overs"] == ["cpu"]
    quotas.check_quota_delta(state, OWNER, "p1", -1.0, 128)       # memory has room
    quotas.check_quota_delta(state, OWNER, None, 100.0, 10**6)    # no project: no quota


# -- policy -----------------------------------------------------------------------------------

def test_owners_read_their_quota_and_only_admins_change_quotas(state: ApiState) -> None:
    assert quotas.get_quota(state, OWNER, "p1", usages=False) == CONFIG
    assert quotas.get_defaults(state, OWNER, "p1") == CONFIG
    with pytest.raises(exc.PolicyNotAuthorized):
        quotas.get_quota(state, STRANGER, "p1", usages=False)
    for call in (lambda: quotas.update_quota(state, OWNER, "p1", {"containers": 99}),
                 lambda: quotas.delete_quota(state, OWNER, "p1"),
                 lambda: quotas.get_class(state, OWNER, "default"),
                 lambda: quotas.update_class(state, OWNER, "default", {"cpu": 1})):
        with pytest.raises(exc.PolicyNotAuthorized):
            call()
    assert quotas.update_quota(state, ADMIN, "p1", {"containers": "7"})["containers"] == 7
