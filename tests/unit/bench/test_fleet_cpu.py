"""bench/fleet/cpu.py: a part's processes that end between two samples are counted
through their parent's reaped CPU, once, with only what they spent in between."""

from __future__ import annotations

import os
import subprocess
import sys

from bench.fleet.cpu import REAPED, _reaped_cpu_of, per_unit


def test_a_process_that_ended_counts_only_what_it_spent_after_the_first_sample() -> None:
    before = {"postgres": {REAPED: 10.0, 101: 2.0, 102: 1.0}}
    # 101 ended having spent 2.5 s in all (now in the reaped 12.5); 102 spent 0.5 more
    after = {"postgres": {REAPED: 12.5, 102: 1.5}}
    assert per_unit(before, after, 1) == {"postgres": 1000.0, "total": 1000.0}


def test_without_reaped_cpu_a_process_that_ended_is_missing_not_subtracted() -> None:
    before = {"api": {201: 3.0, 202: 1.0}}
    after = {"api": {202: 1.25}}
    assert per_unit(before, after, 1) == {"api": 250.0, "total": 250.0}


def test_the_reaped_cpu_of_a_process_grows_by_its_ended_childs() -> None:
    was = _reaped_cpu_of(os.getpid())
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", burn], check=True)
    assert _reaped_cpu_of(os.getpid()) - was >= 0.2
