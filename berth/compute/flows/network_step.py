"""The network step of the flows that start, stop, create, rebuild or delete a
container (and of a Docker capsule's release): the reservation begun beside the
engine's start (``reserve_networks``, undone by ``drop_reservation``), the plug or
unplug that follows the engine's action (``follow_network``, ``unplug_quietly``) and
what it leaves for the row's write (``NetworkStep``). The plug itself is
``berth.compute.networking``'s; this module decides when, and what a failure means
for the container."""

from __future__ import annotations

import concurrent.futures as cf
import logging
import os
import time
from dataclasses import dataclass

from berth.compute import networking
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

#: How long the engine may take to report the end of a process whose network
#: namespace is gone (Docker learns of an exit from containerd's event, after the
#: process is reaped), before a failed plug is taken for a network failure.
ENGINE_CATCH_UP = 2.0


def reserve_networks(deps: AgentDeps, row: Container) -> cf.Future[None] | None:
    """The container's addresses taken and rules laid by the CNI daemon beside the
    engine's start (``ContainerNetworks.reserve``), which takes hundreds of
    milliseconds, so that the plug after it only makes the interfaces (bench P1).
    None when the container has no local network."""
    if deps.networks is None or not networking.requested(row):
        return None
    return common.overlapped(deps, networking.reserve, deps.networks, row)


def drop_reservation(deps: AgentDeps, row: Container,
                     reserving: cf.Future[None] | None) -> None:
    """Undo of ``reserve_networks`` when the start failed: no plug will claim it."""
    if reserving is None:
        return
    common.settle(reserving)
    unplug_quietly(deps, row, None)


@dataclass(frozen=True, slots=True)
class NetworkStep:
    """What the network step after an engine action leaves for the row's write: the
    engine's state to write (after a failed plug, the stopped container's), the
    values that record the plug, and the failure to raise once written."""

    seen: rt.RuntimeContainer
    values: dict[str, object]
    failed: networking.NetworkPlugFailed | None = None


def follow_network(deps: AgentDeps, row: Container, seen: rt.RuntimeContainer
                   ) -> NetworkStep:
    """The network step after an engine action: plugged into the running process's
    namespace, or unplugged when none runs (``unplug_quietly``). A plug that fails
    (undone by the network step) stops the container again, since it would run
    without its network: Stopped, with the reason in ``status_reason``, as Zun does
    when its network hook fails; a start may be retried."""
    if seen.state is None or not seen.state.running:
        return NetworkStep(seen, unplug_quietly(deps, row, seen))
    try:
        return NetworkStep(seen, networking.follow(deps.networks, row, seen))
    except networking.NetworkPlugFailed as err:
        container_id = common.require_created(row)
        ended = _process_ended(deps, container_id, seen)
        if ended is not None:
            # Not a network problem: the process exited (or Docker restarted it)
            # before it could be plugged. Its exit is the story, not the plug.
            LOG.info("the process %s ended before its network was plugged (%s)",
                     seen.state.pid, err.msg)
            if ended.state is not None and ended.state.running:
                return NetworkStep(ended, {})   # a restart by Docker: the PLEG plugs it
            return NetworkStep(ended, unplug_quietly(deps, row, ended))
        reason = f"{err.msg.rstrip('.')}. The container was stopped; start it again."
        LOG.error("%s", reason)
        try:
            deps.runtime.stop(container_id, 0)
            stopped = deps.runtime.inspect(container_id)
        except rt.RuntimeDriverError as stop_err:
            LOG.warning("could not stop the unplugged container: %s", stop_err.msg)
            stopped = seen
        return NetworkStep(stopped, {"status_reason": reason[:2000]}, err)


def _process_ended(deps: AgentDeps, container_id: str, seen: rt.RuntimeContainer,
                   catch_up: float = ENGINE_CATCH_UP) -> rt.RuntimeContainer | None:
    """What the engine says now, when the process ``seen`` ran is gone; else None.
    A process that exited as it was plugged (a command that ends at once) is still
    running by the engine's word for a while after the kernel took its namespace (the
    engine learns of an exit only once the process is reaped): while the process has
    no namespace, the engine is asked again, up to ``catch_up`` seconds."""
    deadline = time.monotonic() + catch_up
    while True:
        try:
            now = deps.runtime.inspect(container_id)
        except rt.RuntimeDriverError:
            return None
        if now.state is None or seen.state is None:
            return None
        if not (now.state.running and now.state.pid == seen.state.pid):
            return now
        if process_alive(seen.state.pid) or time.monotonic() >= deadline:
            return None
        time.sleep(0.02)


def process_alive(pid: int | None) -> bool:
    """Whether ``pid`` still holds its network namespace in this node's process table
    (the kernel drops a process's namespaces as it begins to exit, before it is a
    zombie); True when that cannot be told (no pid, ``/proc`` unreadable). A process
    of another pid namespace reads as gone: the engine is then asked until
    ``catch_up``."""
    if not pid:
        return True
    try:
        os.stat(f"/proc/{pid}/ns/net")
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def unplug_quietly(deps: AgentDeps, row: Container, seen: rt.RuntimeContainer | None
                   ) -> dict[str, object]:
    """The network step after a stop (``seen`` not running) or a delete (None): the
    row values that record the unplug; a daemon that does not answer is logged (its
    sync pass removes attachments whose namespace is gone)."""
    try:
        if seen is None:
            return networking.unplug(deps.networks, row)
        return networking.follow(deps.networks, row, seen)
    except networking.NetworkPlugFailed as err:
        LOG.warning("%s; the CNI daemon's sync pass removes it later", err.msg)
        return {}
