"""One wording per failure reason (``berth.compute.steps.failures``), whichever flow
meets it: the reason the row gets and whether its host is cleared (pure logic)."""

from __future__ import annotations

import pytest

from berth.common import exceptions as exc
from berth.compute.steps.failures import (
    StepFailed,
    engine_refused,
    placement_unanswered,
    reason_of,
    resources_unavailable,
)
from berth.runtime import base as rt


def test_a_step_failure_carries_its_own_reason_and_host_rule() -> None:
    err = StepFailed(exc.ResourcesUnavailable(reason="cpu"), "no room", clear_host=False)
    assert reason_of(err, "n1") == ("no room", False)


def test_a_refusal_names_the_host_and_says_what_to_do() -> None:
    text = resources_unavailable("n1", "cpu: requested 3, free 1 of 4")
    assert text == ("ResourcesUnavailable: cpu: requested 3, free 1 of 4. Ask for less, "
                    "or free resources on host n1.")
    err = exc.ResourcesUnavailable(reason="cpu: requested 3, free 1 of 4")
    assert reason_of(err, "n1") == (resources_unavailable("n1", err.msg), True)


def test_placement_failing_is_not_worded_as_a_refusal() -> None:
    text = placement_unanswered("n1", "503 from Placement")
    assert "ResourcesUnavailable" not in text
    assert "host n1" in text and "503 from Placement" in text and "Try again" in text


@pytest.mark.parametrize("err, cleared", [
    (exc.ImageNotFound(image="busybox:nope"), False),   # the node did not refuse it
    (exc.VolumeUnavailable(reason="Volume v1 lives on host n2"), True),
    (exc.VolumeNotFound(volume="v1"), True),
])
def test_image_and_volume_failures_keep_their_own_text(err: exc.BerthError,
                                                       cleared: bool) -> None:
    assert reason_of(err, "n1") == (err.msg, cleared)


def test_an_engine_failure_is_docker_refusing_the_create() -> None:
    err = rt.RuntimeDriverError("no space left on device")
    assert reason_of(err, "n1") == (engine_refused(err.msg), True)
    assert engine_refused("x") == "Docker could not create the container: x"


def test_an_unplanned_failure_gets_no_reason_here() -> None:
    assert reason_of(KeyError("Id"), "n1") is None
    assert reason_of(exc.ContainerNotFound(container="u1"), "n1") is None
