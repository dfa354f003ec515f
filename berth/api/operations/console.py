"""The API side of execute, execute_resize, attach and resize (api-v1.md §7.7).

Each checks the container's status, calls its agent (host-up check included in
``state.compute``), and for a console issues a single-use token (``berth.console.
tokens``) and answers the proxy URL of api-v1.md §7.8.
"""

from __future__ import annotations

import logging
import re
import shlex
from typing import Any
from urllib.parse import urlencode

from berth.api.operations.members import get_container_or_member
from berth.api.params import absent
from berth.api.schemas.types import integer, strict_bool, string
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute import states
from berth.console import execs, tokens

LOG = logging.getLogger(__name__)

_EXEC_ID = re.compile(r"[0-9a-f]{64}")


def console_url(base_url: str, **query: str) -> str:
    """``base_url`` with ``query`` appended (``?`` or ``&`` as the base needs)."""
    joiner = "&" if "?" in base_url else "?"
    return f"{base_url}{joiner}{urlencode(query)}"


def _flag(params: dict[str, Any], name: str, default: bool) -> bool:
    value = params.get(name)
    return default if absent(value) else strict_bool(name, value)


def _size(params: dict[str, Any], name: str) -> int:
    value = params.get(name)
    if absent(value):
        raise exc.InvalidParameterValue(
            err=f"Missing '{name}': give the terminal's {'height' if name == 'h' else 'width'}"
                f" as a whole number of at least 1.")
    return integer(name, value, minimum=1, maximum=65535, what="a whole number of "
                   + ("rows" if name == "h" else "columns"))


def parse_command(value: Any) -> list[str]:
    """The ``command`` parameter: a string of at least one character, split with shell
    rules (zunclient's CLI sends every word double-quoted)."""
    if absent(value):
        raise exc.InvalidParameterValue(err="Missing 'command': give the command to run.")
    text = string("command", value, min_length=1, what="a command line")
    try:
        argv = shlex.split(text)
    except ValueError as err:
        raise exc.InvalidParameterValue(
            err=f"Invalid input for field 'command'. Value: '{text}'. {err}: close "
                f"every quote.") from err
    if not argv:
        raise exc.InvalidParameterValue(
            err=f"Invalid input for field 'command'. Value: '{text}'. It names no "
                f"program to run.")
    return argv


def execute(state: ApiState, ctx: RequestContext, ident: str, params: dict[str, Any]
            ) -> dict[str, Any]:
    """``POST .../execute``: run a command (``run=true``), or create an exec whose
    console the returned ``proxy_url`` opens (``run=false``)."""
    argv = parse_command(params.get("command"))
    run = _flag(params, "run", True)
    interactive = _flag(params, "interactive", False)
    row = get_container_or_member(state, ctx, ident, "container:execute")   # members too
    states.check_action_allowed("execute", row.status or "", row.uuid)
    with container_context(row.uuid):
        answer = state.compute.call(ctx, row, "container_exec", command=argv, run=run,
                                    interactive=interactive)
        exec_id = answer.get("exec_id")
        proxy_url = None
        if exec_id:
            token = tokens.issue(state.db, row.uuid, ttl=state.settings.console_token_ttl,
                                 exec_id=exec_id)
            proxy_url = console_url(state.settings.console_base_url, token=token,
                                    uuid=row.uuid, exec_id=exec_id)
    return {"output": answer.get("output"), "exit_code": answer.get("exit_code"),
            "exec_id": exec_id, "proxy_url": proxy_url}


def execute_resize(state: ApiState, ctx: RequestContext, ident: str,
                   params: dict[str, Any]) -> None:
    """``POST .../execute_resize``: resize the TTY of an exec made in this container."""
    exec_id = params.get("exec_id")
    if absent(exec_id) or not isinstance(exec_id, str) or not _EXEC_ID.fullmatch(exec_id):
        raise exc.InvalidParameterValue(
            err=f"Invalid input for field 'exec_id'. Value: '{exec_id}'. It must be the "
                f"64 lowercase hexadecimal characters returned by execute.")
    height, width = _size(params, "h"), _size(params, "w")
    row = get_container_or_member(state, ctx, ident, "container:execute_resize")
    states.check_action_allowed("execute_resize", row.status or "", row.uuid)
    if not execs.belongs(state.db, row.id, exec_id):
        # The RPC names no container: without this check a user could resize any exec.
        raise exc.Invalid(f"No such exec instance: {exec_id} in container {row.uuid}.")
    state.compute.check_host(row)
    state.compute.call_host(ctx, str(row.host), "container_exec_resize", exec_id=exec_id,
                            height=height, width=width)


def attach(state: ApiState, ctx: RequestContext, ident: str) -> str:
    """``GET .../attach``: the websocket URL of the container's (or a capsule
    member's) console. The agent answers the engine's id of the container, or, for a
    member of a CRI pod, the id of the attach stream it made: the token is bound to
    that stream as an exec console's is to its exec."""
    row = get_container_or_member(state, ctx, ident, "container:attach")
    states.check_action_allowed("attach", row.status or "", row.uuid)
    if not row.interactive:
        raise exc.NoInteractiveFlag(uuid=row.uuid)
    with container_context(row.uuid):
        answer = state.compute.call(ctx, row, "container_attach")
        stream = str(answer) if answer and answer != row.container_id else None
        token = tokens.issue(state.db, row.uuid, ttl=state.settings.console_token_ttl,
                             exec_id=stream, kind=tokens.KIND_ATTACH)
    query = {"exec_id": stream} if stream else {}
    return console_url(state.settings.console_base_url, token=token, uuid=row.uuid, **query)


def resize(state: ApiState, ctx: RequestContext, ident: str, params: dict[str, Any]) -> None:
    """``POST .../resize``: resize the TTY of the container's main process."""
    height, width = _size(params, "h"), _size(params, "w")
    row = get_container_or_member(state, ctx, ident, "container:resize")
    states.check_action_allowed("resize", row.status or "", row.uuid)
    with container_context(row.uuid):
        state.compute.call(ctx, row, "container_resize", height=height, width=width)
