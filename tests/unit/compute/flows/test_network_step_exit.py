"""A plug that fails because the process just exited is an exit, not a network
failure, even while the engine still reports the process running (network_step's
``_process_ended``): the engine is asked again while this node's process table has no
such process. Real processes; the engine's answers are scripted."""

from __future__ import annotations

import os
import subprocess
import time
from types import SimpleNamespace
from typing import Any

from berth.compute.flows import network_step
from berth.runtime import base as rt


def state(pid: int, running: bool, exit_code: int | None = None) -> rt.RuntimeContainer:
    status = rt.RunState.RUNNING if running else rt.RunState.EXITED
    return rt.RuntimeContainer(id="c1", name="zun-u1", uuid="u1", image="busybox",
                               state=rt.ContainerState(status, running=running, pid=pid,
                                                       exit_code=exit_code))


class Engine:
    """Answers inspect with ``answers`` in turn, the last one for good."""

    def __init__(self, *answers: rt.RuntimeContainer) -> None:
        self.answers = list(answers)
        self.asked = 0

    def inspect(self, container_id: str) -> rt.RuntimeContainer:
        self.asked += 1
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def deps_with(engine: Engine) -> Any:
    return SimpleNamespace(runtime=engine)


def exited_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()                         # reaped: gone from /proc
    return proc.pid


def test_an_exit_the_engine_reports_late_is_still_an_exit() -> None:
    pid = exited_pid()
    seen = state(pid, running=True)
    engine = Engine(seen, seen, seen, state(0, running=False, exit_code=0))
    ended = network_step._process_ended(deps_with(engine), "c1", seen)
    assert ended is not None and ended.state is not None
    assert not ended.state.running and ended.state.exit_code == 0
    assert engine.asked == 4


def test_a_live_process_is_a_network_failure_at_once() -> None:
    seen = state(os.getpid(), running=True)
    engine = Engine(seen)
    began = time.monotonic()
    assert network_step._process_ended(deps_with(engine), "c1", seen) is None
    assert engine.asked == 1 and time.monotonic() - began < 1


def test_an_engine_that_never_reports_the_exit_is_given_up_on() -> None:
    seen = state(exited_pid(), running=True)
    engine = Engine(seen)
    assert network_step._process_ended(deps_with(engine), "c1", seen, catch_up=0.2) is None
    assert engine.asked > 2


def test_a_zombie_or_a_reaped_process_holds_no_namespace() -> None:
    proc = subprocess.Popen(["true"])
    deadline = time.monotonic() + 5
    while network_step.process_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)                # exits, and stays a zombie until waited for
    assert not network_step.process_alive(proc.pid)
    proc.wait()
    assert not network_step.process_alive(proc.pid)
    assert network_step.process_alive(os.getpid()) and network_step.process_alive(0)
