"""Removing a capsule's pod: StopPodSandbox (every member killed at once, the CNI
network torn down), then RemovePodSandbox (members and sandbox gone), then what the
node keeps of it (logs, cgroup directories). Create's undo, delete and recovery
all remove a pod so."""

from __future__ import annotations

import logging

from berth.runtime import base as rt
from berth.runtime.cri.base import PodRuntime

LOG = logging.getLogger(__name__)


def remove_pod(pods: PodRuntime, pod_id: str, uuid: str) -> None:
    """Stop and remove the pod ``pod_id`` of capsule ``uuid``; RuntimeDriverError when
    the runtime fails (a missing pod is no failure)."""
    pods.stop_pod(pod_id)
    pods.remove_pod(pod_id, uuid)


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
