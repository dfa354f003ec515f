"""The API side of logs, top, stats, get_archive, put_archive and commit (api-v1.md §7.7).

Each validates its parameters (400 naming the field and what is accepted), checks the
container's status against ``VALID_STATES`` (409 naming the allowed statuses), refuses
a container that has no Docker container yet (400 ``UncreatedContainer``), then calls
the container's agent (``state.compute.call`` checks that its host is up first). The
``parse_*`` functions are pure, for the unit tests.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import re
from typing import Any

from berth.api.operations.containers import get
from berth.api.operations.members import get_container_or_member
from berth.api.params import absent
from berth.api.schemas.types import extended_bool, invalid, string
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute import states
from berth.db import actions
from berth.db.models import Container
from berth.image.reference import parse_image

LOG = logging.getLogger(__name__)

#: The forms ``since`` may take besides epoch seconds (Zun's agent parses the first).
SINCE_FORMATS = ("%Y-%m-%d %H:%M:%S,%f", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S")
_EPOCH = re.compile(r"[0-9]{1,12}(\.[0-9]{1,9})?")
_TAG = re.compile(r"[\w][\w.-]{0,127}", re.ASCII)
_SINCE_HELP = ("It must be epoch seconds (e.g. 1700000000) or a UTC time written "
               "'YYYY-MM-DD HH:MM:SS,ffffff' (the fraction is optional).")


# -- parameters ---------------------------------------------------------------------

def _flag(params: dict[str, Any], name: str, default: bool) -> bool:
    value = params.get(name)
    return default if absent(value) else extended_bool(name, value)


def parse_tail(value: Any) -> int | None:
    """``tail``: a number of lines (0 or more), or ``all`` / absent for every line (None)."""
    if absent(value) or (isinstance(value, str) and value.lower() == "all"):
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isdigit() and len(value) <= 18:
        return int(value)
    raise invalid("tail", value, "It must be a number of lines (0 or more) or 'all'.")


def parse_since(value: Any) -> int | float | None:
    """``since``: epoch seconds, or a time written ``YYYY-MM-DD HH:MM:SS,ffffff`` (read
    as UTC, as Zun's agent and the Docker SDK read it), or absent/``None``."""
    if absent(value) or value == "":
        return None
    if isinstance(value, bool):
        raise invalid("since", value, _SINCE_HELP)
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value < 0:
            raise invalid("since", value, _SINCE_HELP)
        return value
    if not isinstance(value, str):
        raise invalid("since", value, _SINCE_HELP)
    text = value.strip()
    if _EPOCH.fullmatch(text):
        return int(text) if "." not in text else float(text)
    for fmt in SINCE_FORMATS:
        try:
            moment = dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
        return moment.replace(tzinfo=dt.UTC).timestamp()
    raise invalid("since", value, _SINCE_HELP)


def parse_logs_params(params: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``container_logs`` (minus ``container``). When neither
    stream is wanted, both are given, as zunclient does (Docker refuses neither)."""
    stdout = _flag(params, "stdout", True)
    stderr = _flag(params, "stderr", True)
    if not stdout and not stderr:
        stdout = stderr = True
    tail = parse_tail(params.get("tail"))
    return {"stdout": stdout, "stderr": stderr,
            "timestamps": _flag(params, "timestamps", False),
            "tail": "all" if tail is None else tail,
            "since": parse_since(params.get("since"))}


def parse_ps_args(value: Any) -> str | None:
    if absent(value) or value == "":
        return None
    return string("ps_args", value, min_length=1, max_length=255, what="ps options")


def parse_path(value: Any) -> str:
    if absent(value) or value == "":
        raise exc.InvalidParameterValue(
            err="Missing 'path': give the absolute path in the container, e.g. "
                "path=/etc/hostname.")
    return string("path", value, min_length=1, max_length=4096, what="a path")


def parse_commit_target(repository: Any, tag: Any) -> tuple[str, str]:
    """(repository, tag) of the image to make: Docker's reference grammar, no registry
    prefix added, no digest, tag ``latest`` when none is given. The tag may also come
    inside ``repository`` (``repo:v1``) when ``tag`` is absent."""
    if absent(repository) or repository == "":
        raise exc.InvalidParameterValue(
            err="Missing 'repository': name the image to create, e.g. repository=myimage "
                "and optionally tag=v1.")
    text = string("repository", repository, min_length=1, max_length=255,
                  what="an image repository name")
    ref = parse_image(text)
    if ref.digest:
        raise invalid("repository", repository,
                      "A commit makes a new image: name it with a tag, not a digest.")
    tagged = ":" in text.rsplit("/", 1)[-1]
    if absent(tag) or tag == "":
        return ref.repo, ref.tag
    if tagged:
        raise invalid("repository", repository,
                      f"It already carries a tag and tag={tag!r} gives another; give the "
                      f"tag once.")
    if not isinstance(tag, str) or not _TAG.fullmatch(tag):
        raise invalid("tag", tag, "A tag is 1 to 128 letters, digits, '_', '.' or '-', "
                                  "not starting with '.' or '-'.")
    return ref.repo, tag


# -- operations ---------------------------------------------------------------------

def _ready(state: ApiState, ctx: RequestContext, ident: str, action: str) -> Container:
    row = get(state, ctx, ident, f"container:{action}")
    states.check_action_allowed(action, row.status or "", row.uuid)
    if not row.container_id:
        raise exc.UncreatedContainer(uuid=row.uuid)
    return row


def logs(state: ApiState, ctx: RequestContext, ident: str, params: dict[str, Any]) -> str:
    kwargs = parse_logs_params(params)
    row = get_container_or_member(state, ctx, ident, "container:logs")   # members too
    states.check_action_allowed("logs", row.status or "", row.uuid)
    if not row.container_id:
        raise exc.UncreatedContainer(uuid=row.uuid)
    return str(state.compute.call(ctx, row, "container_logs", **kwargs))


def top(state: ApiState, ctx: RequestContext, ident: str, params: dict[str, Any]
        ) -> dict[str, Any]:
    ps_args = parse_ps_args(params.get("ps_args"))
    row = _ready(state, ctx, ident, "top")
    answer: dict[str, Any] = state.compute.call(ctx, row, "container_top", ps_args=ps_args)
    return answer


def stats(state: ApiState, ctx: RequestContext, ident: str) -> dict[str, Any]:
    row = _ready(state, ctx, ident, "stats")
    answer: dict[str, Any] = state.compute.call(ctx, row, "container_stats")
    return answer


def get_archive(state: ApiState, ctx: RequestContext, ident: str, params: dict[str, Any],
                encode: bool) -> dict[str, Any]:
    path = parse_path(params.get("path"))
    row = _ready(state, ctx, ident, "get_archive")
    data, stat = state.compute.call(ctx, row, "container_get_archive", path=path,
                                    encode_data=encode)
    return {"data": data, "stat": stat}


def put_archive(state: ApiState, ctx: RequestContext, ident: str, params: dict[str, Any],
                decode: bool) -> None:
    path = parse_path(params.get("path"))
    data = params.get("data")
    if data is None:
        raise exc.InvalidParameterValue(
            err="Missing 'data': send the tar archive in the JSON body as {\"data\": ...} "
                "(base64-encoded from API version 1.25).")
    if not isinstance(data, str):
        raise invalid("data", data, "It must be a string holding the tar archive "
                                    "(base64-encoded from API version 1.25).")
    row = _ready(state, ctx, ident, "put_archive")
    state.compute.call(ctx, row, "container_put_archive", path=path, data=data,
                       decode_data=decode)


def commit(state: ApiState, ctx: RequestContext, ident: str, params: dict[str, Any]
           ) -> dict[str, str]:
    """Commit synchronously: when this returns, the image exists on the container's
    node and ``uuid`` names berth's image record of it."""
    repository, tag = parse_commit_target(params.get("repository"), params.get("tag"))
    row = _ready(state, ctx, ident, "commit")
    if row.task_state:
        raise exc.TaskInProgress(uuid=row.uuid, task_state=row.task_state)
    state.compute.check_host(row)
    with container_context(row.uuid):
        actions.action_start(state.db, ctx, row.uuid, "commit")
        try:
            answer: dict[str, str] = state.compute.call(
                ctx, row, "container_commit", repository=repository, tag=tag)
        except exc.RPCTimeout:
            raise    # the agent may still finish it; its event will say how it went
        except exc.RPCError:
            actions.action_finish(state.db, row.uuid, ctx.request_id, error=True)
            raise
        LOG.info("committed to %s:%s as image record %s", repository, tag,
                 answer.get("uuid"))
    return answer
