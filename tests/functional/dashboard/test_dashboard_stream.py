"""The console's event stream over HTTP against a real ``berth serve``: it shows a
caller what the list API shows them (their project only; every project for an admin
who asks; the admin-only keys to admins), and pushes a project's changes to that
project's streams only. Also: the console's pages are served and ``GET /`` is still
the versions document."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from support.berth_proc import TEST_IMAGE, wait_for


@contextmanager
def stream(berth: Any, token: str, all_projects: bool = False
           ) -> Iterator[Iterator[tuple[str, dict[str, Any]]]]:
    """The stream's events, as (name, data), read as they come."""
    params = {"all_projects": "true"} if all_projects else {}
    with httpx.stream("GET", f"{berth.url}/dashboard/api/events", params=params,
                      headers={"X-Auth-Token": token}, timeout=60) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")

        def events() -> Iterator[tuple[str, dict[str, Any]]]:
            name = None
            for line in response.iter_lines():
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: ") and name:
                    yield name, json.loads(line[6:])
                    name = None

        yield events()


def make(berth: Any, token: str) -> str:
    """A container of ``token``'s project, once its create is over (Created): an
    update while it is still Creating is refused (409), as in Zun."""
    with berth.http(token) as http:
        made = http.post("/v1/containers", json={
            "name": f"stream-{uuid.uuid4().hex[:8]}", "image": TEST_IMAGE,
            "command": ["sleep", "600"]})
        assert made.status_code == 202, made.text
        ident = str(made.json()["uuid"])
        wait_for(lambda: http.get(f"/v1/containers/{ident}").json()["status"] == "Created",
                 timeout=60, what=f"container {ident} to be Created")
        return ident


def rename(berth: Any, token: str, ident: str) -> None:
    with berth.http(token) as http:
        answer = http.patch(f"/v1/containers/{ident}",
                            json={"name": f"renamed-{uuid.uuid4().hex[:8]}"})
        assert answer.status_code == 200, answer.text


def test_stream_is_scoped_as_the_list_api(berth) -> None:
    mine, theirs = make(berth, "alice:p1"), make(berth, "bob:p2")
    try:
        with stream(berth, "alice:p1") as events:
            name, data = next(events)
            assert name == "snapshot"
            listed = {c["uuid"]: c for c in data["containers"]}
            assert mine in listed and theirs not in listed
            assert "host" not in listed[mine]            # container:get_one:host
            rename(berth, "bob:p2", theirs)              # committed first...
            rename(berth, "alice:p1", mine)              # ...so seen no later than this
            for name, data in events:
                pushed = {c["uuid"] for c in data.get("containers", [])}
                assert theirs not in pushed
                if mine in pushed:
                    break
        with stream(berth, "admin", all_projects=True) as events:
            name, data = next(events)
            listed = {c["uuid"]: c for c in data["containers"]}
            assert {mine, theirs} <= set(listed)
            assert listed[mine]["host"] == berth.host
        answer = httpx.get(f"{berth.url}/dashboard/api/events",
                           params={"all_projects": "true"},
                           headers={"X-Auth-Token": "alice:p1"}, timeout=30)
        assert answer.status_code == 403
        assert "container:get_all_all_projects" in answer.text
    finally:
        for token, ident in (("alice:p1", mine), ("bob:p2", theirs)):
            with berth.http(token) as http:
                http.delete(f"/v1/containers/{ident}", params={"stop": "true"})


def test_console_pages_are_served_beside_the_versions_document(berth) -> None:
    page = httpx.get(f"{berth.url}/dashboard/", timeout=30)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "berth console" in page.text
    assert httpx.get(f"{berth.url}/dashboard", timeout=30).status_code == 307
    assert httpx.get(f"{berth.url}/", timeout=30).json()["versions"][0]["id"] == "v1"
    config = httpx.get(f"{berth.url}/dashboard/api/config", timeout=30)
    assert config.json() == {"auth": "noauth"}
