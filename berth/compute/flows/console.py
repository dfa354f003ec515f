"""exec, exec resize, attach checks and TTY resize: the agent's side of a console.

These are RPC *calls*: they run in the caller's RPC thread, take no per-container
lock and set no task_state (as Zun: a console must work while an action runs). The
interactive bytes never pass through the agent; the WebSocket proxy reaches the
engine itself (``berth.console``).
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Sequence
from typing import Any

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.console import execs
from berth.db import containers
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

#: Engine words for "that exec does not exist (any more)".
_NO_EXEC_MARKERS = ("no such exec", "process not found")


def _docker_id(row: Container) -> str:
    if not row.container_id:
        raise exc.UncreatedContainer(uuid=row.uuid)
    return row.container_id


def _argv(command: str | Sequence[str]) -> list[str]:
    """The command as argv: a list as given, a string split with shell rules."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as err:
            raise exc.InvalidParameterValue(
                err=f"Invalid command {command!r}: {err}. Quote it as a shell would.") from err
    else:
        argv = [str(word) for word in command]
    if not argv:
        raise exc.InvalidParameterValue(err="The command is empty; give a program to run.")
    return argv


def execute(deps: AgentDeps, uuid: str, command: str | Sequence[str], run: bool,
            interactive: bool) -> dict[str, Any]:
    """``container_exec``. With ``run``: run the command to its end (at most
    ``execute_timeout`` seconds, else 409) and return its output and exit code.
    Without: create the exec (stdin and a TTY when ``interactive``), record it, and
    return its id for the console proxy to start. The ``token`` key is Zun's; the API
    issues the real console token."""
    row = containers.get_by_uuid(deps.db, uuid)
    argv = _argv(command)
    member = deps.capsules.member_console(row)
    if member is not None:          # a member the capsule engine runs
        return member.execute(deps, row, argv, run, interactive)
    exec_id = deps.runtime.exec_create(_docker_id(row), argv, interactive=interactive)
    if not run:
        execs.record(deps.db, row.id, exec_id)
        LOG.info("exec %s of %s created for the console proxy", exec_id[:12], argv[0])
        return {"output": None, "exit_code": None, "exec_id": exec_id, "token": None}
    timeout = deps.settings.execute_timeout
    try:
        result = deps.runtime.exec_run(exec_id, timeout=timeout)
    except TimeoutError:
        LOG.warning("exec %s (%s) did not end within %s s; left running", exec_id[:12],
                    shlex.join(argv), timeout)
        raise exc.Conflict(
            f"Timeout on executing command: {shlex.join(argv)} did not end within "
            f"{timeout:g} s ([docker]execute_timeout) and goes on in the container. Run "
            f"long commands interactively (zun exec -i) instead.") from None
    LOG.info("exec of %s exited with %s", argv[0], result.exit_code)
    return {"output": result.output, "exit_code": result.exit_code, "exec_id": None,
            "token": None}


def exec_resize(deps: AgentDeps, exec_id: str, height: int, width: int) -> None:
    """``container_exec_resize``: a 400 (Invalid) when the engine has no such exec."""
    if deps.capsules.exec_resize(deps, exec_id, height, width):
        return
    try:
        deps.runtime.exec_resize(exec_id, height, width)
    except rt.RuntimeDriverError as err:
        if isinstance(err, rt.RuntimeNotFound) or any(
                marker in err.msg.lower() for marker in _NO_EXEC_MARKERS):
            raise exc.Invalid(f"No such exec instance: {exec_id}. It has ended or was "
                              f"never started; open a new exec.") from err
        raise


def attach(deps: AgentDeps, uuid: str) -> str:
    """``container_attach``: check that the engine runs the container and return its
    Docker id (the API issues the token and builds the URL). For a member of a CRI
    pod: the id of the attach stream made for it, which the token binds to."""
    row = containers.get_by_uuid(deps.db, uuid)
    member = deps.capsules.member_console(row)
    if member is not None:
        return member.attach(deps, row)
    docker_id = _docker_id(row)
    seen = deps.runtime.inspect(docker_id)
    if seen.state is None or not seen.state.running:
        status = seen.state.status if seen.state else "unknown"
        raise exc.Conflict(f"Cannot attach to container {uuid}: Docker reports it "
                           f"{status}, not running. Start it first.")
    return docker_id


def resize(deps: AgentDeps, uuid: str, height: int, width: int) -> None:
    """``container_resize``: the TTY of the container's main process."""
    row = containers.get_by_uuid(deps.db, uuid)
    member = deps.capsules.member_console(row)
    if member is not None:
        member.resize(deps, row, height, width)
        return
    deps.runtime.resize(_docker_id(row), height, width)
    LOG.info("TTY resized to %sx%s", height, width)
