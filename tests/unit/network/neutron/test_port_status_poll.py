"""The port status poll: one Neutron listing per tick however many VIFs wait, waiters
woken when their port is ACTIVE, no listing while nobody waits."""

from __future__ import annotations

import threading

from berth.network.neutron.status import PortStatusPoller


def test_one_listing_per_tick_wakes_every_waiter_whose_port_is_active() -> None:
    calls: list[int] = []
    all_waiting = threading.Event()

    def statuses() -> dict[str, str]:
        all_waiting.wait(10)        # the first listing sees all three waiters
        calls.append(1)
        active = "ACTIVE" if len(calls) >= 3 else "DOWN"
        return {"p1": active, "p2": active, "p3": active, "other": "ACTIVE"}

    poller = PortStatusPoller(statuses, interval=0.01)
    results: dict[str, bool] = {}
    threads = [threading.Thread(target=lambda p=p: results.__setitem__(
        p, poller.wait_active(p, 30))) for p in ("p1", "p2", "p3")]
    for t in threads:
        t.start()
    while len(poller._waiting) < 3:
        threading.Event().wait(0.001)
    all_waiting.set()
    for t in threads:
        t.join(30)
    poller.stop()
    assert results == {"p1": True, "p2": True, "p3": True}
    assert len(calls) == 3          # three ticks, not one listing per waiter and tick


def test_a_port_never_active_times_out_and_a_failing_listing_is_survived() -> None:
    calls: list[int] = []

    def statuses() -> dict[str, str]:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("Neutron down")
        return {"p1": "DOWN"}

    poller = PortStatusPoller(statuses, interval=0.01)
    assert poller.wait_active("p1", 0.2) is False
    poller.stop()
    assert len(calls) >= 2           # the loop went on after the failure


def test_no_listing_without_a_waiter() -> None:
    calls: list[int] = []

    def statuses() -> dict[str, str]:
        calls.append(1)
        return {}

    poller = PortStatusPoller(statuses, interval=0.01)
    poller.poll_once()
    assert calls == []


def test_ticks_are_quick_while_a_waiter_is_new_then_once_a_second() -> None:
    now = [100.0]
    poller = PortStatusPoller(dict, interval=1.0, clock=lambda: now[0],
                              quick_interval=0.2, quick_window=5.0)
    assert poller.tick(now[0]) == 1.0             # nobody waits
    poller._since["p1"] = 100.0
    assert poller.tick(101.0) == 0.2              # p1 began a second ago
    assert poller.tick(105.5) == 1.0              # waited past the window: Zun's second
    poller._since["p2"] = 105.0                   # a new waiter: quick again
    assert poller.tick(105.5) == 0.2
    assert PortStatusPoller(dict, interval=0.1, quick_interval=0.2).quick_interval == 0.1
