"""The scenarios the differential tests run on both services: each a function of a
``Side`` returning its steps, ``(step name, Answer)`` in order. A scenario makes what it
needs and deletes it; the same code runs against berth and against Zun."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from compat.differ import Answer

Steps = list[tuple[str, Answer]]
SETTLED = ("Running", "Stopped", "Error", "Created", "Paused")


@dataclass
class Side:
    """One service under comparison. ``close_each`` sends ``Connection: close`` on every
    request: Zun's 204 answers carry a body, which breaks a kept-alive connection."""
    name: str
    http: httpx.Client
    image: str
    hosts: tuple[str, ...] = ()
    close_each: bool = False
    requests: int = 0
    made: list[str] = field(default_factory=list)

    def call(self, method: str, path: str, body: Any = None, version: str | None = None,
             params: dict[str, str] | None = None) -> Answer:
        headers = {"Connection": "close"} if self.close_each else {}
        if version:
            headers["OpenStack-API-Version"] = version
        req = self.http.build_request(method, path, json=body, params=params, headers=headers)
        if version == "":                               # no header at all
            del req.headers["OpenStack-API-Version"]
        r = self.http.send(req)
        self.requests += 1
        try:
            data = r.json() if r.content else None
        except ValueError:
            data = r.text
        return Answer(r.status_code, data)

    def settle(self, ident: str, want: tuple[str, ...] = SETTLED,
               timeout: float = 180) -> list[str]:
        """Poll a container until its status is one of ``want``; the statuses seen, in order."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = self.http.get(f"/v1/containers/{ident}",
                              headers={"Connection": "close"} if self.close_each else {})
            status = r.json().get("status") if r.status_code == 200 else f"HTTP {r.status_code}"
            if not seen or seen[-1] != status:
                seen.append(status)
            if status in want and not self.http.get(
                    f"/v1/containers/{ident}",
                    headers={"Connection": "close"} if self.close_each else {}
            ).json().get("task_state"):
                return seen
            time.sleep(0.2)
        raise AssertionError(f"{self.name}: container {ident} never reached {want}: {seen}")

    def cleanup(self) -> None:
        for ident in self.made:
            self.http.delete(f"/v1/containers/{ident}", params={"force": "true"},
                             headers={"Connection": "close"})


def _create(side: Side, name: str, **extra: Any) -> tuple[Answer, str]:
    body = {"name": name, "image": side.image, "command": ["sleep", "600"],
            "image_pull_policy": "ifnotpresent", **extra}
    a = side.call("POST", "/v1/containers", body, params={"run": "true"})
    ident = a.body.get("uuid", "") if isinstance(a.body, dict) else ""
    if ident:
        side.made.append(ident)
    return a, ident


def create_running(side: Side, name: str, steps: Steps, **extra: Any) -> str:
    """Create and run a container, its answer and the state it reached as two steps; its
    uuid."""
    a, ident = _create(side, name, **extra)
    steps.append(("create run=true", a))
    assert ident, f"{side.name} refused the create: {a.status} {a.body}"
    states = side.settle(ident, ("Running", "Error"))
    steps.append(("states to Running", Answer(200, {"status": states[-1]})))
    return ident


def delete_and_wait(side: Side, ident: str, already: bool = False) -> Answer:
    """Delete a container (unless ``already`` asked for) and wait for the show to answer
    404; that last answer."""
    if not already:
        side.call("DELETE", f"/v1/containers/{ident}", params={"force": "true"})
    deadline = time.monotonic() + 120
    gone = side.call("GET", f"/v1/containers/{ident}")
    while gone.status != 404 and time.monotonic() < deadline:
        time.sleep(0.3)
        gone = side.call("GET", f"/v1/containers/{ident}")
    if gone.status == 404 and ident in side.made:
        side.made.remove(ident)
    return gone


def lifecycle(side: Side) -> Steps:
    """create (run) → Running → show, list → delete refused while running → stop →
    stop again → start → force delete → show is 404."""
    name = f"compat-{uuid.uuid4().hex[:8]}"
    steps: Steps = []
    ident = create_running(side, name, steps)
    steps.append(("show", side.call("GET", f"/v1/containers/{ident}")))
    steps.append(("show by name", side.call("GET", f"/v1/containers/{name}")))
    steps.append(("list by name", side.call("GET", "/v1/containers", params={"name": name})))
    steps.append(("delete running, no force", side.call("DELETE", f"/v1/containers/{ident}")))
    steps.append(("stop", side.call("POST", f"/v1/containers/{ident}/stop",
                                    params={"timeout": "1"})))
    side.settle(ident, ("Stopped",))
    steps.append(("stop a stopped container", side.call("POST", f"/v1/containers/{ident}/stop")))
    steps.append(("start", side.call("POST", f"/v1/containers/{ident}/start")))
    side.settle(ident, ("Running",))
    steps.append(("start a running container",
                  side.call("POST", f"/v1/containers/{ident}/start")))
    steps.append(("force delete", side.call("DELETE", f"/v1/containers/{ident}",
                                            params={"force": "true"})))
    steps.append(("show after delete", delete_and_wait(side, ident, already=True)))
    return steps


def bad_input(side: Side) -> Steps:
    """Creates that must be refused, and calls on a container that does not exist."""
    steps: Steps = []
    missing = str(uuid.uuid4())
    for label, body in (
            ("create without image", {"name": "compat-noimage"}),
            ("create with memory 'abc'", {"image": side.image, "memory": "abc"}),
            ("create with an unknown field", {"image": side.image, "colour": "blue"}),
            ("create with a bad name", {"image": side.image, "name": "bad name!"}),
            ("create with cpu -1", {"image": side.image, "cpu": -1}),
            ("create with a restart policy 'sometimes'",
             {"image": side.image, "restart_policy": {"Name": "sometimes"}}),
            ("create with a non-list command", {"image": side.image, "command": 5})):
        a = side.call("POST", "/v1/containers", body)
        if a.status < 300 and isinstance(a.body, dict) and a.body.get("uuid"):
            side.made.append(a.body["uuid"])          # accepted: cleaned up afterwards
        steps.append((label, a))
    steps.append(("show a missing container", side.call("GET", f"/v1/containers/{missing}")))
    steps.append(("start a missing container",
                  side.call("POST", f"/v1/containers/{missing}/start")))
    steps.append(("delete a missing container",
                  side.call("DELETE", f"/v1/containers/{missing}")))
    steps.append(("unknown action", side.call("POST", f"/v1/containers/{missing}/dance")))
    return steps


def microversions(side: Side) -> Steps:
    """The edges of 1.1..1.40: below, above, latest, none, and a malformed header."""
    steps: Steps = []
    for label, version in (("no version header", ""), ("1.1", "container 1.1"),
                           ("1.40", "container 1.40"), ("latest", "container latest"),
                           ("1.41 (above max)", "container 1.41"),
                           ("1.0 (below min)", "container 1.0"),
                           ("malformed", "container one.two")):
        steps.append((f"list at {label}", side.call("GET", "/v1/containers", version=version)))
    steps.append(("root", side.call("GET", "/")))
    steps.append(("v1 root", side.call("GET", "/v1/")))
    return steps
