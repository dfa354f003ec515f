"""The pytest-xdist worker a test runs in (tests/conftest.py: how the suite is split)."""

from __future__ import annotations

import os


def worker_suffix() -> str:
    """``-gw0`` in xdist's first worker, empty without workers: for the names of what a
    session fixture starts and stops on the host (a node engine), which a fixture of
    the same name in the other worker must not find or stop."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return f"-{worker}" if worker else ""
