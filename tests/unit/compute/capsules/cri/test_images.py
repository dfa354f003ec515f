"""A CRI member's image under its pull policy, and the credentials its pull carries
(a fake pod runtime: no containerd)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from berth.compute.capsules.cri.images import ensure_image
from berth.compute.capsules.failure import CapsuleFailed
from berth.runtime import base as rt

REF = "registry.test:5000/team/app:1"


class Pods:
    def __init__(self, present: bool, fails: rt.RuntimeDriverError | None = None) -> None:
        self.present = present
        self.fails = fails
        self.pulled: list[tuple[str, rt.RegistryAuth | None]] = []

    def image_present(self, ref: str) -> bool:
        return self.present

    def pull_image(self, ref: str, auth: rt.RegistryAuth | None = None) -> str:
        self.pulled.append((ref, auth))
        if self.fails is not None:
            raise self.fails
        return "sha256:1"


def deps(**settings: Any) -> Any:
    values = {"default_registry": None, "default_pull_policy": "always",
              "default_registry_username": None, "default_registry_password": None,
              "registry_key": None, **settings}
    return SimpleNamespace(host="h1", db=None, settings=SimpleNamespace(**values))


def member(policy: str | None, image: str = REF) -> Any:
    return SimpleNamespace(image=image, image_pull_policy=policy, registry_id=None,
                           name="capsule-web-app")


@pytest.mark.parametrize(("policy", "present", "pulls"), [
    ("always", True, True), ("always", False, True), ("ifnotpresent", True, False),
    ("ifnotpresent", False, True), ("never", True, False)])
def test_the_pull_policy_decides_whether_containerd_pulls(policy: str, present: bool,
                                                          pulls: bool) -> None:
    pods = Pods(present)
    assert ensure_image(deps(), pods, member(policy), init=False) == REF  # type: ignore[arg-type]
    assert [ref for ref, _ in pods.pulled] == ([REF] if pulls else [])


def test_never_fails_naming_the_member_and_image_when_it_is_absent() -> None:
    with pytest.raises(CapsuleFailed, match="capsule-web-app.*registry.test:5000/team/app:1"):
        ensure_image(deps(), Pods(False), member("never"), init=True)  # type: ignore[arg-type]


def test_a_failed_pull_uses_the_local_copy_or_fails_saying_why() -> None:
    failed = rt.RuntimeImagePullFailed(reason="connection refused")
    assert ensure_image(deps(), Pods(True, failed), member("always"),  # type: ignore[arg-type]
                        init=False) == REF
    with pytest.raises(CapsuleFailed, match="could not be pulled.*connection refused"):
        ensure_image(deps(), Pods(False, failed), member("always"),  # type: ignore[arg-type]
                     init=False)
    with pytest.raises(CapsuleFailed, match="could not be found"):
        ensure_image(deps(), Pods(False, rt.RuntimeImageNotFound(reason="not found")),
                     member("always"), init=False)  # type: ignore[arg-type]


def test_the_default_registrys_credentials_go_with_its_images_only() -> None:
    settings = {"default_registry": "registry.test:5000", "default_registry_username": "u",
                "default_registry_password": "p"}
    pods = Pods(False)
    ensure_image(deps(**settings), pods, member(None, "team/app:1"),  # type: ignore[arg-type]
                 init=False)
    ensure_image(deps(**settings), pods, member(None, "other.test/app:1"),  # type: ignore[arg-type]
                 init=False)
    assert pods.pulled == [(REF, rt.RegistryAuth("u", "p", "registry.test:5000")),
                           ("other.test/app:1", None)]


def test_the_request_carries_the_credentials_as_cris_auth_config() -> None:
    from berth.runtime.cri import client

    sent: list[Any] = []

    class Stub:
        def PullImage(self, request: Any, timeout: float) -> Any:
            sent.append((request, timeout))
            return SimpleNamespace(image_ref="sha256:1")

    pods = client.CriRuntime("/nonexistent.sock", 1.0, "berth-cri", "/logs")
    try:
        pods._images = Stub()
        assert pods.pull_image(REF, rt.RegistryAuth("u", "p", "registry.test:5000")) == \
            "sha256:1"
    finally:
        pods.close()
    request, timeout = sent[0]
    assert request.image.image == REF and timeout == 600.0
    assert (request.auth.username, request.auth.password, request.auth.server_address) == \
        ("u", "p", "https://registry.test:5000")     # containerd compares its host
