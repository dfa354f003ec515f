"""A real OpenStack Cinder for the cinder volume driver (``.ci/cinder-ci.sh``: Cinder 29
from PyPI, its NFS driver on a bind-mounted local share, noauth with project ids).

``cinder`` (session): Cinder answers at ``CINDER_URL``; when it does not,
``.ci/ci-services.sh start rabbitmq postgres cinder`` runs once (and ``stop cinder`` at
the end). A start that fails FAILS the test with the script's output, never a skip.
``cinder_raw``: an httpx client speaking to Cinder as its admin, to read back what the
driver did (and to set states the driver never sets: ``os-reset_status``).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / ".ci" / "ci-services.sh"
PROJECT = os.environ.get("BERTH_CINDER_PROJECT", "4b6c6f8e0a2e4e1d9a6f6b3c2d1e0f00")
PORT = os.environ.get("BERTH_CINDER_PORT", "8776")
CINDER_URL = f"http://127.0.0.1:{PORT}/v3"
ADMIN_TOKEN = f"admin:{PROJECT}"
HEADERS = {"X-Auth-Token": ADMIN_TOKEN, "OpenStack-API-Version": "volume 3.71"}


def _status() -> str:
    proc = subprocess.run(["bash", str(SCRIPT), "status", "cinder"], check=False,
                          capture_output=True, text=True, timeout=60)
    return proc.stdout.strip()


@pytest.fixture(scope="session")
def cinder() -> Iterator[str]:
    """Cinder's v3 URL (without the project id)."""
    started = False
    if ": up" not in _status():
        t0 = time.monotonic()
        proc = subprocess.run(["bash", str(SCRIPT), "start", "rabbitmq", "postgres", "cinder"],
                              check=False, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0 or ": up" not in _status():
            pytest.fail(f"could not start Cinder with `{SCRIPT} start rabbitmq postgres "
                        f"cinder` (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        started = True
        print(f"Cinder started in {time.monotonic() - t0:.1f} s")
    yield CINDER_URL
    if started:
        subprocess.run(["bash", str(SCRIPT), "stop", "cinder"], check=False,
                       capture_output=True, timeout=300)


@pytest.fixture
def cinder_raw(cinder: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{cinder}/{PROJECT}", headers=HEADERS, timeout=60) as client:
        yield client
