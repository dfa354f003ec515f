"""The run's own PostgreSQL database and RabbitMQ vhost (made at the start, dropped
at the end: the machine's services are shared), its config file, and its
processes: the agents' hosts (``nodes.py``) and ``berth-api``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx

PG_ADMIN_URL = "postgresql://berth:berth@127.0.0.1:5432/berth"
RABBIT_USER = "berth"
ROOT = Path(__file__).resolve().parents[2]


def _admin_sql(sql: str) -> None:
    """Run ``sql`` on the PostgreSQL server as the role that creates the databases."""
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]


def _database_url(name: str) -> str:
    return f"postgresql+psycopg://berth:berth@127.0.0.1:5432/{name}"


@contextmanager
def scratch_database(prefix: str) -> Iterator[str]:
    """A new empty PostgreSQL database named ``prefix`` and a random tag, dropped (its
    connections closed) when the block ends; yields its SQLAlchemy URL."""
    name = f"{prefix}{uuid.uuid4().hex[:10]}"
    _admin_sql(f'CREATE DATABASE "{name}"')
    try:
        yield _database_url(name)
    finally:
        _admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


@dataclass
class Services:
    """A database and a vhost named ``berth_fleet_<tag>``."""

    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    @property
    def name(self) -> str:
        return f"berth_fleet_{self.tag}"

    @property
    def db_url(self) -> str:
        return _database_url(self.name)

    @property
    def transport_url(self) -> str:
        return f"rabbit://{RABBIT_USER}:berth@127.0.0.1:5672/{self.name}"

    def create(self) -> None:
        _admin_sql(f'CREATE DATABASE "{self.name}"')
        _rabbitmqctl("add_vhost", self.name)
        _rabbitmqctl("set_permissions", "-p", self.name, RABBIT_USER, ".*", ".*", ".*")

    def drop(self) -> None:
        _admin_sql(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        _rabbitmqctl("delete_vhost", self.name, check=False)


def broker_file_limit() -> int | None:
    """The soft open-files limit of the machine's RabbitMQ (None: not found)."""
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"beam.smp" in (proc / "cmdline").read_bytes():
                for line in (proc / "limits").read_text().splitlines():
                    if line.startswith("Max open files"):
                        return int(line.split()[3])
        except (OSError, ValueError, IndexError):
            continue
    return None


def check_broker_room(nodes: int) -> None:
    """Each agent's RPC server holds a connection of its own to RabbitMQ (and each
    host a pool besides): a broker whose open-files limit is below that resets
    connections under the agents' start, and the run never fills. Refused at once."""
    limit = broker_file_limit()
    wanted = nodes + 200
    if limit is not None and limit < wanted:
        raise SystemExit(
            f"RabbitMQ may open {limit} files (its soft limit), and {nodes} agents need "
            f"about {wanted} connections: start it with a higher limit (`ulimit -n 65536` "
            f"before rabbitmq-server, or LimitNOFILE= in its service unit), or run fewer "
            f"nodes.")


def _rabbitmqctl(*args: str, check: bool = True) -> None:
    done = subprocess.run(["rabbitmqctl", *args], capture_output=True, text=True,
                          timeout=120, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"rabbitmqctl {' '.join(args)}: {done.stderr or done.stdout}")


def write_config(path: Path, services: Services, *, port: int, api_workers: int,
                 start_latency: float, pool_size: int, extra: str = "") -> Path:
    """One config file for the API and every agent (each agent's host is set by
    ``nodes.py``). Quotas off (one project fills the fleet); containers stay on
    Docker's network driver (no CNI daemon: nothing to plug on a simulated engine)."""
    path.write_text(
        f"[DEFAULT]\ntransport_url = {services.transport_url}\n"
        f"image_pull_policy = ifnotpresent\nstate_path = {path.parent / 'state'}\n"
        f"auth_encryption_key = fleet-{services.tag}\n"
        f"[database]\nconnection = {services.db_url}\nmax_pool_size = {pool_size}\n"
        f"[api]\nhost_ip = 127.0.0.1\nport = {port}\nworkers = {api_workers}\n"
        f"[compute]\nruntime_driver = simulated\nsimulated_start_latency = {start_latency}\n"
        f"topic = berth-fleet-{services.tag}\n"
        f"[network]\ndriver = docker\n"
        f"[quota]\ncontainers = -1\nmemory = -1\ncpu = -1\ndisk = -1\n{extra}\n")
    return path


def berth_db_upgrade(conf: Path) -> None:
    subprocess.run([_bin("berth"), "db", "upgrade", "--config-file", str(conf)],
                   check=True, capture_output=True, timeout=300)


class NodeHost:
    """One process hosting agents ``prefix-first`` .. ``prefix-(first+count-1)``."""

    def __init__(self, conf: Path, prefix: str, first: int, count: int, log: Path) -> None:
        self._log: IO[bytes] = open(log, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.fleet.nodes", "--config-file", str(conf),
             "--prefix", prefix, "--first", str(first), "--count", str(count)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True,
            cwd=ROOT, env=dict(os.environ, PYTHONUNBUFFERED="1"), start_new_session=True)

    def wait_ready(self, timeout: float) -> str:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if line.startswith("READY"):
                return line.strip()
            if not line and self.proc.poll() is not None:
                raise RuntimeError(f"node host exited {self.proc.returncode} (see its log)")
        raise TimeoutError("node host not ready")

    def ask(self, command: str) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(120)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()


class Api:
    """``berth-api`` on the run's config (its ``[api]workers``), each worker counting
    its statements by caller into ``tallies`` (``api_host.py``)."""

    def __init__(self, conf: Path, port: int, log: Path, tallies: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self._tallies = tallies
        tallies.mkdir(parents=True, exist_ok=True)
        self._log: IO[bytes] = open(log, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.fleet.api_host", str(tallies),
             "--config-file", str(conf)],
            stdout=self._log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)

    def statements(self, settle: float = 0.5) -> dict[str, int]:
        """Every worker's statements by caller so far (summed): each is asked to write
        its tally (SIGUSR1), then the files are read ``settle`` seconds later."""
        total: dict[str, int] = {}
        for tally in self.tallies(settle).values():
            for caller, n in tally.items():
                total[caller] = total.get(caller, 0) + n
        return total

    def tallies(self, settle: float = 0.5) -> dict[int, dict[str, int]]:
        """Each worker's tally so far, by its pid (see ``statements``)."""
        files = list(self._tallies.glob("api-*.json"))
        for f in files:
            try:
                os.kill(int(f.stem.split("-")[1]), signal.SIGUSR1)
            except (ProcessLookupError, ValueError):
                pass
        time.sleep(settle)
        return {int(f.stem.split("-")[1]): json.loads(f.read_text())
                for f in self._tallies.glob("api-*.json")}

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"berth-api exited {self.proc.returncode} (see its log)")
            try:
                if httpx.get(f"{self.url}/healthcheck", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise TimeoutError("berth-api not ready")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()
