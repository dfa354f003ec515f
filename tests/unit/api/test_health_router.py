"""/metrics, /healthz and /readyz on the API (berth/api/routers/health.py), and the
request metrics the middleware records (berth/api/middleware.py), through the real
application on a real SQLite database; no agent, no Docker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from support.metrics import scraped

from berth.api.app import create_app
from berth.api.state import ApiSettings, ApiState
from berth.common import exceptions as exc
from berth.db.engine import Database
from berth.metrics.health import Readiness
from berth.rpc.client import ComputeAPI
from berth.rpc.inproc import InProcessTransport
from berth.scheduler.base import RequestSpec, Selection

ADMIN = {"X-Auth-Token": "admin", "OpenStack-API-Version": "container 1.40"}
UNKNOWN = "6f3e2bb4-1a47-4b1e-9d0c-000000000000"


class NoHosts:
    def select_destination(self, spec: RequestSpec) -> Selection:
        raise exc.NoValidHost("no hosts in this test")


@pytest.fixture
def state(db: Database) -> Iterator[ApiState]:
    transport = InProcessTransport(call_workers=1)
    yield ApiState(db=db, compute=ComputeAPI(transport, lambda host: False),
                   scheduler=NoHosts(), settings=ApiSettings())
    transport.cleanup()


@pytest.fixture
def client(state: ApiState) -> TestClient:
    return TestClient(create_app(state), base_url="http://berth.test")


def metric(client: TestClient, name: str, **labels: str) -> float:
    resp = client.get("/metrics")
    assert resp.status_code == 200
    return scraped(resp.text, name, **labels)


def test_requests_are_counted_by_route_template_not_by_raw_path(client: TestClient) -> None:
    labels = {"method": "GET", "route": "/v1/containers/{ident}", "status": "404"}
    before = metric(client, "berth_api_requests_total", **labels)
    for i in range(3):
        assert client.get(f"/v1/containers/{UNKNOWN[:-1]}{i}", headers=ADMIN).status_code \
            == 404
    text = client.get("/metrics").text
    assert scraped(text, "berth_api_requests_total", **labels) == before + 3
    assert UNKNOWN[:-1] not in text                   # no raw path became a label
    assert scraped(text, "berth_api_request_duration_seconds_count", method="GET",
                   route="/v1/containers/{ident}") >= 3


def test_an_unversioned_path_counts_under_its_v1_template(client: TestClient) -> None:
    labels = {"method": "GET", "route": "/v1/containers", "status": "200"}
    before = metric(client, "berth_api_requests_total", **labels)
    assert client.get("/containers", headers=ADMIN).status_code == 200
    assert metric(client, "berth_api_requests_total", **labels) == before + 1


def test_a_path_no_route_matches_counts_as_unmatched(client: TestClient) -> None:
    labels = {"method": "GET", "route": "unmatched", "status": "404"}
    before = metric(client, "berth_api_requests_total", **labels)
    client.get("/v1/no-such-thing/at/all", headers=ADMIN)
    client.get("/v1/another/made-up/path", headers=ADMIN)
    assert metric(client, "berth_api_requests_total", **labels) == before + 2


def test_a_refused_microversion_is_counted_too(client: TestClient) -> None:
    labels = {"method": "GET", "route": "unmatched", "status": "406"}
    before = metric(client, "berth_api_requests_total", **labels)
    resp = client.get("/v1/containers", headers={"X-Auth-Token": "admin",
                                                  "OpenStack-API-Version": "container 9.99"})
    assert resp.status_code == 406
    assert metric(client, "berth_api_requests_total", **labels) == before + 1


def test_the_probes_need_no_token_and_no_microversion(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "alive"}
    resp = client.get("/readyz")
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"status": "ready", "checks": {"database": "ok"}, "failed": []}
    resp = client.get("/metrics")
    assert resp.headers["content-type"].startswith("text/plain")
    assert "openstack-api-version" not in resp.headers


def test_readyz_is_503_naming_the_failed_check(client: TestClient, state: ApiState) -> None:
    def docker() -> None:
        raise ConnectionError("Docker engine unreachable")

    state.readiness = Readiness({"database": state.db.ping, "docker": docker})
    resp = client.get("/readyz")
    assert resp.status_code == 503
    assert resp.json()["failed"] == ["docker"]
    assert resp.json()["checks"]["database"] == "ok"


def test_the_root_stays_the_versions_document(client: TestClient) -> None:
    body = client.get("/").json()
    assert body["versions"][0]["id"] == "v1"
    assert "healthz" not in str(body) and "metrics" not in str(body)


def test_the_probes_are_not_in_the_openapi_document(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not {"/metrics", "/healthz", "/readyz"} & set(paths)
    assert "/v1/containers" in paths
