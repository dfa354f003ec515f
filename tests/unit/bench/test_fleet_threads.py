"""bench/fleet/threads.py: the CPU of a process by kind of thread, threads that ended
counted under their kind once the census is installed."""

from __future__ import annotations

import threading
import time

import pytest

from bench.fleet.statements import merged
from bench.fleet.threads import Census, _thread_ms, kind_of, per_unit, spent_by_kind


def test_a_kind_is_a_name_without_the_numbers_a_pool_or_threading_gave_it() -> None:
    assert kind_of("rpc_12") == "rpc"
    assert kind_of("state-sync_4") == "state-sync"
    assert kind_of("ThreadPoolExecutor-0_3") == "ThreadPoolExecutor"
    assert kind_of("Thread-7 (_runner)") == "Thread (_runner)"
    assert kind_of("periodic-scheduler") == "periodic-scheduler"


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def _run_and_join(name: str, seconds: float) -> None:
    threads = [threading.Thread(target=_burn, args=(seconds,), name=f"{name}_{i}")
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _until_gone_from_the_kernel(threads)


def _until_gone_from_the_kernel(threads: list[threading.Thread]) -> None:
    """``join()`` returns when Python's part of a thread ends; the kernel's thread
    exits just after, and until then ``/proc/self/task`` still lists it (a reading
    counts it as ``unnamed``, not as ended). Up to 5 s."""
    deadline = time.monotonic() + 5
    while any(_thread_ms(t) is not None for t in threads) and time.monotonic() < deadline:
        time.sleep(0.01)


def test_threads_that_ended_count_under_their_kind_once_installed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # restored after the test: install() wraps it for the whole process
    monkeypatch.setattr(threading.Thread, "_bootstrap_inner",
                        threading.Thread._bootstrap_inner)  # type: ignore[attr-defined]
    census = Census()
    census.install()
    before = census.reading()
    _run_and_join("burner", 0.05)
    spent = spent_by_kind(before, census.reading())
    assert 150 <= spent["burner"] < 250         # three threads, 50 ms each
    assert spent["ended"] < 30                  # what no thread reported: next to nothing
    assert spent["total"] >= spent["burner"] - 20     # the process's: whole ticks, 10 ms


def test_without_install_what_ended_threads_spent_is_ended() -> None:
    census = Census()
    before = census.reading()
    _run_and_join("quiet", 0.05)
    spent = spent_by_kind(before, census.reading())
    assert "quiet" not in spent
    assert spent["ended"] >= 100    # 150 ms, read in whole ticks, less what live threads took


def test_per_unit_and_merged_in_milliseconds() -> None:
    a = {"rpc": 30.0, "total": 40.0, "ended": 0.0}
    b = {"rpc": 10.0, "total": 20.0, "periodic": 0.004}
    both = merged([a, b])
    assert both == {"rpc": 40.0, "total": 60.0, "ended": 0.0, "periodic": 0.004}
    assert per_unit(both, 10) == {"total": 6.0, "rpc": 4.0}   # largest first; 0 left out


def test_a_threads_clock_is_read_by_its_kernel_id_and_refused_once_it_is_gone() -> None:
    me = threading.current_thread()
    assert _thread_ms(me) == pytest.approx(time.thread_time() * 1000, abs=5)
    done = threading.Thread(target=_burn, args=(0.01,))
    done.start()
    done.join()
    _until_gone_from_the_kernel([done])
    assert _thread_ms(done) is None
