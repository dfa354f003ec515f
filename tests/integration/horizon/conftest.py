"""Horizon 27 with zun-ui 18 (PyPI) against berth, in Debian's chromium (issue 39).

* ``horizon`` (session): Keystone answers (``ci-services.sh start keystone`` when not),
  its test users exist (``support.keystone``), Neutron answers (``neutron-ci.sh start``
  when not) and Horizon answers at ``HORIZON_URL`` (``ci-services.sh start horizon``
  when not: about 85 s the first time). Whatever this fixture started it stops. A
  service that cannot start FAILS the tests with the script's output, never a skip.
* ``berth_hz`` (session): one ``berth serve`` with ``[api]auth_strategy = keystone`` and
  the cni network driver on that Neutron, its host Neutron's (so that the OVS agent
  binds its ports), and its endpoint registered as service type ``container`` in
  Horizon's region, beside Neutron's ``network`` endpoint (``Catalog``): for the
  session only, and only the endpoints of that region are touched, so that a real Zun
  registered in another region (issue 35) stays as it is.
* ``neutron_net`` (session): a Neutron network with a subnet, and a security group, of
  the test project, which the panel lists; removed at the end.

They run with ``BERTH_HORIZON_TESTS=1`` (and Neutron, which the test command starts
unless ``BERTH_NEUTRON_TESTS=0``): ``BERTH_HORIZON_TESTS=1 sudo scripts/test.sh
tests/integration/horizon``. CI leaves them out: Horizon's first install and these
tests take about four minutes, past what the CI run's budget has left.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import keystone as ks
from support.berth_proc import BerthProcess, wait_for
from support.browser import artifacts_dir, chromium, doc_images_dir

ROOT = Path(__file__).resolve().parents[3]
CI = ROOT / ".ci"
HORIZON_URL = os.environ.get("BERTH_HORIZON_URL", "http://127.0.0.1:8090")
REGION = "berth-horizon"          # .ci/ci-services.sh: Horizon's DEFAULT_SERVICE_REGIONS
NEUTRON_URL = os.environ.get("BERTH_NEUTRON_URL", "http://127.0.0.1:9696")
NEUTRON_HOST = os.environ.get("BERTH_NEUTRON_HOST", "berth-neutron-ci")
ADMIN = ks.USERS[0]               # berth-alpha-admin: the project's panels and the admin ones


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    if os.environ.get("BERTH_HORIZON_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="Horizon's browser tests: BERTH_HORIZON_TESTS=1 "
                                   "sudo scripts/test.sh tests/integration/horizon")
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(skip)


def _run(*argv: str, timeout: int = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", *argv], check=False, capture_output=True, text=True,
                          timeout=timeout)


def _up(script: str, name: str) -> bool:
    if name == "neutron":
        # Its API, with the OVS agent of its host alive: neutron-ci.sh's status also looks
        # for the agent's first loop in a log that a second start empties.
        try:
            agents = httpx.get(f"{NEUTRON_URL}/v2.0/agents", timeout=5, params={
                "binary": "neutron-openvswitch-agent", "host": NEUTRON_HOST}).json()
        except (httpx.HTTPError, ValueError):
            return False
        return any(a.get("alive") for a in agents.get("agents", []))
    out = _run(str(CI / script), "status", name, timeout=60).stdout
    return ": up" in out


@pytest.fixture(scope="session")
def horizon() -> Iterator[str]:
    started: list[tuple[str, ...]] = []
    for script, name, deps in (("ci-services.sh", "keystone", ()),
                               ("neutron-ci.sh", "neutron", ("rabbitmq",)),
                               ("ci-services.sh", "horizon", ())):
        if _up(script, name):
            continue
        t0 = time.monotonic()
        for dep in deps:
            _run(str(CI / "ci-services.sh"), "start", dep)
        argv = (str(CI / script), "start", *([name] if script == "ci-services.sh" else []))
        proc = _run(*argv)
        if proc.returncode != 0 or not _up(script, name):
            pytest.fail(f"could not start {name} with {' '.join(argv)} (exit "
                        f"{proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        started.append(argv)
        print(f"{name} started in {time.monotonic() - t0:.1f} s")
    admin = ks.Keystone()
    admin.set_up()
    admin.close()
    yield HORIZON_URL
    for argv in reversed(started):
        _run(argv[0], "stop", *argv[2:], timeout=300)


class Catalog:
    """The endpoints of one region, for one service type each: the service of that
    type is found (or made), its endpoints in ``REGION`` replaced, and removed at the
    end; other regions' endpoints are never touched."""

    def __init__(self) -> None:
        self.http = httpx.Client(base_url=ks.AUTH_URL, timeout=30, headers={
            "X-Auth-Token": ks.issue_token("admin", "admin", "admin")})
        self.made: list[str] = []
        if self.http.get(f"/regions/{REGION}").status_code == 404:
            self.http.post("/regions", json={"region": {"id": REGION}}).raise_for_status()

    def _service(self, kind: str, name: str) -> str:
        found = self.http.get("/services", params={"type": kind}).json()["services"]
        if found:
            return str(found[0]["id"])
        made = self.http.post("/services", json={"service": {"type": kind, "name": name}})
        made.raise_for_status()
        return str(made.json()["service"]["id"])

    def _drop(self, service_id: str) -> None:
        for endpoint in self.http.get("/endpoints", params={
                "service_id": service_id, "region_id": REGION}).json()["endpoints"]:
            if endpoint["region_id"] == REGION:
                self.http.delete(f"/endpoints/{endpoint['id']}")

    def register(self, kind: str, name: str, url: str) -> None:
        sid = self._service(kind, name)
        self._drop(sid)
        for interface in ("public", "internal", "admin"):
            self.http.post("/endpoints", json={"endpoint": {
                "service_id": sid, "interface": interface, "region_id": REGION,
                "url": url}}).raise_for_status()
        self.made.append(sid)

    def close(self) -> None:
        for sid in self.made:
            self._drop(sid)
        self.http.close()


def _berth_conf() -> str:
    return ("[api]\nauth_strategy = keystone\n" + ks.authtoken_conf()
            + f"[network]\ndriver = cni\n[neutron]\nendpoint_override = {NEUTRON_URL}\n"
            + "[cni_daemon]\nvif_active_timeout = 60\n")


@pytest.fixture(scope="session")
def berth_hz(horizon: str) -> Iterator[BerthProcess]:
    proc = BerthProcess(_berth_conf(), host=NEUTRON_HOST)
    proc.start(timeout=180)
    catalog = Catalog()
    catalog.register("container", "berth", f"{proc.url}/v1")
    catalog.register("network", "neutron", NEUTRON_URL)
    yield proc
    catalog.close()
    _delete_all(proc)
    proc.stop()


def _delete_all(proc: BerthProcess) -> None:
    """This berth's containers and capsules, through its API (its host is shared with
    the Neutron tests: only what this berth made goes)."""
    token = ks.issue_token(ADMIN.name, project=ADMIN.project)
    with proc.http(token=token) as http:
        for kind in ("capsules", "containers"):
            body = http.get(f"/v1/{kind}", params={"all_projects": "1"})
            for item in body.json().get(kind, []) if body.status_code == 200 else []:
                http.delete(f"/v1/{kind}/{item['uuid']}", params={"force": "true"}
                            if kind == "containers" else None)
        wait_for(lambda: not http.get("/v1/containers", params={"all_projects": "1"}
                                      ).json()["containers"], 120, interval=0.5,
                 what="the test's containers to be deleted")


@pytest.fixture(scope="session")
def neutron_net(berth_hz: BerthProcess) -> Iterator[dict[str, str]]:
    admin = ks.Keystone()
    project = admin.project(ADMIN.project)
    admin.close()
    tag = uuid.uuid4().hex[:6]
    with httpx.Client(base_url=f"{NEUTRON_URL}/v2.0", timeout=60) as raw:
        net = raw.post("/networks", json={"network": {"name": f"hz-net-{tag}",
                                                      "project_id": project}})
        assert net.status_code == 201, net.text
        net_id = net.json()["network"]["id"]
        sub = raw.post("/subnets", json={"subnet": {
            "network_id": net_id, "ip_version": 4, "cidr": "10.246.77.0/24",
            "name": f"hz-sub-{tag}", "project_id": project}})
        assert sub.status_code == 201, sub.text
        group = raw.post("/security-groups", json={"security_group": {
            "name": f"hz-sg-{tag}", "project_id": project}})
        assert group.status_code == 201, group.text
        made = {"network": f"hz-net-{tag}", "network_id": net_id,
                "security_group": f"hz-sg-{tag}",
                "security_group_id": group.json()["security_group"]["id"]}
        yield made
        for port in raw.get("/ports", params={"network_id": net_id}).json()["ports"]:
            if not port["device_owner"].startswith("network:"):
                raw.delete(f"/ports/{port['id']}")
        raw.delete(f"/networks/{net_id}")
        raw.delete(f"/security-groups/{made['security_group_id']}")


@pytest.fixture(scope="module")
def browser(berth_hz: BerthProcess) -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.call_failed = report.failed


@pytest.fixture
def page(browser: Any, berth_hz: BerthProcess, horizon: str, request: Any) -> Iterator[Any]:
    """A page signed in to Horizon as the project's admin (on a failure, a screenshot
    of where it stood goes to the tests' artifacts)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(60_000)
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"console {m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"page error: {e}"))
    page.goto(f"{horizon}/auth/login/")
    page.fill("#id_username", ADMIN.name)
    page.fill("#id_password", ks.PASSWORD)
    page.click("#loginBtn")
    page.wait_for_url(lambda url: "/auth/login" not in url)
    try:
        yield page
    finally:
        if getattr(request.node, "call_failed", False):
            page.screenshot(path=str(artifacts_dir() / f"horizon-{request.node.name}.png"))
        for line in messages:
            print(line)
        context.close()


def shot(page: Any, name: str) -> None:
    """The viewport as horizon-NAME.png in doc_images_dir() (docs/images when renewing)."""
    page.screenshot(path=str(doc_images_dir() / f"horizon-{name}.png"))
