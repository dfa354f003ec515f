"""/metrics, /healthz and /readyz of a real ``berth serve`` on the real Docker engine:
one process, so its /metrics shows the API's and the agent's metrics together."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable

import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for
from support.engine_proxy import EngineProxy
from support.metrics import scraped, scraped_sum

pytestmark = pytest.mark.functional


def scrape(proc: BerthProcess) -> str:
    resp = httpx.get(f"{proc.url}/metrics", timeout=10)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain")
    return resp.text


def status_of(http: httpx.Client, uuid: str) -> str | None:
    """The container's status once no task holds it; None when it is gone."""
    resp = http.get(f"/v1/containers/{uuid}")
    if resp.status_code == 404:
        return None
    body = resp.json()
    return str(body["status"]) if body["task_state"] is None else f"task {body['task_state']}"


def test_a_create_stop_delete_moves_the_api_rpc_action_and_phase_metrics(
        berth: BerthProcess) -> None:
    before = scrape(berth)
    with berth.http() as http:
        resp = http.post("/v1/containers", params={"run": "true"}, json={
            "image": TEST_IMAGE, "command": ["sleep", "300"],
            "image_pull_policy": "ifnotpresent", "name": f"m-{uuidlib.uuid4().hex[:8]}"})
        assert resp.status_code == 202, resp.text
        uuid = resp.json()["uuid"]
        wait_for(lambda: status_of(http, uuid) == "Running", 60, what="Running")
        assert http.post(f"/v1/containers/{uuid}/stop").status_code == 202
        wait_for(lambda: status_of(http, uuid) == "Stopped", 60, what="Stopped")
        assert http.delete(f"/v1/containers/{uuid}").status_code == 204
        wait_for(lambda: status_of(http, uuid) is None, 60, what="deleted")
    after = scrape(berth)

    def moved(name: str, **labels: str) -> float:
        return scraped(after, name, **labels) - scraped(before, name, **labels)

    # the API: by route template, never the container's uuid
    assert moved("berth_api_requests_total", method="POST", route="/v1/containers",
                 status="202") >= 1
    assert moved("berth_api_requests_total", method="POST",
                 route="/v1/containers/{ident}/stop", status="202") >= 1
    assert moved("berth_api_requests_total", method="DELETE",
                 route="/v1/containers/{ident}", status="204") >= 1
    assert uuid not in after
    # the casts that carried them
    for method in ("container_create", "container_stop", "container_delete"):
        assert moved("berth_rpc_client_duration_seconds_count", method=method, kind="cast",
                     result="ok") >= 1, method
    # the agent's actions and the create's three phases
    for action in ("create", "start", "stop", "delete"):
        assert moved("berth_compute_actions_total", action=action, result="success") >= 1, \
            action
        assert moved("berth_compute_action_duration_seconds_count", action=action) >= 1
    for phase in ("pull", "create", "start"):
        assert moved("berth_compute_create_phase_duration_seconds_count", phase=phase,
                     result="ok") >= 1, phase
    # the agent's loops run in this process too
    assert scraped_sum(after, "berth_periodic_task_runs_total") > 0
    assert scraped(after, "berth_pleg_relist_duration_seconds_count") > 0
    assert scraped(after, "berth_pleg_stream_connected") == 1
    assert 'berth_compute_queue_depth{queue="actions"}' in after


def test_healthz_and_readyz_answer_without_a_token(berth: BerthProcess) -> None:
    resp = httpx.get(f"{berth.url}/healthz", timeout=10)
    assert resp.status_code == 200 and resp.json() == {"status": "alive"}
    resp = httpx.get(f"{berth.url}/readyz", timeout=10)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"status": "ready", "failed": [],
                           "checks": {"database": "ok", "rpc": "ok", "docker": "ok"}}
    root = httpx.get(f"{berth.url}/", timeout=10).json()
    assert root["versions"][0]["id"] == "v1"


def test_readyz_is_503_naming_docker_when_the_engine_is_unreachable(
        proxy: EngineProxy, berth_factory: Callable[..., BerthProcess]) -> None:
    """berth serve refuses to start without an engine, so this one reaches the engine
    through a proxy (tests/support/engine_proxy.py) that is then closed: the socket
    answers no more, as when dockerd is stopped."""
    proc = berth_factory(f"[docker]\napi_url = {proxy.url}\n").start()
    assert httpx.get(f"{proc.url}/readyz", timeout=10).status_code == 200
    proxy.stop()

    def not_ready() -> httpx.Response | None:
        resp = httpx.get(f"{proc.url}/readyz", timeout=10)
        return resp if resp.status_code == 503 else None

    resp = wait_for(not_ready, 15, 0.2, what="/readyz to answer 503")
    assert isinstance(resp, httpx.Response)
    body = resp.json()
    assert body["status"] == "not ready"
    assert body["failed"] == ["docker"]
    assert body["checks"]["database"] == "ok" and body["checks"]["rpc"] == "ok"
    assert httpx.get(f"{proc.url}/healthz", timeout=10).status_code == 200
    # /metrics still answers, and shows the event stream lost
    wait_for(lambda: scraped(scrape(proc), "berth_pleg_stream_connected") == 0, 10,
             0.2, what="the event stream to be seen as disconnected")
