"""Network namespaces for functional tests, and TCP probes run inside them.

Every namespace is made here with ``ip netns add`` and deleted by its owner (a
fixture), so tests only ever send traffic between namespaces and bridges of their own.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_SERVER = """
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(5)
    try:
        c.sendall(b"pong:" + c.recv(100))
    except OSError:
        pass
    c.close()
"""

_CLIENT = """
import socket, sys
try:
    c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3]))
    c.settimeout(float(sys.argv[3]))
    c.sendall(b"ping")
    print(c.recv(100).decode())
except OSError as exc:
    print("ERR", exc)
    sys.exit(1)
"""


@dataclass
class Netns:
    name: str

    @property
    def path(self) -> str:
        return f"/var/run/netns/{self.name}"

    def prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.name]

    def run(self, *args: str) -> str:
        return subprocess.run([*self.prefix(), *args], check=True, capture_output=True,
                              text=True, timeout=30).stdout


def make_netns() -> Netns:
    ns = Netns(f"bt-{uuid.uuid4().hex[:8]}")
    subprocess.run(["ip", "netns", "add", ns.name], check=True, timeout=30)
    return ns


def delete_netns(ns: Netns) -> None:
    subprocess.run(["ip", "netns", "del", ns.name], check=False, capture_output=True,
                   timeout=30)


@contextmanager
def tcp_server(ns: Netns | None, address: str, port: int) -> Iterator[None]:
    """A TCP server answering ``pong:<what it got>`` at address:port (in ``ns``, or in
    the host's namespace when None), for the block's duration."""
    prefix = ns.prefix() if ns else []
    proc = subprocess.Popen([*prefix, sys.executable, "-c", _SERVER, address, str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"test server did not start: {line!r} "
                               f"{proc.stderr.read() if proc.stderr else ''}")
        yield
    finally:
        proc.kill()
        proc.wait(timeout=10)


def tcp_probe(ns: Netns | None, address: str, port: int, timeout: float = 3.0) -> str:
    """What the server at address:port answered, or ``ERR ...`` when it could not be
    reached (connection refused, timed out, no route)."""
    prefix = ns.prefix() if ns else []
    done = subprocess.run([*prefix, sys.executable, "-c", _CLIENT, address, str(port),
                           str(timeout)], capture_output=True, text=True, timeout=timeout + 20,
                          check=False)
    return done.stdout.strip()


def link_names() -> set[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                         check=True).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in out.splitlines()}


def host_addresses() -> str:
    return subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True,
                          check=True).stdout


def dropped_packets(*bridges: str) -> int:
    """Packets that berth's DROP rules for these bridges have dropped."""
    done = subprocess.run(["iptables", "-w", "-L", "BERTH-FORWARD", "-v", "-x", "-n"],
                          capture_output=True, text=True, check=True)
    total = 0
    for line in done.stdout.splitlines():
        fields = line.split()  # pkts bytes target prot opt in out source destination ...
        if len(fields) >= 7 and fields[2] == "DROP" and (fields[5] in bridges
                                                         or fields[6] in bridges):
            total += int(fields[0])
    return total


def forward_rules_of(bridge: str) -> list[str]:
    done = subprocess.run(["iptables", "-w", "-S", "BERTH-FORWARD"], capture_output=True,
                          text=True, check=False)
    return [line for line in done.stdout.splitlines() if bridge in line]
