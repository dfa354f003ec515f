"""RecentImages (berth.compute.recent_images): answers younger than the ttl only."""

from __future__ import annotations

from berth.compute.recent_images import RecentImages
from berth.runtime.base import ImageInfo


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _info(image_id: str) -> ImageInfo:
    return ImageInfo(id=image_id, repo_tags=("r/busybox:latest",), size=1, cmd=("sh",),
                     entrypoint=None)


def test_an_answer_is_kept_for_the_ttl_only() -> None:
    clock = _Clock()
    recent = RecentImages(ttl=5.0, clock=clock)
    assert recent.get("r/busybox:latest") is None
    recent.remember("r/busybox:latest", _info("sha256:a"))
    clock.now += 4.9
    assert recent.get("r/busybox:latest") == _info("sha256:a")
    assert recent.get("r/other:latest") is None
    clock.now += 0.1
    assert recent.get("r/busybox:latest") is None


def test_forget_one_or_all() -> None:
    recent = RecentImages(ttl=5.0, clock=_Clock())
    recent.remember("a", _info("sha256:a"))
    recent.remember("b", _info("sha256:b"))
    recent.forget("a")
    assert recent.get("a") is None and recent.get("b") is not None
    recent.forget()
    assert recent.get("b") is None


def test_expired_entries_are_pruned_as_new_ones_come() -> None:
    clock = _Clock()
    recent = RecentImages(ttl=1.0, clock=clock)
    for i in range(300):
        recent.remember(f"old-{i}", _info("sha256:o"))
    clock.now += 2
    recent.remember("new", _info("sha256:n"))
    assert len(recent._seen) == 1
