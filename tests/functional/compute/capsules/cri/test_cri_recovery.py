"""SIGKILL of a ``berth serve`` with capsule_driver = cri in the middle of a capsule's
create (issue 19): after a restart on the same state the capsule is in Error with
nothing left in containerd, and a pod labelled for the host that no capsule has is
swept."""

from __future__ import annotations

import json
import time
import uuid as uuidlib
from collections.abc import Callable
from typing import Any

import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, remove_local_networks, wait_for
from support.containerd import pod_runtime

from berth.compute.capsules.cri.pods import remove_pod
from berth.runtime.cri.base import PodSpec

pytestmark = pytest.mark.functional

LATEST = {"OpenStack-API-Version": "container 1.40"}


def template() -> dict[str, Any]:
    def member(name: str, command: list[str]) -> dict[str, Any]:
        return {"image": TEST_IMAGE, "name": name, "imagePullPolicy": "IfNotPresent",
                "command": command, "resources": {"requests": {"cpu": 0.1, "memory": 16}}}
    return {"kind": "capsule", "metadata": {"name": f"crash-{time.monotonic_ns()}"},
            "spec": {"initContainers": [member("slow", ["sleep", "30"])],
                     "containers": [member("app", ["sleep", "300"])]}}


def test_a_cri_capsule_create_killed_half_way_ends_in_error_and_orphan_pods_go(
        berth_factory: Callable[..., BerthProcess], cri_conf: str, containerd_socket: str
) -> None:
    proc = berth_factory(cri_conf).start()
    pods = pod_runtime(proc.dir / "state", containerd_socket)
    try:
        with proc.http() as http:
            uuid = http.post("/v1/capsules/", json={"template": template()},
                             headers=LATEST).json()["uuid"]
            # The init container runs in the pod: the create is half-way.
            wait_for(lambda: any(p.uuid == uuid and pods.members(p.id)
                                 for p in pods.pods(proc.host)), 30,
                     what="the pod and its init container")
        proc.kill()
        stray = str(uuidlib.uuid4())          # a pod of this host that no capsule has
        pods.run_pod(PodSpec(uuid=stray, name="stray", host=proc.host))
        again = berth_factory(cri_conf, host=proc.host, state_dir=str(proc.dir)).start()
        with again.http() as http:
            shown = http.get(f"/v1/capsules/{uuid}", headers=LATEST).json()
            assert shown["status"] == "Error" and "failed to create" in shown["status_reason"]
            assert pods.pods(proc.host) == []
            assert pods.cgroup_dirs(uuid) == [] and pods.cgroup_dirs(stray) == []
            assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
            wait_for(lambda: http.get(f"/v1/capsules/{uuid}").status_code == 404, 30,
                     what="the failed capsule to be deleted")
        # The killed create's pod was plugged through the first daemon's port; the
        # restarted agent (its daemon on another port, same registry) unplugs it.
        registry = proc.dir / "state" / "cni" / "registry.json"
        assert json.loads(registry.read_text()).get("attachments") == []
        again.stop()
        remove_local_networks(again)
    finally:
        for pod in pods.pods(proc.host):
            remove_pod(pods, pod.id, pod.uuid)      # with the agent's patience
        pods.close()
