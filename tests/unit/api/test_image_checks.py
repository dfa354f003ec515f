"""A node's yes to an image check is remembered for a while; a no never is; concurrent
checks of one image on one node ask it once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

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


KEY = ("n1", "local/busybox:latest", "docker", None)


def _callers(checks: RecentImageChecks, ask: Callable[[], bool], n: int
             ) -> list[bool | BaseException]:
    """``n`` threads checking KEY at once; each one's answer or error."""
    answers: list[bool | BaseException] = [False] * n

    def one(i: int) -> None:
        try:
            answers[i] = checks.check(KEY, ask)
        except Exception as err:  # noqa: BLE001 - the test looks at it
            answers[i] = err

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    return answers


class _Node:
    """Answers image checks; the first one only once ``release`` is set."""

    def __init__(self, *answers: bool | Exception) -> None:
        self.answers = list(answers)
        self.asked = 0
        self.release = threading.Event()
        self.lock = threading.Lock()

    def ask(self) -> bool:
        with self.lock:
            self.asked += 1
            answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        self.release.wait(10)
        if isinstance(answer, Exception):
            raise answer
        return answer


def _release_when_waiting(checks: RecentImageChecks, node: _Node, waiting: int) -> None:
    """Let the node answer once ``waiting`` callers wait on the first one's answer."""
    def watch() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            answered = checks._asking.get(KEY)
            if answered is not None and _waiters(answered) >= waiting:
                break
            time.sleep(0.005)
        node.release.set()

    threading.Thread(target=watch, daemon=True).start()


def _waiters(event: threading.Event) -> int:
    return len(event._cond._waiters)  # type: ignore[attr-defined]


def test_concurrent_checks_of_one_image_ask_the_node_once() -> None:
    checks = RecentImageChecks(ttl=600)
    node = _Node(True)
    _release_when_waiting(checks, node, 7)
    assert _callers(checks, node.ask, 8) == [True] * 8
    assert node.asked == 1
    assert checks.known(KEY) and not checks._asking
    assert checks.check(KEY, node.ask) is True      # remembered: not asked again
    assert node.asked == 1


def test_after_a_no_each_waiting_caller_asks_itself() -> None:
    checks = RecentImageChecks(ttl=600)
    node = _Node(False, True)      # the image arrives after the first answer
    _release_when_waiting(checks, node, 3)
    assert sorted(_callers(checks, node.ask, 4)) == [False, True, True, True]
    assert 2 <= node.asked <= 4     # a waiter that wakes after another's yes takes it
    assert checks.known(KEY)


def test_an_error_is_its_callers_and_the_others_ask_again() -> None:
    checks = RecentImageChecks(ttl=600)
    node = _Node(RuntimeError("the node did not answer"), False)
    _release_when_waiting(checks, node, 2)
    answers = _callers(checks, node.ask, 3)
    assert [a for a in answers if isinstance(a, RuntimeError)] and answers.count(False) == 2
    assert node.asked == 3 and not checks.known(KEY) and not checks._asking   # no is no
