"""Logs and non-interactive exec of a CRI capsule's members (``zun logs``, ``zun exec``
on a member's uuid; the docker driver's members are Docker containers and need
nothing of this).

Logs are read from the files containerd writes for the member (the kubelet's CRI log
format, one line per record)::

    2026-12-02T11:52:00.123456789Z stdout F a whole line
    2026-12-02T11:52:00.223456789Z stderr P the first part of a long line, ...
    2026-12-02T11:52:00.223456790Z stderr F ... and its end

``P`` records are joined with the ``F`` that ends them. A restarted member
(``restarts``) appends to the same file, so its logs hold every attempt, as Docker's
do across restarts. ``stdout``, ``stderr``, ``timestamps``, ``tail`` and ``since``
mean what they mean for ``docker logs``.

Exec runs through the runtime's ExecSync (output and exit code, within
``[docker]execute_timeout``); an interactive one through containerd's streaming server,
whose URL berth-wsproxy opens (``berth.console.cri_stream``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import shlex
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.console import execs
from berth.db import capsules
from berth.db.models import Container
from berth.runtime import base as rt
from berth.runtime.cri.base import PodRuntime

LOG = logging.getLogger(__name__)


def log_path(deps: AgentDeps, pods: PodRuntime, member: Container) -> Path:
    capsule = capsules.find_by_id(deps.db, member.capsule_id) \
        if member.capsule_id is not None else None
    if capsule is None:
        raise exc.ContainerNotFound(container=member.uuid)
    return pods.log_path(capsule.uuid, member.uuid)


def parse_time(text: str) -> dt.datetime | None:
    """RFC 3339 with nanoseconds (Python 3.11 keeps microseconds)."""
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def records(lines: Iterator[str]) -> Iterator[tuple[str, str, str]]:
    """(timestamp, stream, text) of each whole record (partial ones joined)."""
    pending: dict[str, list[str]] = {}
    for line in lines:
        parts = line.rstrip("\n").split(" ", 3)
        if len(parts) < 3:
            continue
        stamp, stream, tag = parts[:3]
        text = parts[3] if len(parts) == 4 else ""
        if tag == "P":
            pending.setdefault(stream, []).append(text)
            continue
        yield stamp, stream, "".join(pending.pop(stream, [])) + text


def read_logs(path: Path, *, stdout: bool, stderr: bool, timestamps: bool,
              tail: int | str | None, since: float | None) -> str:
    """The log file's records as ``docker logs`` prints them."""
    if not path.exists():
        return ""
    wanted = {s for s, on in (("stdout", stdout), ("stderr", stderr)) if on}
    limit = None if tail in (None, "all") else int(tail)  # type: ignore[arg-type]
    if limit is not None and limit <= 0:
        return ""
    since_at = dt.datetime.fromtimestamp(since, tz=dt.UTC) if since else None
    kept: deque[str] = deque(maxlen=limit)
    with path.open(encoding="utf-8", errors="replace") as f:
        for stamp, stream, text in records(iter(f)):
            if stream not in wanted:
                continue
            if since_at is not None:
                at = parse_time(stamp)
                if at is not None and at < since_at:
                    continue
            kept.append(f"{stamp} {text}\n" if timestamps else f"{text}\n")
    return "".join(kept)


def logs(deps: AgentDeps, pods: PodRuntime, member: Container, **kwargs: Any) -> str:
    return read_logs(log_path(deps, pods, member), **kwargs)


def execute(deps: AgentDeps, pods: PodRuntime, member: Container, argv: Sequence[str],
            run: bool, interactive: bool) -> dict[str, Any]:
    """``container_exec`` on a member: ExecSync with ``run``; otherwise an exec of
    containerd's streaming server, recorded under an id of its own (the console proxy
    finds its URL by that id)."""
    if not member.container_id:
        raise exc.UncreatedContainer(uuid=member.uuid)
    if not run:
        url = pods.exec_url(member.container_id, list(argv), tty=interactive)
        exec_id = hashlib.sha256(url.encode()).hexdigest()
        execs.record(deps.db, member.id, exec_id, url=url)
        LOG.info("exec %s of %s in member %s created on containerd's streaming server",
                 exec_id[:12], argv[0], member.name)
        return {"output": None, "exit_code": None, "exec_id": exec_id, "token": None}
    timeout = deps.settings.execute_timeout
    try:
        output, code = pods.exec_sync(member.container_id, list(argv), timeout)
    except TimeoutError:
        raise exc.Conflict(
            f"Timeout on executing command: {shlex.join(argv)} did not end within "
            f"{timeout:g} s ([docker]execute_timeout).") from None
    except rt.RuntimeNotFound as err:
        raise exc.Conflict(f"Container {member.uuid} has no CRI container any more "
                           f"({err.msg}); delete its capsule and create it again.") from err
    LOG.info("exec of %s in member %s exited with %s", argv[0], member.name, code)
    return {"output": output, "exit_code": code, "exec_id": None, "token": None}
