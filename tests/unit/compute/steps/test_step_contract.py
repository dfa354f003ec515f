"""The contract ``berth.compute.steps`` writes on ``Step`` and ``take`` (pure logic,
with steps that only record what is asked of them): a step's release is registered
before its acquire, so a failing acquire is undone too; every release runs, in
reverse, even when one of them raises; a flow that succeeds pops them all."""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from berth.compute.steps import take


class Recorded:
    def __init__(self, name: str, log: list[str], fail_acquire: bool = False,
                 fail_release: bool = False) -> None:
        self.name, self.log = name, log
        self.fail_acquire, self.fail_release = fail_acquire, fail_release

    def acquire(self) -> None:
        self.log.append(f"acquire {self.name}")
        if self.fail_acquire:
            raise LookupError(self.name)

    def release(self) -> None:
        self.log.append(f"release {self.name}")
        if self.fail_release:
            raise OSError(self.name)


def test_a_failure_after_the_steps_releases_them_in_reverse() -> None:
    log: list[str] = []
    with pytest.raises(ValueError), ExitStack() as undo:
        take(undo, Recorded("claim", log))
        take(undo, Recorded("allocation", log))
        raise ValueError("the pull failed")
    assert log == ["acquire claim", "acquire allocation",
                   "release allocation", "release claim"]


def test_a_step_whose_acquire_fails_is_released_too_and_the_failure_stands() -> None:
    log: list[str] = []
    with pytest.raises(LookupError, match="volumes"), ExitStack() as undo:
        take(undo, Recorded("claim", log))
        take(undo, Recorded("volumes", log, fail_acquire=True))
        take(undo, Recorded("never", log))
    assert log == ["acquire claim", "acquire volumes", "release volumes", "release claim"]


def test_every_release_runs_even_when_one_raises() -> None:
    log: list[str] = []
    with pytest.raises(OSError), ExitStack() as undo:
        take(undo, Recorded("claim", log))
        take(undo, Recorded("allocation", log, fail_release=True))
        take(undo, Recorded("volumes", log))
        raise ValueError("the create failed")
    assert log[3:] == ["release volumes", "release allocation", "release claim"]


def test_a_flow_that_succeeds_releases_nothing() -> None:
    log: list[str] = []
    with ExitStack() as undo:
        step = take(undo, Recorded("claim", log))
        undo.pop_all()
    assert step.name == "claim" and log == ["acquire claim"]
