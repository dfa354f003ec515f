"""Shared pieces of the benchmarks: a berth process, a Docker client, statistics and
the result rows.

Every benchmark runs both of its sides on one engine, the one ``DOCKER_HOST`` names
(the local socket when it is unset): the baseline's Docker SDK client and each berth
the benchmarks start (its ``[docker]api_url``). Nothing is pulled: the engine must hold
the test image already (``require_images``), and the baseline starts its containers
with ``run_detached``, never with the SDK's ``containers.run``, which pulls a missing
image from its registry (Docker Hub, for ``berth-test/busybox``)."""

from __future__ import annotations

import http.client
import json
import os
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import docker
import httpx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests"))
from support.berth_proc import TEST_IMAGE, BerthProcess

IMAGE = TEST_IMAGE
#: The command that builds each image the benchmarks run, offline, on the engine
#: ``DOCKER_HOST`` names (the docker CLI reads it too).
BUILT_BY = {TEST_IMAGE: "bash .ci/make-test-images.sh busybox"}
LOCAL_ENGINE = "unix:///var/run/docker.sock"
#: A command that exits at once on SIGTERM, so stops do not wait Docker's 10 s.
COMMAND = ["sh", "-c", "trap 'exit 0' TERM; sleep 600 & wait"]


@dataclass
class Result:
    id: str
    measure: str
    berth: float | None
    baseline: float | None
    unit: str
    goal: str
    met: bool | None
    ratio: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or not b:
        return None
    return a / b


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def name(prefix: str) -> str:
    return f"bench-{prefix}-{uuid.uuid4().hex[:8]}"


def engine_url() -> str:
    """The engine of both sides: ``DOCKER_HOST``, as the docker CLI and SDK read it."""
    return os.environ.get("DOCKER_HOST") or LOCAL_ENGINE


def engine_conf() -> str:
    """The lines of a bench berth's configuration that point it at ``engine_url()``."""
    return f"[docker]\napi_url = {engine_url()}\n"


def docker_client() -> docker.DockerClient:
    return docker.DockerClient(base_url=engine_url(), version="auto")


class MissingImage(RuntimeError):
    """An image a benchmark runs is not on the engine; the message says what builds it."""


def require_images(client: docker.DockerClient, images: tuple[str, ...] = (IMAGE,)) -> None:
    """MissingImage unless the engine holds every one of ``images``. Checked before
    anything runs: both the SDK and berth (``ifnotpresent``) would pull a missing one
    from an outside registry."""
    missing = []
    for image in images:
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            missing.append(image)
    if missing:
        where = "" if engine_url() == LOCAL_ENGINE else f"DOCKER_HOST={engine_url()} "
        how = "; ".join(f"{where}{BUILT_BY.get(i, 'docker load -i <an archive of it>')}"
                        for i in missing)
        raise MissingImage(f"the engine at {engine_url()} lacks {', '.join(missing)}, and "
                           f"the benchmarks pull nothing: build it offline with `{how}`")


def run_detached(client: docker.DockerClient, image: str, command: list[str] | None = None,
                 **options: Any) -> Any:
    """``docker run -d`` through the SDK without its pull: the same engine calls as
    ``containers.run(detach=True)`` (create, inspect, start), but an image the engine
    lacks is an ImageNotFound, never a pull."""
    container = client.containers.create(image, command, **options)
    container.start()
    return container


def wait(predicate: Callable[[], Any], timeout: float, interval: float = 0.005) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError("benchmark condition not reached")


def _cpu_busy_idle() -> tuple[int, int]:
    with open("/proc/stat") as fh:
        fields = [int(v) for v in fh.readline().split()[1:]]
    idle = fields[3] + fields[4]          # idle + iowait
    return sum(fields) - idle, idle


def settle(idle_share: float = 0.85, window: float = 0.5, timeout: float = 20.0) -> None:
    """Wait until the machine is quiet (``idle_share`` of its CPU time idle over a
    ``window``), at most ``timeout`` s: after a phase, Docker and the kernel go on
    tearing down containers and namespaces for seconds, and the next phase measured
    must not pay for them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy0, idle0 = _cpu_busy_idle()
        time.sleep(window)
        busy1, idle1 = _cpu_busy_idle()
        total = (busy1 - busy0) + (idle1 - idle0)
        if total and (idle1 - idle0) / total >= idle_share:
            return


class Berth:
    """A berth serve process with an HTTP client, for the benchmarks."""

    def __init__(self, extra_conf: str = "") -> None:
        # a loaded machine starts slowly
        self.proc = BerthProcess(engine_conf() + extra_conf).start(timeout=180)
        self._headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "container 1.40"}
        # Idle connections are dropped after 2 s, before the server's keep-alive of
        # 5 s closes them: a POST sent on a connection the server is closing fails
        # with "Server disconnected" (seen after a settle between P2's phases).
        self.http = httpx.Client(base_url=self.proc.url, timeout=120, headers=self._headers,
                                 limits=httpx.Limits(keepalive_expiry=2.0))
        self._local = threading.local()

    def run(self, cname: str, command: list[str] | None = None, memory: int = 64) -> str:
        r = self.http.post("/v1/containers", params={"run": "true"}, json={
            "name": cname, "image": IMAGE, "command": command or COMMAND,
            "image_pull_policy": "ifnotpresent", "memory": memory, "cpu": 0.1})
        r.raise_for_status()
        return str(r.json()["uuid"])

    def status(self, ident: str) -> str | None:
        """The container's status, None once it is gone (404)."""
        shown = self.shown(ident)
        return None if shown is None else shown.get("status")

    def shown(self, ident: str) -> dict[str, Any] | None:
        """The container as ``GET /v1/containers/<ident>`` shows it, None once it is
        gone (404). Polled every few ms (P1, P5), so over a plain kept-alive
        ``http.client`` connection per thread: a GET costs this harness about a fifth of
        the CPU it costs through httpx, and the harness shares the machine's two cores
        with Docker and berth."""
        for attempt in (1, 2):
            conn = getattr(self._local, "conn", None)
            reused = conn is not None
            if conn is None:
                conn = self._local.conn = http.client.HTTPConnection(
                    "127.0.0.1", self.proc.port, timeout=120)
            try:
                conn.request("GET", f"/v1/containers/{ident}", headers=self._headers)
                r = conn.getresponse()
                body = r.read()
                break
            except (http.client.HTTPException, OSError):
                conn.close()
                self._local.conn = None
                # The server closes a connection idle for 5 s: one retry on a new one.
                if not reused or attempt == 2:
                    raise
        return dict(json.loads(body)) if r.status == 200 else None

    def list_status(self) -> dict[str, str]:
        r = self.http.get("/v1/containers")
        return {c["uuid"]: c["status"] for c in r.json()["containers"]}

    def delete(self, ident: str) -> None:
        self.http.delete(f"/v1/containers/{ident}", params={"force": "True"})

    def delete_and_wait(self, ident: str, timeout: float = 120) -> None:
        """Delete and wait until the API answers 404: Zun's delete returns before the
        agent has removed the Docker container, and that removal must not overlap
        the next measured operation."""
        self.delete(ident)
        wait(lambda: self.status(ident) is None, timeout, 0.02)

    def delete_all(self, timeout: float = 120) -> None:
        for ident in list(self.list_status()):
            self.delete(ident)
        wait(lambda: not self.list_status(), timeout, 0.2)

    def stop(self) -> None:
        self.http.close()
        self.proc.stop()
        client = docker_client()
        for c in client.containers.list(all=True, ignore_removed=True,
                filters={"label": f"berth.host={self.proc.host}"}):
            c.remove(force=True)
        client.close()
