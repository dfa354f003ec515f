"""The engine round trips of a create with run, counted at the engine's socket
(tests/support/engine_proxy.py): ``docker create``, ``docker start`` and one inspect
(the pid to plug, the state to write), as ``docker run`` makes them. berth's overhead
over the engine grows with each round trip when the engine is slow (bench P1), so a
new one on this path has to be a choice, made here."""

from __future__ import annotations

import time
import uuid as uuidlib
from collections.abc import Callable

import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for
from support.engine_proxy import EngineProxy, Rule
from support.lifecycle import database_of

from berth.db import containers

pytestmark = pytest.mark.functional


def counting_rules() -> dict[str, Rule]:
    """First match wins: the relists and the image look-ups before the inspects."""
    return {"list": Rule("GET", "/containers/json"), "image": Rule("GET", "/images/"),
            "create": Rule("POST", "/containers/create"), "start": Rule("POST", "/start"),
            "inspect": Rule("GET", "/json"), "other write": Rule("POST", "/"),
            "delete": Rule("DELETE", "/")}


def test_a_create_with_run_makes_create_start_and_one_inspect(
        proxy: EngineProxy, berth_factory: Callable[..., BerthProcess]) -> None:
    berth = berth_factory(f"[docker]\napi_url = {proxy.url}\n").start()

    def run_one(http) -> None:  # type: ignore[no-untyped-def]
        resp = http.post("/v1/containers", params={"run": "true"}, json={
            "image": TEST_IMAGE, "command": ["sleep", "300"], "name":
            f"trips-{uuidlib.uuid4().hex[:8]}", "image_pull_policy": "ifnotpresent"})
        assert resp.status_code == 202, resp.text
        uuid = str(resp.json()["uuid"])

        def running() -> bool:   # read from the database: a GET is not part of it
            with database_of(berth) as db:
                row = containers.find_by_uuid(db, uuid)
            assert row is not None and row.status != "Error", row and row.status_reason
            return row.status == "Running" and row.task_state is None

        wait_for(running, 60, what="Running")
        time.sleep(0.5)          # anything the create set off has reached the engine

    with berth.http() as http:
        rules = counting_rules()
        proxy.rules[:] = list(rules.values())
        run_one(http)            # the first create of the image also looks it up
        assert rules["image"].hits <= 1
        rules = counting_rules()
        proxy.rules[:] = list(rules.values())
        run_one(http)
    counts = {name: rule.hits for name, rule in rules.items() if name != "list"}
    assert counts == {"image": 0, "create": 1, "start": 1, "inspect": 1,
                      "other write": 0, "delete": 0}, counts
