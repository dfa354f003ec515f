"""Scenarios over a running container's actions and calls, run on both services: pause,
unpause, rename, update, logs, top, stats, kill, reboot, exec, network_list, archives,
and each refused in a state that does not allow it."""

from __future__ import annotations

import base64
import io
import tarfile
import uuid

from compat.differ import Answer
from compat.scenarios import Side, Steps, create_running, delete_and_wait


def _tar(name: str, data: bytes) -> str:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return base64.b64encode(buf.getvalue()).decode()


def actions(side: Side) -> Steps:
    """A running container through every action that keeps it, then delete."""
    name = f"compat-{uuid.uuid4().hex[:8]}"
    steps: Steps = []
    ident = create_running(side, name, steps)
    path = f"/v1/containers/{ident}"
    steps.append(("pause", side.call("POST", f"{path}/pause")))
    side.settle(ident, ("Paused",))
    steps.append(("pause a paused container", side.call("POST", f"{path}/pause")))
    steps.append(("stop a paused container", side.call("POST", f"{path}/stop")))
    steps.append(("unpause", side.call("POST", f"{path}/unpause")))
    side.settle(ident, ("Running",))
    steps.append(("unpause a running container", side.call("POST", f"{path}/unpause")))
    renamed = f"{name}-renamed"
    steps.append(("rename", side.call("POST", f"{path}/rename", params={"name": renamed})))
    steps.append(("rename to a bad name",
                  side.call("POST", f"{path}/rename", params={"name": "bad name!"})))
    steps.append(("update memory", side.call("PATCH", path, {"memory": "256"})))
    steps.append(("update nothing", side.call("PATCH", path, {})))
    steps.append(("update an unknown field", side.call("PATCH", path, {"colour": "red"})))
    steps.append(("logs", side.call("GET", f"{path}/logs", params={"stdout": "true"})))
    steps.append(("logs with a bad tail", side.call("GET", f"{path}/logs",
                                                    params={"tail": "lots"})))
    steps.append(("top", side.call("GET", f"{path}/top")))
    steps.append(("stats", side.call("GET", f"{path}/stats")))
    steps.append(("exec run", side.call("POST", f"{path}/execute",
                                        params={"command": "echo hello", "run": "true"})))
    steps.append(("exec without a command", side.call("POST", f"{path}/execute")))
    steps.append(("put_archive", side.call(
        "POST", f"{path}/put_archive", {"path": "/tmp", "data": _tar("compat.txt", b"hi\n")})))
    steps.append(("get_archive", side.call("GET", f"{path}/get_archive",
                                           params={"path": "/tmp/compat.txt"})))
    steps.append(("get_archive of a missing path", side.call(
        "GET", f"{path}/get_archive", params={"path": "/no/such/file"})))
    steps.append(("network_list", side.call("GET", f"{path}/network_list")))
    steps.append(("kill with a bad signal", side.call("POST", f"{path}/kill",
                                                      params={"signal": "SIGNOPE"})))
    steps.append(("reboot", side.call("POST", f"{path}/reboot", params={"timeout": "1"})))
    side.settle(ident, ("Running",))
    steps.append(("kill", side.call("POST", f"{path}/kill", params={"signal": "SIGKILL"})))
    side.settle(ident, ("Stopped", "Error"))
    steps.append(("show after kill", side.call("GET", path)))
    steps.append(("pause a stopped container", side.call("POST", f"{path}/pause")))
    steps.append(("exec in a stopped container", side.call(
        "POST", f"{path}/execute", params={"command": "true", "run": "true"})))
    steps.append(("delete a stopped container", side.call("DELETE", path)))
    steps.append(("show after delete", delete_and_wait(side, ident, already=True)))
    return steps


def interactive(side: Side) -> Steps:
    """A container with a TTY: its console calls (attach URL, resize)."""
    name = f"compat-{uuid.uuid4().hex[:8]}"
    steps: Steps = []
    ident = create_running(side, name, steps, interactive=True, tty=True)
    path = f"/v1/containers/{ident}"
    attach = side.call("GET", f"{path}/attach")
    # The URL itself names each service's proxy: only its type is compared.
    steps.append(("attach", Answer(attach.status, "url" if isinstance(attach.body, str)
                                   else attach.body)))
    steps.append(("resize", side.call("POST", f"{path}/resize", params={"h": "30", "w": "100"})))
    steps.append(("resize with a bad height",
                  side.call("POST", f"{path}/resize", params={"h": "tall", "w": "100"})))
    steps.append(("force delete", side.call("DELETE", path, params={"force": "true"})))
    steps.append(("show after delete", delete_and_wait(side, ident, already=True)))
    return steps
