"""Metrics and probes of the multi-process deployment: ``berth-compute`` with its own
listener (``[compute]metrics_port``) and ``berth-api``, over RabbitMQ and PostgreSQL.
Each process shows its own metrics: the casts on the API, the actions on the agent."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.berth_proc import TEST_IMAGE, free_port, wait_for
from support.metrics import scraped, scraped_sum

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def deployment(deployment_factory: Any, database_maker: Any) -> Iterator[Any]:
    with database_maker("postgresql") as url:
        d = deployment_factory(url)
        try:
            done = d.berth("db", "upgrade")
            assert done.returncode == 0, done.stderr
            d.metrics_url = f"http://127.0.0.1:{free_port()}"
            port = d.metrics_url.rsplit(":", 1)[1]
            d.host = d.start_agent("m", extra_conf=f"[compute]\nmetrics_port = {port}\n")
            d.start_api()
            yield d
        finally:
            d.close()


def get(url: str) -> httpx.Response:
    return httpx.get(url, timeout=10)


def test_the_agents_listener_answers_the_three_paths(deployment: Any) -> None:
    assert get(f"{deployment.metrics_url}/healthz").json() == {"status": "alive"}
    resp = get(f"{deployment.metrics_url}/readyz")
    assert resp.status_code == 200, resp.text
    assert resp.json()["checks"] == {"database": "ok", "rpc": "ok", "docker": "ok"}
    # The state sync's first periodic run comes at the agent's start (the heartbeat's
    # comes a minute later: its first beat is made by the start itself).
    wait_for(lambda: scraped(get(f"{deployment.metrics_url}/metrics").text,
                             "berth_periodic_task_runs_total",
                             task="sync_container_state") > 0,
             30, 0.5, what="the state sync's first periodic run")
    text = get(f"{deployment.metrics_url}/metrics").text
    assert scraped(text, "berth_pleg_stream_connected") == 1
    assert "berth_api_requests_total{" not in text        # no API in this process


def test_the_apis_readyz_checks_the_database_and_rabbitmq(deployment: Any) -> None:
    resp = get(f"{deployment.url}/readyz")
    assert resp.status_code == 200, resp.text
    assert resp.json()["checks"] == {"database": "ok", "rpc": "ok"}


def test_a_create_and_delete_count_the_cast_on_the_api_and_the_action_on_the_agent(
        deployment: Any) -> None:
    api_before = get(f"{deployment.url}/metrics").text
    agent_before = get(f"{deployment.metrics_url}/metrics").text
    with deployment.http() as http:
        resp = http.post("/v1/containers", params={"run": "true"}, json={
            "image": TEST_IMAGE, "command": ["sleep", "300"],
            "name": f"m-{uuidlib.uuid4().hex[:8]}", "image_pull_policy": "ifnotpresent"})
        assert resp.status_code == 202, resp.text
        uuid = resp.json()["uuid"]

        def settled(status: str) -> bool:
            body = http.get(f"/v1/containers/{uuid}").json()
            return bool(body["status"] == status and body["task_state"] is None)

        wait_for(lambda: settled("Running"), 90, 0.2, what="Running")
        assert http.delete(f"/v1/containers/{uuid}", params={"stop": "true"}).status_code \
            == 204
        wait_for(lambda: http.get(f"/v1/containers/{uuid}").status_code == 404, 90, 0.2,
                 what="deleted")
    api = get(f"{deployment.url}/metrics").text
    agent = get(f"{deployment.metrics_url}/metrics").text
    assert scraped(api, "berth_rpc_client_duration_seconds_count", method="container_create",
                   kind="cast", result="ok") == scraped(
        api_before, "berth_rpc_client_duration_seconds_count", method="container_create",
        kind="cast", result="ok") + 1
    assert scraped_sum(api, "berth_compute_actions_total") == 0     # not the API's work
    for action in ("create", "start", "delete"):
        assert scraped(agent, "berth_compute_actions_total", action=action,
                       result="success") == scraped(
            agent_before, "berth_compute_actions_total", action=action,
            result="success") + 1, action
