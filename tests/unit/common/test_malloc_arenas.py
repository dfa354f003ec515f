"""limit_malloc_arenas (berth.common.memory): glibc keeps to the arenas it is given."""

from __future__ import annotations

import os
import re
import subprocess
import sys

_PROGRAM = """
import ctypes, sys, threading
from berth.common.memory import limit_malloc_arenas
print(limit_malloc_arenas(2), flush=True)
barrier = threading.Barrier(8)
def churn():
    barrier.wait()
    for _ in range(2000):
        bufs = [ctypes.create_string_buffer(300_000) for _ in range(4)]   # malloc'd
        del bufs
threads = [threading.Thread(target=churn) for _ in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
ctypes.CDLL("libc.so.6").malloc_stats()    # one "Arena N:" block per arena, on stderr
"""


def _arenas(env: dict[str, str]) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-c", _PROGRAM], check=False, capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), len(re.findall(r"^Arena \d+:", done.stderr, re.MULTILINE))


def test_at_most_two_arenas_however_many_threads_allocate() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    said, arenas = _arenas(env)
    assert said == "True"
    assert 1 <= arenas <= 2


def test_the_environment_wins() -> None:
    said, arenas = _arenas(dict(os.environ, MALLOC_ARENA_MAX="1"))
    assert said == "False" and arenas == 1
