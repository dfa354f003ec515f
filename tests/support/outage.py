"""R3's load and its check (issue 21), shared by the dependency-outage tests: creates
and deletes against a deployment's berth-api while something is taken away, then
every accepted request must end Running, deleted, or in Error saying why, and both
processes must still be the ones that started."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import httpx

from support.berth_proc import TEST_IMAGE, wait_for

COMMAND = ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
BUSY = ("Creating", "Deleting", "Rebuilding", "Restarting")
#: How long each dependency stays away: 8 s in the test command, the issue's 30 s with
#: BERTH_RELIABILITY_FULL=1 (longer than RabbitMQ's and the pool's reconnect back-off).
OUTAGE = 30.0 if os.environ.get("BERTH_RELIABILITY_FULL") == "1" else 8.0


class Load:
    """Creates (with run) and deletes until stopped; remembers what the API accepted."""

    def __init__(self, http: httpx.Client, allowed: tuple[int, ...]) -> None:
        self.http, self.stop, self.allowed = http, threading.Event(), allowed
        self.created: list[str] = []
        self.deleted: list[str] = []
        self.server_errors: list[str] = []
        self.refusals: dict[int, int] = {}

    def run(self) -> None:
        turn = 0
        while not self.stop.is_set():
            turn += 1
            try:
                if turn % 3 == 0 and self.created:
                    uuid = self.created[len(self.created) // 2]
                    answer = self.http.delete(f"/v1/containers/{uuid}",
                                              params={"force": "true"})
                    if answer.status_code == 204:
                        self.deleted.append(uuid)
                else:
                    answer = self.http.post("/v1/containers", params={"run": "true"}, json={
                        "image": TEST_IMAGE, "command": COMMAND, "memory": 16, "cpu": 0.1,
                        "image_pull_policy": "ifnotpresent"})
                    if answer.status_code == 202:
                        self.created.append(answer.json()["uuid"])
                # A refusal while a dependency is away must say so, not be a bare 500.
                if answer.status_code >= 500:
                    self.refusals[answer.status_code] = \
                        self.refusals.get(answer.status_code, 0) + 1
                    if answer.status_code not in self.allowed:
                        self.server_errors.append(f"{answer.status_code} {answer.text[:200]}")
            except httpx.HTTPError as err:
                self.server_errors.append(f"transport: {err}")
            time.sleep(0.2)


def _busy(row: dict[str, Any]) -> bool:
    """Whether a listed container is still in a task or a transitional status."""
    return bool(row["task_state"]) or row["status"] in BUSY


def assert_accounted_for(load: Load, rows: dict[str, dict[str, Any]]) -> None:
    """Every create the API accepted is Running, deleted (by the load), or in Error
    saying why."""
    for uuid in load.created:
        row = rows.get(uuid)
        if row is None:
            assert uuid in load.deleted, f"{uuid} vanished without a delete"
            continue
        assert row["status"] in ("Running", "Error"), row
        if row["status"] == "Error":
            assert row["status_reason"], row


def ride_out(deployment: Any, what: str, stop: Any, start: Any,
             allowed: tuple[int, ...]) -> None:
    api_pid = deployment.api.pid
    agent = next(iter(deployment.agents.values()))
    agent_pid = agent.pid
    with deployment.http() as http:
        load = Load(http, allowed)
        worker = threading.Thread(target=load.run)
        worker.start()
        try:
            time.sleep(3)
            stop()
            try:
                time.sleep(OUTAGE)
            finally:
                start()
            time.sleep(8)
        finally:
            load.stop.set()
            worker.join(60)
        assert load.server_errors == []
        assert len(load.created) > 5

        def settled() -> list[dict[str, Any]] | None:
            try:
                rows = http.get("/v1/containers").json()["containers"]
            except (httpx.HTTPError, KeyError, ValueError):
                return None
            return None if any(_busy(r) for r in rows) else rows
        try:
            rows = wait_for(settled, 150, 1.0, what="every accepted request to settle")
        except AssertionError:
            # What stayed busy, and what the agent said of it: the failure's evidence.
            answer = http.get("/v1/containers")
            print(f"---- GET /v1/containers: {answer.status_code} ----")
            if answer.status_code == 200:
                for row in filter(_busy, answer.json()["containers"]):
                    print({k: row[k] for k in ("uuid", "status", "task_state",
                                               "status_reason", "host")})
            else:
                print(answer.text[:2000])
            print("---- agent log ----\n" + agent.log_text()[-20000:])
            print("---- api log ----\n" + deployment.api.log_text()[-8000:])
            raise
        assert isinstance(rows, list)
        by_uuid = {r["uuid"]: r for r in rows}
        assert_accounted_for(load, by_uuid)
        # Nobody restarted them, and they talk again: a create after the outage runs
        # (on a node emptied of the load, whose creates may have filled it).
        assert deployment.api.pid == api_pid and deployment.api.running()
        assert agent.pid == agent_pid and agent.running()
        for uuid in by_uuid:
            http.delete(f"/v1/containers/{uuid}", params={"force": "true"})
        wait_for(lambda: http.get("/v1/containers").json()["containers"] == [], 120, 0.5,
                 what="the load's containers to be deleted")
        answer = http.post("/v1/containers", params={"run": "true"}, json={
            "image": TEST_IMAGE, "command": COMMAND, "image_pull_policy": "ifnotpresent"})
        assert answer.status_code == 202, answer.text
        uuid = answer.json()["uuid"]
        try:
            wait_for(lambda: http.get(f"/v1/containers/{uuid}").json()["status"] == "Running",
                     60, 0.5, what=f"a create after the {what} to run")
        except AssertionError:
            print(http.get(f"/v1/containers/{uuid}").json())
            print("---- agent log ----\n" + agent.log_text()[-6000:])
            raise
        errors = [r for r in rows if r["status"] == "Error"]
        print(f"R3 {what}: {len(load.created)} creates and {len(load.deleted)} deletes "
              f"accepted; {len(errors)} in Error after it: "
              f"{sorted({r['status_reason'][:300] for r in errors})}; refusals while it "
              f"lasted: {load.refusals}")
