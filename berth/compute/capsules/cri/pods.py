"""Removing a capsule's pod: StopPodSandbox (every member killed at once, the CNI
network torn down), then RemovePodSandbox (members and sandbox gone), then what the
node keeps of it (logs, cgroup directories). Create's undo, delete and recovery
all remove a pod so; :func:`sweep_orphans` removes the pods of this host that no
capsule reaches (at start-up and periodically, as Docker's orphans are)."""

from __future__ import annotations

import logging
import time

from berth.common.log import container_context
from berth.compute.deps import AgentDeps
from berth.compute.states import Status
from berth.db import containers
from berth.runtime import base as rt
from berth.runtime.cri.base import PodRuntime

LOG = logging.getLogger(__name__)


def remove_pod(pods: PodRuntime, pod_id: str, uuid: str, patience: float = 60.0,
               first_pause: float = 0.25) -> None:
    """Stop and remove the pod ``pod_id`` of capsule ``uuid``; RuntimeDriverError when
    the runtime fails (a missing pod is no failure). A member still starting (a
    StartContainer whose caller died: containerd finishes or undoes it on its own, which
    takes seconds on a loaded node) makes the removal fail for a while ("cannot delete
    running task"): stopped and tried again, the pause doubling up to 2 s, until
    ``patience`` seconds have passed."""
    deadline = time.monotonic() + patience
    pause = first_pause
    while True:
        pods.stop_pod(pod_id)
        try:
            pods.remove_pod(pod_id, uuid)
            return
        except rt.RuntimeUnavailable:
            raise
        except rt.RuntimeDriverError as err:
            if time.monotonic() + pause > deadline:
                raise
            LOG.info("pod %s of capsule %s not removable yet (%s); trying again in %.2g s",
                     pod_id[:12], uuid, err.msg, pause)
            time.sleep(pause)
            pause = min(2 * pause, 2.0)


def remove_pod_quietly(pods: PodRuntime, pod_id: str, uuid: str) -> None:
    """``remove_pod`` for an undo: a failure is logged, not raised (the sweep of pods
    that no capsule reaches removes it later)."""
    try:
        remove_pod(pods, pod_id, uuid)
    except rt.RuntimeDriverError as err:
        LOG.warning("could not remove pod %s of capsule %s after a failed create: %s",
                    pod_id[:12], uuid, err.msg)


def remove_pods_of(pods: PodRuntime, host: str, uuid: str) -> int:
    """Remove every pod of ``host`` made for capsule ``uuid`` (found by its labels: a
    create that died before recording its pod's id); how many."""
    found = [p for p in pods.pods(host) if p.uuid == uuid]
    for pod in found:
        remove_pod(pods, pod.id, uuid)
    return len(found)


def sweep_orphans(deps: AgentDeps, pods: PodRuntime) -> int:
    """Remove this host's pods that no capsule can ever reach: their row is gone, or
    their create failed and was undone (Error, no pod recorded) while the runtime
    still made the pod (a RunPodSandbox that outlived its time-out). A create in
    progress reaches its pod (its row is Creating). How many were removed."""
    removed = 0
    for pod in pods.pods(deps.host):
        row = containers.find_by_uuid(deps.db, pod.uuid)
        if row is not None and not (row.status == Status.ERROR and not row.container_id
                                    and row.host in (None, deps.host)):
            continue
        with container_context(pod.uuid):
            try:
                remove_pod(pods, pod.id, pod.uuid)
            except rt.RuntimeDriverError as err:
                LOG.error("could not remove orphan pod %s: %s; the next sweep retries",
                          pod.id[:12], err.msg)
                continue
            LOG.warning("removed pod %s: %s", pod.id[:12],
                        "no capsule row has it" if row is None else "its capsule's create "
                        "failed")
            removed += 1
    return removed
