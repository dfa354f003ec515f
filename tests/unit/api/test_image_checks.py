"""A node's yes to an image check is remembered for a while; a no never is."""

from __future__ import annotations

from berth.api.image_checks import RecentImageChecks


def test_a_yes_is_trusted_for_the_ttl_only() -> None:
    now = [0.0]
    checks = RecentImageChecks(ttl=60, clock=lambda: now[0])
    key = ("n1", "local/busybox:latest", "docker", None)
    assert not checks.known(key)
    checks.found(key)
    now[0] = 59.0
    assert checks.known(key)
    assert not checks.known(("n2", "local/busybox:latest", "docker", None))
    now[0] = 60.0
    assert not checks.known(key)


def test_a_node_asked_to_remove_the_image_is_asked_again() -> None:
    checks = RecentImageChecks(ttl=600, clock=lambda: 0.0)
    ours = [("n1", "local/busybox:latest", "docker", None),
            ("n1", "local/busybox:latest", "docker", "registry-uuid")]
    others = [("n2", "local/busybox:latest", "docker", None),
              ("n1", "local/busybox:1.36", "docker", None)]
    for key in ours + others:
        checks.found(key)
    checks.forget("n1", "local/busybox:latest")
    assert [checks.known(key) for key in ours + others] == [False, False, True, True]
