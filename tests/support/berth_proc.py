"""Run a real ``berth serve`` (a subprocess) for tests, on a free port, with its own
state directory, host name and log file; kill it like an operator would."""

from __future__ import annotations

import ipaddress
import itertools
import os
import random
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx

from support.ports import free_port

TEST_IMAGE = "berth-test/busybox:latest"
REGISTRY = "127.0.0.1:5000"


def wait_for(predicate: Callable[[], object], timeout: float = 30.0, interval: float = 0.05,
             what: str = "condition") -> object:
    """Poll ``predicate`` until it returns something truthy; AssertionError on timeout."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


#: Each berth a test starts carves its local networks from a /20 of its own, taken
#: from 10.200.0.0/13 (128 of them; tests/functional/network uses 10.244.110+): one
#: that no route of the host overlaps now, so that berths running side by side (or
#: bridges a killed one left) never share a subnet, and the host reaches each
#: container through its own bridge.
_POOL_SPACE = ipaddress.IPv4Network("10.200.0.0/13")
_POOL_ORDER = list(_POOL_SPACE.subnets(new_prefix=20))
random.Random(os.getpid()).shuffle(_POOL_ORDER)
_POOLS = itertools.count()


def next_subnet_pool() -> str:
    routes = subprocess.run(["ip", "-4", "route"], capture_output=True, text=True,
                            check=False).stdout.split()
    taken = []
    for word in routes:
        try:
            taken.append(ipaddress.IPv4Network(word, strict=False))
        except ValueError:
            continue
    for _ in range(len(_POOL_ORDER)):
        pool = _POOL_ORDER[next(_POOLS) % len(_POOL_ORDER)]
        if not any(pool.overlaps(t) for t in taken if t.prefixlen >= 13):
            return str(pool)
    raise RuntimeError(f"every /20 of {_POOL_SPACE} overlaps a route of this host")


class BerthProcess:
    """One ``berth serve``. ``extra_conf`` is appended to the generated config file.
    ``ca_file``: the API serves HTTPS (``extra_conf`` sets ``[api]enable_ssl_api`` and
    ``[ssl]``) with a certificate this CA signed; the clients below trust it."""

    def __init__(self, extra_conf: str = "", host: str | None = None,
                 state_dir: str | None = None, ca_file: str | None = None) -> None:
        self.host = host or f"ftest-{uuid.uuid4().hex[:8]}"
        self.dir = Path(state_dir or tempfile.mkdtemp(prefix="berth-test-"))
        self.port = free_port()
        self.wsport = free_port()
        self.cniport = free_port()
        self.subnet_pool = next_subnet_pool()
        self.ca_file = ca_file
        #: what httpx checks the API's certificate with
        self.verify: ssl.SSLContext | bool = (ssl.create_default_context(cafile=ca_file)
                                              if ca_file else True)
        self.url = f"{'https' if ca_file else 'http'}://127.0.0.1:{self.port}"
        self.conf = self.dir / "berth.conf"
        self.log = self.dir / "berth.log"
        self.conf.write_text(
            f"[DEFAULT]\nhost = {self.host}\nstate_path = {self.dir / 'state'}\n"
            f"image_pull_policy = ifnotpresent\n"
            f"[api]\nport = {self.port}\nhost_ip = 127.0.0.1\n"
            f"[websocket_proxy]\nwsproxy_host = 127.0.0.1\nwsproxy_port = {self.wsport}\n"
            # Several berths (so several CNI daemons) run on the test machine at once:
            # none may take another's veths for orphans.
            f"[cni_daemon]\ncni_daemon_port = {self.cniport}\nsweep_orphan_veths = false\n"
            f"[network]\nlocal_subnet_pool = {self.subnet_pool}\n"
            f"{extra_conf}\n")
        self.proc: subprocess.Popen[bytes] | None = None

    def launch(self) -> BerthProcess:
        """Start ``berth serve`` without waiting for it to answer (a test that kills it
        while it starts up)."""
        with open(self.log, "ab") as logf:    # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "berth.cmd.main", "--config-file", str(self.conf),
                 "serve"],
                stdout=logf, stderr=subprocess.STDOUT, start_new_session=True,
                env=dict(os.environ, PYTHONUNBUFFERED="1"))
        return self

    def start(self, timeout: float = 30.0) -> BerthProcess:
        self.launch()

        def ready() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"berth serve exited with {self.proc.returncode}:\n"
                                     f"{self.log_text()[-4000:]}")
            try:
                return httpx.get(f"{self.url}/healthcheck", timeout=1,
                                 verify=self.verify).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, timeout, what="berth serve to answer")
        return self

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing gets to clean up."""
        self.stop(signal.SIGKILL)

    def client(self, token: str = "admin", version: str = "1"):  # type: ignore[no-untyped-def]
        """A real python-zunclient Client (admin_token plugin, no Keystone)."""
        from zunclient import client

        c = client.Client(version, endpoint_override=f"{self.url}/v1", auth_token=token,
                          cacert=self.ca_file)
        c.http_client.session.timeout = 60
        return c

    def http(self, token: str = "admin", version: str = "container 1.40") -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, verify=self.verify, headers={
            "X-Auth-Token": token, "OpenStack-API-Version": version})

    def openstack_env(self, token: str = "admin") -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        env.update(OS_AUTH_TYPE="admin_token", OS_ENDPOINT=f"{self.url}/v1", OS_TOKEN=token)
        if self.ca_file:
            env["OS_CACERT"] = self.ca_file
        return env

    def zun_cli_env(self, user: str = "admin", project: str = "admin") -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        env.update(OS_AUTH_URL=f"{self.url}/identity/v3", OS_USERNAME=user, OS_PASSWORD="x",
                   OS_PROJECT_NAME=project)
        if self.ca_file:
            env["OS_CACERT"] = self.ca_file
        return env


def bin_path(name: str) -> str:
    """A console script installed next to this Python (zun, openstack, berth)."""
    return str(Path(sys.executable).parent / name)


def remove_local_networks(proc: BerthProcess) -> None:
    """Remove the bridges and firewall rules of ``proc``'s local networks that its CNI
    daemon left on the host (after a berth was killed, or stopped while containers
    still ran: their Docker containers are removed afterwards, behind its back).
    Read from the daemon's registry; a bridge that is gone already is skipped."""
    import json

    from berth.network.base import NetworkSpec
    from berth.network.bridge import BridgeDriver
    from berth.network.firewall import DualStackFirewall

    path = proc.dir / "state" / "cni" / "registry.json"
    if not path.exists():
        return
    specs = [NetworkSpec.from_dict(n) for n in json.loads(path.read_text()).get("networks", [])]
    driver, firewall = BridgeDriver(), DualStackFirewall()
    for spec in specs:
        firewall.remove_network(spec)
        driver.delete_network(spec)


def mounts_under(directory: Path) -> list[str]:
    """The mount points below ``directory`` (a berth's volumes), deepest first."""
    from berth.volume.mounts import mount_points

    prefix = str(directory.resolve()) + "/"
    return sorted((p for p in mount_points() if p.startswith(prefix)), key=len, reverse=True)


def unmount_volumes(proc: BerthProcess) -> None:
    """Unmount what ``proc`` left mounted (it was killed, or stopped with containers)."""
    for point in mounts_under(proc.dir):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)
