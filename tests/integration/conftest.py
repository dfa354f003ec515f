"""Integration tests: berth against the real RabbitMQ, PostgreSQL and MariaDB.

* ``rabbit_services`` (session): RabbitMQ answers on ``AMQP_URL`` (vhost ``berth``, user
  berth/berth) and PostgreSQL on ``PG_ADMIN_URL`` (role berth, which may CREATEDB).
  When either does not, ``.ci/ci-services.sh start rabbitmq postgres`` runs once; when
  that fails the test FAILS with the script's output (never a skip). MariaDB (root,
  empty password, 127.0.0.1:3306) is expected to run already.
* ``it_topic`` (session): an oslo.messaging topic of this session's own, so that agents
  of other sessions on the same vhost (or stale ones) never see these messages.
* ``database_maker`` (``fresh_database(kind)``): a context manager giving a new, empty
  database (``postgresql`` or ``mariadb``), dropped afterwards; yields its URL.
* ``Deployment``: ``berth db upgrade``, then ``berth-compute`` agents and a ``berth-api``
  as subprocesses with generated config files; ``close()`` stops them, removes their
  Docker containers (label ``berth.host=<host>``) and their RabbitMQ queues.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest
from support.berth_proc import bin_path, free_port, wait_for

from bench.fleet.services import scratch_database

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "ci-services.sh"
AMQP_URL = "amqp://berth:berth@127.0.0.1:5672/berth"
RABBIT_URL = "rabbit://berth:berth@127.0.0.1:5672/berth"
PG_ADMIN_URL = "postgresql://berth:berth@127.0.0.1:5432/berth"
MARIADB = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}
DB_KINDS = ("postgresql", "mariadb")
#: The Docker address berth-api gets: nothing answers there (berth-api needs no engine).
NO_DOCKER = "unix:///nonexistent-berth-it/docker.sock"


def _rabbit_problem() -> str | None:
    import kombu

    try:
        with kombu.Connection(AMQP_URL, connect_timeout=5) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as err:  # noqa: BLE001 - any failure is the answer
        return f"RabbitMQ at {AMQP_URL}: {err!r}"
    return None


def _postgres_problem() -> str | None:
    import psycopg

    try:
        with psycopg.connect(PG_ADMIN_URL, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except Exception as err:  # noqa: BLE001
        return f"PostgreSQL at {PG_ADMIN_URL}: {err}"
    return None


def _mariadb_problem() -> str | None:
    import pymysql

    try:
        pymysql.connect(connect_timeout=5, **MARIADB).close()  # type: ignore[arg-type]
    except Exception as err:  # noqa: BLE001
        return f"MariaDB as root at 127.0.0.1:3306: {err}"
    return None


@pytest.fixture(scope="session")
def rabbit_services() -> None:
    """RabbitMQ and PostgreSQL with berth's users, started or set up when missing."""
    problems = [p for p in (_rabbit_problem(), _postgres_problem()) if p]
    if problems:
        t0 = time.monotonic()
        proc = subprocess.run(["bash", str(SCRIPT), "start", "rabbitmq", "postgres"],
                              check=False, capture_output=True, text=True, timeout=900)
        still = [p for p in (_rabbit_problem(), _postgres_problem()) if p]
        if proc.returncode != 0 or still:
            pytest.fail(f"{'; '.join(problems)}. `{SCRIPT} start rabbitmq postgres` exited "
                        f"{proc.returncode} and left: {still}\n{proc.stdout}\n{proc.stderr}")
        print(f"ci-services.sh start rabbitmq postgres: {time.monotonic() - t0:.1f} s")
    problem = _mariadb_problem()
    if problem:
        pytest.fail(f"{problem}. These tests expect MariaDB to run already (root, empty "
                    f"password, 127.0.0.1:3306).")


@pytest.fixture(scope="session")
def it_topic() -> str:
    return f"zun-compute-it-{uuid.uuid4().hex[:8]}"


@contextmanager
def fresh_database(kind: str) -> Iterator[str]:
    """A new empty database, dropped when the block ends; yields its SQLAlchemy URL."""
    name = f"berth_it_{uuid.uuid4().hex[:10]}"
    if kind == "postgresql":
        with scratch_database("berth_it_") as url:
            yield url
    elif kind == "mariadb":
        import pymysql

        def run(sql: str) -> None:
            conn = pymysql.connect(autocommit=True, **MARIADB)  # type: ignore[arg-type]
            try:
                conn.cursor().execute(sql)
            finally:
                conn.close()

        run(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
        try:
            yield f"mysql+pymysql://root@127.0.0.1:3306/{name}?charset=utf8mb4"
        finally:
            run(f"DROP DATABASE IF EXISTS `{name}`")
    else:
        raise ValueError(f"unknown database kind {kind!r}: use one of {DB_KINDS}")


class ServiceProcess:
    """One berth-api or berth-compute subprocess (own session, log file)."""

    def __init__(self, name: str, argv: list[str], log: Path,
                 env: dict[str, str] | None = None) -> None:
        self.name, self.argv, self.log, self.env = name, argv, log, env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ServiceProcess:
        with open(self.log, "ab") as logf:
            self.proc = subprocess.Popen(
                self.argv, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True,
                env=dict(os.environ, PYTHONUNBUFFERED="1", **(self.env or {})))
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"{self.name} exited with {self.proc.returncode}:\n"
                                 f"{self.log_text()[-4000:]}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGCONT)  # a test may have frozen it
                self.proc.send_signal(sig)
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait(10)


class Deployment:
    """berth-api and berth-compute agents on one database and one topic."""

    def __init__(self, db_url: str, topic: str, root: Path) -> None:
        self.db_url, self.topic, self.root = db_url, topic, root
        self.tag = uuid.uuid4().hex[:6]
        self.key = f"it-{uuid.uuid4().hex}"
        self.agents: dict[str, ServiceProcess] = {}
        self.api: ServiceProcess | None = None
        self.apis: list[ServiceProcess] = []
        self.url = ""

    def conf(self, name: str, body: str, extra_conf: str = "") -> Path:
        """A config file: the shared settings, then ``body``. ``service_down_time`` 5 s with
        a heartbeat every 2 s (min(periodic_interval_max, 10)); the state sync runs at
        start only (600 s), so that an agent never takes over the containers of a stopped
        agent that shares its Docker engine while a test looks at them; the network
        driver is Docker's (no berth-cni-daemon runs beside these agents)."""
        path = self.root / f"{name}.conf"
        path.write_text(
            f"[DEFAULT]\ntransport_url = {RABBIT_URL}\nimage_pull_policy = ifnotpresent\n"
            f"service_down_time = 5\nperiodic_interval_max = 2\n"
            f"sync_container_state_interval = 600\nauth_encryption_key = {self.key}\n"
            f"state_path = {self.root / name}\n{body}\n"
            # These agents run without a berth-cni-daemon beside them (a deployment's
            # local networks need one per node): containers stay on Docker's bridge.
            f"[network]\ndriver = docker\n"
            f"[compute]\ntopic = {self.topic}\n"
            f"[database]\nconnection = {self.db_url}\n{extra_conf}\n")
        return path

    def log_tails(self, chars: int = 6000) -> str:
        """The end of each agent's and API's log, for a failure's report."""
        return "\n".join(f"--- {p.name} ({p.log}) ---\n{p.log_text()[-chars:]}"
                         for p in [*self.agents.values(), *self.apis])

    def berth(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """Run ``berth ARGS --config-file <db-only file>``."""
        conf = self.conf("manage", "")
        return subprocess.run([bin_path("berth"), *args, "--config-file", str(conf)],
                              check=False, capture_output=True, text=True, timeout=timeout)

    def start_agent(self, name: str, timeout: float = 120, extra_conf: str = "") -> str:
        """Start ``berth-compute`` with host ``it-<tag>-<name>``; wait until its RPC
        server listens and the API lists it up. Returns the host name. ``extra_conf``
        is appended to its config file (after the shared ``[database]``)."""
        host = f"it-{self.tag}-{name}"
        conf = self.conf(host, f"host = {host}", extra_conf)
        agent = ServiceProcess(f"berth-compute {host}",
                               [bin_path("berth-compute"), "--config-file", str(conf)],
                               self.root / f"{host}.log")
        # (an agent started again appends to the same log: only its own lines count)
        offset = len(agent.log_text())
        self.agents[host] = agent.start()

        def listening() -> bool:
            agent.check_alive()
            return f"compute agent {host} is up" in agent.log_text()[offset:]

        wait_for(listening, timeout, interval=0.2, what=f"berth-compute {host} to listen")
        if self.api is not None:
            self.wait_service(host, "up", timeout)
        return host

    def start_api(self, timeout: float = 120, extra_conf: str = "") -> None:
        """Start the deployment's (first) ``berth-api``; ``url`` is its address."""
        self.api, self.url = self.start_another_api("api", timeout, extra_conf=extra_conf)
        for host in self.agents:
            self.wait_service(host, "up", timeout)

    def start_another_api(self, name: str, timeout: float = 120, workers: int = 1,
                          extra_conf: str = "") -> tuple[ServiceProcess, str]:
        """Start a ``berth-api`` process called ``name`` on the same database and topic
        (several API processes, as a fleet runs them) with ``workers`` worker processes
        (``[api]workers``; one unless asked, whatever the machine's CPUs); returns it
        and its base URL. ``extra_conf`` is appended to its config file. It is stopped
        with the deployment."""
        port = free_port()
        conf = self.conf(name, f"host = it-{self.tag}-{name}\n[api]\nport = {port}\n"
                               f"host_ip = 127.0.0.1\nworkers = {workers}\n"
                               f"[docker]\napi_url = {NO_DOCKER}", extra_conf)
        url = f"http://127.0.0.1:{port}"
        api = ServiceProcess(f"berth-api {name}", [bin_path("berth-api"), "--config-file",
                                                   str(conf)], self.root / f"{name}.log",
                             env={"DOCKER_HOST": NO_DOCKER})
        api.start()
        self.apis.append(api)

        def ready() -> bool:
            api.check_alive()
            try:
                return httpx.get(f"{url}/healthcheck", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, timeout, interval=0.2, what=f"berth-api {name} to answer")
        return api, url

    def client(self) -> Any:
        """A real python-zunclient Client as admin."""
        from zunclient import client

        c = client.Client("1", endpoint_override=f"{self.url}/v1", auth_token="admin")
        c.http_client.session.timeout = 90
        return c

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=90, headers={
            "X-Auth-Token": "admin", "OpenStack-API-Version": "container 1.40"})

    def service_state(self, host: str) -> str | None:
        for svc in self.client().services.list():
            if svc.host == host and svc.binary == "zun-compute":
                return str(svc.state)
        return None

    def wait_service(self, host: str, state: str, timeout: float = 60) -> None:
        wait_for(lambda: self.service_state(host) == state, timeout, interval=0.5,
                 what=f"zun-compute on {host} to be {state}")

    def close(self) -> None:
        for api in self.apis:
            api.stop()
        for agent in self.agents.values():
            agent.stop()
        _remove_docker_containers(list(self.agents))
        _delete_queues([self.topic] + [f"{self.topic}.{host}" for host in self.agents])


def _remove_docker_containers(hosts: list[str]) -> None:
    client = docker.from_env()
    try:
        for host in hosts:
            for c in client.containers.list(all=True, ignore_removed=True,
                    filters={"label": f"berth.host={host}"}):
                c.remove(force=True)
    finally:
        client.close()


def _delete_queues(names: list[str]) -> None:
    """The agents' queues outlive them (not auto-delete): remove this session's."""
    import kombu

    with kombu.Connection(AMQP_URL, connect_timeout=5) as conn:
        channel = conn.channel()
        for name in names:
            try:
                channel.queue_delete(name)
            except Exception:  # noqa: BLE001 - a queue that never was is fine
                channel = conn.channel()


@pytest.fixture(scope="module")
def deployment_factory(rabbit_services: None, it_topic: str,
                       tmp_path_factory: pytest.TempPathFactory
                       ) -> Iterator[Callable[[str], Deployment]]:
    """``make(db_url)``: a Deployment (nothing started yet) closed after the module."""
    made: list[Deployment] = []

    def make(db_url: str) -> Deployment:
        d = Deployment(db_url, it_topic, tmp_path_factory.mktemp("deploy"))
        made.append(d)
        return d

    yield make
    for d in made:
        d.close()


@pytest.fixture(scope="session")
def database_maker() -> Callable[[str], Any]:
    """``fresh_database`` for test modules (which cannot import this conftest)."""
    return fresh_database


@pytest.fixture(scope="session")
def modules_loaded() -> Callable[[str], set[str]]:
    return python_modules_loaded


def python_modules_loaded(code: str) -> set[str]:
    """The modules ``python -c CODE`` has imported (for import-hygiene checks)."""
    script = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    return set(out.stdout.split())
