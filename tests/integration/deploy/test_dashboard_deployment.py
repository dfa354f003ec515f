"""The web console's live list in a deployment: API processes share only PostgreSQL
and RabbitMQ, so a container created through one ``berth-api`` and run by a
``berth-compute`` agent reaches the event streams of another ``berth-api`` (with two
``[api]workers``), Running then gone, through each process's own change watcher."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from support.berth_proc import TEST_IMAGE

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def deployment(deployment_factory: Any, database_maker: Any) -> Iterator[tuple[Any, str]]:
    """One agent, the API the test writes to (``d.url``) and a second API process with
    two workers that the consoles read from; yields the deployment and that URL."""
    with database_maker("postgresql") as url:
        d = deployment_factory(url)
        try:
            done = d.berth("db", "upgrade")
            assert done.returncode == 0, done.stderr
            d.start_agent("a")
            d.start_api()
            _, console = d.start_another_api("console", workers=2)
            yield d, console
        finally:
            d.close()


def _events(response: httpx.Response) -> Iterator[tuple[str, dict[str, Any]]]:
    name = None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: ") and name:
            yield name, json.loads(line[6:])
            name = None


def _until(events: Iterator[tuple[str, dict[str, Any]]], uuid: str, status: str | None
           ) -> None:
    """Read until the container shows ``status`` (None: until it is deleted)."""
    for name, data in events:
        if name == "snapshot":
            rows = {c["uuid"]: c for c in data["containers"]}
            if (status is None and uuid not in rows) or \
                    (uuid in rows and rows[uuid]["status"] == status):
                return
            continue
        if status is None and uuid in data["deleted"]:
            return
        if any(c["uuid"] == uuid and c["status"] == status for c in data["containers"]):
            return
    raise AssertionError(f"the stream ended before {uuid} showed {status or 'deleted'}")


def test_streams_of_another_api_process_see_a_container_run_and_go(
        deployment: tuple[Any, str]) -> None:
    d, console = deployment
    with ExitStack() as stack:
        # Two streams, so that with two workers both are likely to be read from.
        streams = []
        for _ in range(2):
            response = stack.enter_context(httpx.stream(
                "GET", f"{console}/dashboard/api/events", headers={"X-Auth-Token": "admin"},
                timeout=90))
            assert response.status_code == 200
            events = _events(response)
            assert next(events)[0] == "snapshot"
            streams.append(events)
        with d.http() as http:
            made = http.post("/v1/containers?run=true", json={
                "image": TEST_IMAGE, "command": ["sleep", "600"]})
            assert made.status_code == 202, made.text
            uuid = made.json()["uuid"]
            for events in streams:
                _until(events, uuid, "Running")
            gone = http.delete(f"/v1/containers/{uuid}", params={"stop": "true"})
            assert gone.status_code == 204, gone.text
            for events in streams:
                _until(events, uuid, None)
