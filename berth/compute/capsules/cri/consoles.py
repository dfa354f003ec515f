"""Attach and TTY resize of a CRI capsule's members (``zun attach``, ``resize`` and
``execute_resize`` on a member; ``members`` makes the interactive exec).

The bytes of a console never pass through the agent: containerd's streaming server
hands out a single-use URL (CRI ``Attach`` or ``Exec``), the agent records it
(``berth.console.execs``) under an id of its own, the API binds a console token to
that id, and berth-wsproxy opens the URL (``berth.console.cri_stream``). A resize
therefore cannot be made here: the size goes on the stream's resize channel, which the
proxy holds. The agent writes the size asked for on the console's record; the proxy,
which reads it while the console is open, sends it::

    API resize ─► agent: record.tty_size = "HxW" ─► proxy (reads it about every
                                                      0.3 s) ─► channel 4 {Width, Height}
"""

from __future__ import annotations

import hashlib
import logging

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.console import execs
from berth.db.models import Container
from berth.runtime import base as rt
from berth.runtime.cri.base import PodRuntime

LOG = logging.getLogger(__name__)

#: The path part of containerd's (and the kubelet's) streaming URLs of an attach.
ATTACH_MARKER = "/attach/"


def attach(deps: AgentDeps, pods: PodRuntime, member: Container) -> str:
    """A new attach stream of the member's main process, recorded; the id the
    console token binds to."""
    if not member.container_id:
        raise exc.UncreatedContainer(uuid=member.uuid)
    try:
        seen = pods.member(member.container_id)
    except rt.RuntimeNotFound as err:
        raise exc.Conflict(f"Cannot attach to container {member.uuid}: it has no CRI "
                           f"container any more ({err.msg}).") from err
    if seen.state is None or not seen.state.running:
        status = seen.state.status if seen.state else "unknown"
        raise exc.Conflict(f"Cannot attach to container {member.uuid}: containerd reports "
                           f"it {status}, not running.")
    url = pods.attach_url(member.container_id, tty=bool(member.tty))
    stream_id = hashlib.sha256(url.encode()).hexdigest()
    execs.record(deps.db, member.id, stream_id, url=url)
    LOG.info("attach %s to member %s made on containerd's streaming server",
             stream_id[:12], member.name)
    return stream_id


def resize(deps: AgentDeps, member: Container, height: int, width: int) -> None:
    """``container_resize`` on a member: the size of its newest attach console."""
    record = execs.latest_with_url(deps.db, member.id, ATTACH_MARKER)
    if record is None:
        raise exc.Conflict(f"Container {member.uuid} has no attach console to resize: "
                           f"attach to it first (zun attach), then resize.")
    execs.ask_size(deps.db, record.id, height, width)
    LOG.info("TTY of attach %s asked to be %sx%s", record.exec_id[:12], height, width)


def exec_resize(deps: AgentDeps, exec_id: str, height: int, width: int) -> bool:
    """``container_exec_resize`` of an exec on a CRI streaming server: True when
    ``exec_id`` is one (its size is asked for), False when it is not (a Docker exec)."""
    record = execs.find_by_exec_id(deps.db, exec_id)
    if record is None or not (record.url or "").startswith(("http://", "https://")):
        return False
    execs.ask_size(deps.db, record.id, height, width)
    LOG.info("TTY of exec %s asked to be %sx%s", exec_id[:12], height, width)
    return True
