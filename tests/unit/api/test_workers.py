"""berth-api's worker supervisor (``[api]workers``) with real processes: it forks
the workers, starts again one that dies, stops them all on SIGTERM and exits 0, and
gives up with 1 when workers keep dying."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from support.berth_proc import wait_for

from berth.api import workers
from berth.cmd.api import worker_count

# A parent running the Supervisor; each worker writes its pid into DIR/<index>.<pid>
# and waits for a signal (or exits 3 at once when DIR/die exists).
PARENT = textwrap.dedent("""
    import os, signal, sys, pathlib
    from berth.api import workers
    workers.RESTART_WINDOW = 600.0
    workers.RESTART_DELAY = 0.05
    where = pathlib.Path(sys.argv[1])
    def serve(index):
        (where / f"{index}.{os.getpid()}").touch()
        if (where / "die").exists():
            return 3
        signal.pause()
        return 0
    sys.exit(workers.Supervisor(int(sys.argv[2]), serve).run())
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie the parent has not reaped yet is as good as gone.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def _pids(where: Path) -> dict[int, int]:
    """{pid: worker index} of every worker started so far."""
    out = {}
    for f in where.iterdir():
        index, _, pid = f.name.partition(".")
        if pid:
            out[int(pid)] = int(index)
    return out


def _start(where: Path, count: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", PARENT, str(where), str(count)],
                            stderr=subprocess.PIPE)


def test_workers_run_a_dead_one_is_replaced_and_sigterm_stops_all(tmp_path: Path) -> None:
    parent = _start(tmp_path, 3)
    try:
        wait_for(lambda: len(_pids(tmp_path)) == 3, 30, what="three workers")
        first = _pids(tmp_path)
        assert sorted(first.values()) == [0, 1, 2]
        victim = next(pid for pid, index in first.items() if index == 1)
        os.kill(victim, signal.SIGKILL)
        wait_for(lambda: len(_pids(tmp_path)) == 4, 30, what="worker 1 started again")
        again = set(_pids(tmp_path)) - set(first)
        assert [_pids(tmp_path)[pid] for pid in again] == [1]
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(30) == 0
        assert not any(_alive(pid) for pid in _pids(tmp_path))
    finally:
        if parent.poll() is None:
            parent.kill()


def test_workers_stop_when_the_supervisor_is_killed(tmp_path: Path) -> None:
    parent = _start(tmp_path, 2)
    try:
        wait_for(lambda: len(_pids(tmp_path)) == 2, 30, what="two workers")
    finally:
        parent.kill()
        parent.wait(30)
    wait_for(lambda: not any(_alive(pid) for pid in _pids(tmp_path)), 30,
             what="the orphaned workers to stop")


def test_workers_that_keep_dying_stop_the_service_with_status_1(tmp_path: Path) -> None:
    (tmp_path / "die").touch()
    parent = _start(tmp_path, 2)
    try:
        assert parent.wait(60) == 1
    finally:
        if parent.poll() is None:
            parent.kill()
    assert parent.stderr is not None
    err = parent.stderr.read()
    assert f"workers died {workers.MAX_RESTARTS + 1} times".encode() in err, err
    # Two workers, then MAX_RESTARTS restarts; the last one started may be stopped
    # before it writes its pid file.
    assert workers.MAX_RESTARTS + 1 <= len(_pids(tmp_path)) <= workers.MAX_RESTARTS + 2


def test_listen_binds_before_any_worker_and_is_inherited() -> None:
    sock = workers.listen("127.0.0.1", 0)
    try:
        assert sock.getsockname()[0] == "127.0.0.1"
        assert sock.get_inheritable()
    finally:
        sock.close()


def test_worker_count_is_the_option_else_one_per_cpu() -> None:
    assert worker_count(3) == 3
    assert worker_count(None) == (os.cpu_count() or 1)
