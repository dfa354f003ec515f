"""``remove_pod``'s patience with a pod that containerd cannot remove yet (a member's
task still being started or undone after its caller died)."""

from __future__ import annotations

import pytest

from berth.compute.capsules.cri import pods
from berth.runtime import base as rt


class RefusingPods:
    """A pod runtime whose RemovePodSandbox fails ``refusals`` times, then succeeds."""

    def __init__(self, refusals: int, error: rt.RuntimeDriverError | None = None) -> None:
        self.refusals = refusals
        self.error = error or rt.RuntimeDriverError(
            reason="cannot delete running task abc: failed precondition")
        self.stops = 0
        self.removals = 0

    def stop_pod(self, pod_id: str) -> None:
        self.stops += 1

    def remove_pod(self, pod_id: str, uuid: str) -> None:
        self.removals += 1
        if self.removals <= self.refusals:
            raise self.error


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses taken; the clock advances by each instead of sleeping."""
    now = [0.0]
    pauses: list[float] = []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        now[0] += seconds
    monkeypatch.setattr(pods.time, "sleep", sleep)
    monkeypatch.setattr(pods.time, "monotonic", lambda: now[0])
    return pauses


def test_a_pod_refused_for_twenty_seconds_is_still_removed(
        slept: list[float]) -> None:
    runtime = RefusingPods(refusals=12)     # 0.25 + 0.5 + 1 + 9 × 2 = 19.75 s of refusals
    pods.remove_pod(runtime, "pod", "uuid")  # type: ignore[arg-type]
    assert runtime.removals == 13 and runtime.stops == 13  # stopped again before each try
    assert slept == [0.25, 0.5, 1.0] + [2.0] * 9


def test_the_refusal_is_raised_once_the_patience_is_spent(slept: list[float]) -> None:
    runtime = RefusingPods(refusals=1000)
    with pytest.raises(rt.RuntimeDriverError, match="cannot delete running task"):
        pods.remove_pod(runtime, "pod", "uuid", patience=10.0)  # type: ignore[arg-type]
    assert sum(slept) <= 10.0 and runtime.removals == len(slept) + 1


def test_an_unreachable_runtime_is_not_waited_for(slept: list[float]) -> None:
    runtime = RefusingPods(refusals=1, error=rt.RuntimeUnavailable(reason="socket gone"))
    with pytest.raises(rt.RuntimeUnavailable):
        pods.remove_pod(runtime, "pod", "uuid")  # type: ignore[arg-type]
    assert slept == [] and runtime.removals == 1
