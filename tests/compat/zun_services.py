"""Zun's processes and surroundings, as the seed-defect tests (``test_seed_*.py``) need
them to provoke each defect for real.

* ``DEFECTS_OPT_IN``: the mark every such module carries. They kill zun-compute, purge
  its RabbitMQ queue, turn on MariaDB's general log and wait through Zun's 60 s timers,
  so they run only when asked: ``BERTH_ZUN_DEFECTS=1`` beside ``BERTH_ZUN_URL``.
* ``kill_service(name)`` / ``revive()``: SIGKILL one of Zun's four services (its process
  group, by the pid file of ``.ci/zun-ci.sh``), and ``zun-ci.sh revive`` to start it again.
* ``LogTail(path)``: what a log file gained since the tail was made.
* ``zun_call(client, method, url, ...)``: a request to Zun with ``Connection: close``
  (Zun answers 204 with a body, which breaks a kept-alive connection).
* ``settle(client, uuid, statuses)``: wait until the container's status is one of them.
* ``zun_network_id()`` / ``run_on_zun_network(zun, prefix, **body)``: the Neutron
  network ``zun-ci.sh`` made, and a ``sleep`` container created with run on it.
* ``capsule_on_zun(zun, name)``: a capsule of one ``sleep`` member made through Zun,
  once it has settled (Running or Error) and Zun's own sync had its last word.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid as uuidlib
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.berth_proc import wait_for

from compat.zun_client import NEUTRON_URL, ZUN_IMAGE, ZUN_NETWORK

ROOT = Path(__file__).resolve().parents[2]
BASE = Path(os.environ.get("BERTH_ZUN_BASE", "/var/tmp/berth-ci/zun"))
LOGS = BASE / "logs"
#: Zun's RabbitMQ vhost (``zun-ci.sh``), reached as the CI's user berth.
ZUN_AMQP_URL = "amqp://berth:berth@127.0.0.1:5672/zun_ci"

DEFECTS_OPT_IN = pytest.mark.skipif(
    os.environ.get("BERTH_ZUN_DEFECTS") != "1",
    reason="opt-in: BERTH_ZUN_DEFECTS=1 (these tests kill zun-compute, purge its queue, "
           "turn on MariaDB's general log and wait through Zun's 60 s timers)")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def kill_service(name: str) -> None:
    """SIGKILL Zun's service ``name`` (api, compute, cni-daemon, wsproxy) and its process
    group, as a crash: nothing of it gets to clean up or to acknowledge."""
    pid = int((BASE / "pids" / f"{name}.pid").read_text())
    assert _pid_alive(pid), f"zun-{name} (pid {pid}) is not running: zun-ci.sh revive"
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not _pid_alive(pid), 30, interval=0.1, what=f"zun-{name} to die")


def revive() -> None:
    """Start again whichever of Zun's services is not running (``zun-ci.sh revive``)."""
    done = subprocess.run(["bash", str(ROOT / ".ci" / "zun-ci.sh"), "revive"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"zun-ci.sh revive failed:\n{done.stderr[-3000:]}"


class LogTail:
    """The text a log file gains after this object is made."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = path.stat().st_size if path.exists() else 0

    def text(self) -> str:
        if not self.path.exists():
            return ""
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            return f.read().decode(errors="replace")


def zun_call(client: httpx.Client, method: str, url: str, **kwargs: Any) -> httpx.Response:
    headers = {"Connection": "close", **kwargs.pop("headers", {})}
    return client.request(method, url, headers=headers, **kwargs)


def settle(client: httpx.Client, uuid: str, statuses: tuple[str, ...],
           timeout: float = 180) -> dict[str, Any]:
    def state() -> dict[str, Any] | None:
        body = client.get(f"/v1/containers/{uuid}").json()
        return body if body.get("status") in statuses else None

    return wait_for(state, timeout, interval=0.5,  # type: ignore[return-value]
                    what=f"{uuid} to be one of {statuses}")


def force_delete(client: httpx.Client, uuid: str, timeout: float = 120) -> None:
    """Delete with force, again while the service refuses (Zun does during a task)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = zun_call(client, "DELETE", f"/v1/containers/{uuid}", params={"force": "true"})
        if r.status_code in (202, 204, 404):
            break
        time.sleep(1)
    wait_for(lambda: client.get(f"/v1/containers/{uuid}").status_code == 404, timeout,
             interval=0.5, what=f"{uuid} to be deleted")


def zun_network_id() -> str:
    """The id of the Neutron network ``zun-ci.sh`` made for Zun's containers."""
    return str(httpx.get(f"{NEUTRON_URL}/v2.0/networks", params={"name": ZUN_NETWORK},
                         timeout=30).json()["networks"][0]["id"])


def run_on_zun_network(zun: httpx.Client, prefix: str, seconds: int = 3600,
                       **body: Any) -> str:
    """Create (with run) a container named ``prefix-<hex>`` that sleeps ``seconds`` on
    ``zun_network_id()``, with the other fields of ``body``; its uuid (202 asserted)."""
    r = zun.post("/v1/containers", params={"run": "true"}, json={
        "name": f"{prefix}-{uuidlib.uuid4().hex[:6]}", "image": ZUN_IMAGE,
        "command": ["sleep", str(seconds)], "image_pull_policy": "ifnotpresent",
        "nets": [{"network": zun_network_id()}], **body})
    assert r.status_code == 202, r.text
    return str(r.json()["uuid"])


def capsule_on_zun(zun: httpx.Client, name: str) -> str:
    """The uuid of a capsule of one ``sleep`` member made through Zun's API, once it
    is Running or in Error and Zun's own sync (5 s more) has had its last word."""
    r = zun.post("/v1/capsules", json={"template": {
        "kind": "capsule", "capsuleVersion": "beta", "metadata": {"name": name},
        "spec": {"containers": [{"image": ZUN_IMAGE, "command": ["sleep", "3600"],
                                 "imagePullPolicy": "IfNotPresent"}]}}})
    assert r.status_code == 202, r.text
    capsule = str(r.json()["uuid"])
    wait_for(lambda: zun.get(f"/v1/capsules/{capsule}").json()["status"]
             in ("Running", "Error"), 300, interval=1, what="the capsule to settle")
    time.sleep(5)
    return capsule
