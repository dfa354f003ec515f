"""A CRI capsule's images pulled by containerd itself (CRI PullImage) under each
member's imagePullPolicy, from the local registry only (127.0.0.1:5000; an
unreachable registry is 127.0.0.1:1; one that asks for a password serves that
registry's storage read-only on another port): a pulled image runs, credentials go
with the pull, and every image that cannot be had is an Error naming it with
nothing left in containerd."""

from __future__ import annotations

import subprocess
import uuid as uuidlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.berth_proc import REGISTRY, BerthProcess, wait_for
from support.containerd import SOCKET, left_in_containerd

from berth.runtime.cri.client import CriRuntime

pytestmark = pytest.mark.functional

LATEST = "container 1.40"
PULLED = f"{REGISTRY}/berth-test/busybox:latest"
QUICK_STOP = ["sh", "-c", 'trap "exit 0" TERM; sleep 300 & wait']


def ctr(*args: str) -> str:
    return subprocess.run(["ctr", "--address", SOCKET, "-n", "k8s.io", *args], check=True,
                          capture_output=True, text=True, timeout=60).stdout


def forget_registry_refs() -> None:
    """Remove the names containerd gave the registry's copy (only those names: the
    content stays with the test image's own name, which other tests use; CRI's
    RemoveImage would remove every name of that image)."""
    names = [n for n in ctr("images", "ls", "-q").split()
             if n.startswith(f"{REGISTRY}/berth-test/busybox")]
    if names:
        ctr("images", "rm", *names)


@pytest.fixture
def no_registry_copy() -> Iterator[None]:
    forget_registry_refs()
    yield
    forget_registry_refs()


def template(image: str, policy: str) -> dict[str, Any]:
    return {"kind": "capsule", "metadata": {"name": f"pull-{uuidlib.uuid4().hex[:8]}"},
            "spec": {"containers": [{"image": image, "name": "app", "imagePullPolicy": policy,
                                     "command": QUICK_STOP,
                                     "resources": {"requests": {"cpu": 0.1, "memory": 32}}}]}}


def run(berth: BerthProcess, tpl: dict[str, Any]) -> dict[str, Any]:
    with berth.http(version=LATEST) as http:
        resp = http.post("/v1/capsules/", json={"template": tpl})
        assert resp.status_code == 202, resp.text
        uuid = resp.json()["uuid"]
        shown = wait_for(lambda: (r := http.get(f"/v1/capsules/{uuid}").json())
                         and r["status"] != "Creating" and r, 90, 0.2, what="the capsule")
    assert isinstance(shown, dict)
    return dict(shown)


def delete(berth: BerthProcess, uuid: str) -> None:
    with berth.http(version=LATEST) as http:
        assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
        wait_for(lambda: http.get(f"/v1/capsules/{uuid}").status_code == 404, 60, 0.2,
                 what="the capsule deleted")


@pytest.mark.parametrize("policy", ["Always", "IfNotPresent"])
def test_an_image_containerd_lacks_is_pulled_from_its_registry_and_runs(
        cri_berth: BerthProcess, pods: CriRuntime, no_registry_copy: None,
        policy: str) -> None:
    assert not pods.image_present(PULLED)
    shown = run(cri_berth, template(PULLED, policy))
    assert shown["status"] == "Running", shown
    assert pods.image_present(PULLED)
    delete(cri_berth, shown["uuid"])


@pytest.mark.parametrize(("image", "policy", "words"), [
    (f"{REGISTRY}/berth-test/busybox:latest", "Never", "pull it there first"),
    (f"{REGISTRY}/berth-test/busybox:no-such-tag", "IfNotPresent", "could not be found"),
    ("127.0.0.1:1/berth-test/busybox:latest", "Always", "could not be pulled"),
], ids=["never-absent", "unknown-tag", "unreachable-registry"])
def test_an_image_that_cannot_be_had_is_error_naming_it_and_leaves_nothing(
        cri_berth: BerthProcess, pods: CriRuntime, no_registry_copy: None, image: str,
        policy: str, words: str) -> None:
    shown = run(cri_berth, template(image, policy))
    assert shown["status"] == "Error", shown
    assert image in shown["status_reason"] and words in shown["status_reason"], \
        shown["status_reason"]
    assert all(m["status"] == "Error" for m in shown["containers"]), shown["containers"]
    assert left_in_containerd(pods, cri_berth.host, shown["uuid"]) == []
    assert not pods.image_present(image)
    delete(cri_berth, shown["uuid"])


@pytest.mark.parametrize(("password", "runs"), [("s3cret", True), ("wrong", False)],
                         ids=["right-password", "wrong-password"])
def test_a_pull_from_a_registry_that_asks_for_a_password_carries_the_nodes_credentials(
        berth_factory: Callable[..., BerthProcess], cri_conf: str, tmp_path: Path,
        password: str, runs: bool) -> None:
    from support.auth_registry import auth_registry
    from support.containerd import pod_runtime

    with auth_registry(tmp_path / "registry", "puller", "s3cret") as address:
        image = f"{address}/berth-test/busybox:latest"
        proc = berth_factory(cri_conf + f"[docker]\ndefault_registry = {address}\n"
                             f"default_registry_username = puller\n"
                             f"default_registry_password = {password}\n").start()
        pods = pod_runtime(proc.dir / "state")
        try:
            with proc.http() as http:
                http.put("/v1/quotas/admin", json={"containers": -1, "cpu": -1,
                                                   "memory": -1}).raise_for_status()
            shown = run(proc, template(image, "Always"))
            if runs:
                assert shown["status"] == "Running", shown["status_reason"]
                assert pods.image_present(image)
            else:
                assert shown["status"] == "Error", shown
                reason = shown["status_reason"]
                assert image in reason and "could not be pulled" in reason, reason
                assert "401" in reason or "unauthorized" in reason.lower(), reason
                assert left_in_containerd(pods, proc.host, shown["uuid"]) == []
            delete(proc, shown["uuid"])
        finally:
            for pod in pods.pods(proc.host):
                pods.stop_pod(pod.id)
                pods.remove_pod(pod.id, pod.uuid)
            pods.close()
            names = [n for n in ctr("images", "ls", "-q").split() if n.startswith(address)]
            if names:
                ctr("images", "rm", *names)
            proc.stop()
