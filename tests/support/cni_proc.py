"""The real ``berth-cni-daemon`` as a subprocess, and the real ``berth-cni`` executable.

Both run this checkout's code (``PYTHONPATH`` = the repository's root), whatever
berth the virtualenv has installed.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


class CniDaemon:
    """One daemon on a free loopback port with its registry under ``workdir``; it can be
    killed with SIGKILL and started again on the same registry."""

    def __init__(self, workdir: Path, sync_interval: int = 60, vif_active_timeout: int = 10):
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.registry_file = workdir / "cni" / "registry.json"
        self.log_file = workdir / "daemon.log"
        self.config_file = workdir / "berth.conf"
        self.config_file.write_text(
            f"[DEFAULT]\nstate_path = {workdir}\n"
            f"[cni_daemon]\ncni_daemon_port = {self.port}\n"
            f"registry_file = {self.registry_file}\nsync_interval = {sync_interval}\n"
            f"network_linger = 0\n"
            f"vif_active_timeout = {vif_active_timeout}\n")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> CniDaemon:
        log = open(self.log_file, "ab")  # noqa: SIM115 - the child keeps it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "berth.cmd.cni_daemon", "--config-file",
             str(self.config_file)], stdout=log, stderr=log, env=_env(), cwd=ROOT)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"berth-cni-daemon exited {self.proc.returncode}:\n"
                                   f"{self.log()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"berth-cni-daemon did not answer within {timeout} s:\n{self.log()}")

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-4000:]
        except FileNotFoundError:
            return ""

    def registry(self) -> dict[str, Any]:
        try:
            return json.loads(self.registry_file.read_text())
        except FileNotFoundError:
            return {"networks": [], "attachments": []}


def cni_command() -> list[str]:
    """``BERTH_TEST_CNI`` if set, else the installed ``berth-cni`` beside this interpreter,
    else the same entry point through ``-m`` (a virtualenv installed before the script
    was declared)."""
    if os.environ.get("BERTH_TEST_CNI"):
        return [os.environ["BERTH_TEST_CNI"]]
    script = Path(sys.executable).parent / "berth-cni"
    return [str(script)] if script.exists() else [sys.executable, "-m", "berth.cmd.cni"]


def run_cni(command: str, stdin: bytes | dict[str, Any], *, container_id: str = "",
            netns: str = "", ifname: str = "eth0", args: str = "",
            popen: bool = False) -> Any:
    """Run the plugin as a runtime would; returns (exit status, parsed stdout or None),
    or the Popen when ``popen``."""
    env = _env()
    env.update({"CNI_COMMAND": command, "CNI_CONTAINERID": container_id, "CNI_NETNS": netns,
                "CNI_IFNAME": ifname, "CNI_ARGS": args, "CNI_PATH": "/opt/cni/bin"})
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    if popen:
        proc = subprocess.Popen(cni_command(), env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.close()
        return proc
    done = subprocess.run(cni_command(), env=env, input=data, capture_output=True,
                          timeout=120, cwd=ROOT, check=False)
    out = done.stdout.decode().strip()
    return done.returncode, json.loads(out) if out else None
