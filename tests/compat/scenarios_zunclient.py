"""The scenario python-zunclient drives, on both services: the calls `zun run`, `zun
show`, `zun list`, `zun stop/start/pause/unpause/rename/update/logs/exec/top/kill/
delete` make, through the real client library at microversion 1.40. An answer is the
resource the client returns, or the exception it raises (class and HTTP code): what a
program using the client sees."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from compat.differ import Answer
from compat.scenarios import Side, Steps


def client(side: Side) -> Any:
    from zunclient import client as zc

    c = zc.Client("1.40", endpoint_override=f"{side.http.base_url}/v1",
                  auth_token=side.http.headers["X-Auth-Token"])
    c.http_client.session.timeout = 120
    return c


def _answer(side: Side, call: Callable[[], Any]) -> Answer:
    """What the client returned or raised, as an Answer."""
    from zunclient import exceptions

    side.requests += 1
    try:
        value = call()
    except exceptions.ClientException as err:
        status = getattr(err, "http_status", None) or getattr(err, "code", 0)
        return Answer(int(status or 0), {"raised": type(err).__name__})
    if hasattr(value, "_info"):
        return Answer(200, value._info)
    if isinstance(value, list):
        return Answer(200, [v._info if hasattr(v, "_info") else v for v in value])
    if isinstance(value, tuple):            # (response, body) of the client's actions
        resp, body = value
        return Answer(resp.status_code, body)
    return Answer(200, value)


def _status(zun: Any, ident: str, want: tuple[str, ...]) -> str:
    deadline = time.monotonic() + 180
    status = ""
    while time.monotonic() < deadline:
        shown = zun.containers.get(ident)
        status = shown.status
        if status in want and not shown.task_state:
            return status
        time.sleep(0.2)
    return status


def zunclient(side: Side) -> Steps:
    zun = client(side)
    name = f"compat-zc-{uuid.uuid4().hex[:6]}"
    steps: Steps = []
    made = _answer(side, lambda: zun.containers.run(
        name=name, image=side.image, command=["sleep", "600"],
        image_pull_policy="ifnotpresent"))
    steps.append(("run", made))
    ident = made.body.get("uuid") if isinstance(made.body, dict) else None
    assert ident, f"{side.name}: zunclient's run failed: {made.status} {made.body}"
    side.made.append(ident)
    steps.append(("reaches Running", Answer(200, {"status": _status(
        zun, ident, ("Running", "Error"))})))
    steps.append(("show", _answer(side, lambda: zun.containers.get(ident))))
    steps.append(("list", _answer(side, lambda: [c for c in zun.containers.list()
                                                 if c.name == name])))
    steps.append(("logs", Answer(200, {"is_text": isinstance(
        zun.containers.logs(ident, stdout=True, stderr=True), str)})))
    steps.append(("exec", _answer(side, lambda: zun.containers.execute(
        ident, command="echo hi", run=True))))
    steps.append(("top", _answer(side, lambda: zun.containers.top(ident))))
    steps.append(("rename", _answer(side, lambda: zun.containers.rename(ident, name + "-r"))))
    steps.append(("update", _answer(side, lambda: zun.containers.update(ident, memory="256"))))
    steps.append(("pause", _answer(side, lambda: zun.containers.pause(ident))))
    _status(zun, ident, ("Paused",))
    steps.append(("delete paused, no force", _answer(side, lambda: zun.containers.delete(ident))))
    steps.append(("unpause", _answer(side, lambda: zun.containers.unpause(ident))))
    _status(zun, ident, ("Running",))
    steps.append(("stop", _answer(side, lambda: zun.containers.stop(ident, 1))))
    steps.append(("reaches Stopped", Answer(200, {"status": _status(zun, ident, ("Stopped",))})))
    steps.append(("start", _answer(side, lambda: zun.containers.start(ident))))
    _status(zun, ident, ("Running",))
    steps.append(("kill", _answer(side, lambda: zun.containers.kill(ident, "SIGKILL"))))
    _status(zun, ident, ("Stopped", "Error"))
    steps.append(("delete", _answer(side, lambda: zun.containers.delete(ident, force=True))))
    missing = str(uuid.uuid4())
    steps.append(("show a missing container",
                  _answer(side, lambda: zun.containers.get(missing))))
    steps.append(("run without an image", _answer(side, lambda: zun.containers.run(
        name=name + "-x", image=""))))
    return steps
