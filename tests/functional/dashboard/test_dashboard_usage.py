"""Live resource graphs and the events view, in one page load on a real ``berth serve``
and Docker: a container that pings its gateway and spins (capped at a fifth of a CPU)
shows CPU, memory and network use growing sample by sample from the stats call; the
host's claims are graphed from the hosts' inventory; the events view lists the
project's container actions newest first and shows a new one without a reload."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from support.berth_proc import TEST_IMAGE, wait_for
from support.browser import doc_shot, log_in

#: Traffic on eth0 (the gateway, five pings a second, once berth has plugged the
#: interface: after the start) and some CPU.
BUSY = ("until ip route | grep -q default; do sleep 0.2; done; "
        "gw=$(ip route | awk '/default/ {print $3}'); ping -q -i 0.2 \"$gw\" & "
        "while true; do :; done")


@pytest.fixture
def busy(berth: Any) -> Iterator[dict[str, str]]:
    name = f"console-u-{uuid.uuid4().hex[:6]}"
    with berth.http() as http:
        made = http.post("/v1/containers?run=true", json={
            "name": name, "image": TEST_IMAGE, "cpu": 0.2, "memory": 64,
            "command": ["sh", "-c", BUSY]})
        assert made.status_code == 202, made.text
        ident = made.json()["uuid"]
        try:
            wait_for(lambda: http.get(f"/v1/containers/{ident}").json()["status"] == "Running",
                     timeout=90)
            yield {"name": name, "uuid": ident}
        finally:
            if http.get(f"/v1/containers/{ident}").json().get("status") == "Paused":
                http.post(f"/v1/containers/{ident}/unpause")     # a paused one is not deleted
                wait_for(lambda: http.get(f"/v1/containers/{ident}").json()["status"]
                         != "Paused", timeout=60)
            http.delete(f"/v1/containers/{ident}", params={"force": "true"})
            wait_for(lambda: http.get(f"/v1/containers/{ident}").status_code == 404, timeout=90)


def samples_at_least(n: int) -> re.Pattern[str]:
    """A ``data-samples`` count of at least ``n`` (a single digit)."""
    return re.compile(rf"^([{n}-9]|\d\d+)$")


def test_usage_graphs_and_events_view(page: Any, berth: Any, busy: dict[str, str]) -> None:
    log_in(page)
    page.goto(f"{berth.url}/dashboard/#/containers/{busy['uuid']}")
    page.get_by_role("tab", name="Usage").click()
    cpu = page.get_by_test_id("chart-cpu").get_by_role("img")
    expect(cpu).to_have_attribute("data-samples", samples_at_least(4), timeout=60_000)
    # The spinning loop shows; capped at 0.2 CPU it stays near 20 % of one core.
    expect(cpu).to_have_attribute("aria-label", re.compile(
        r"CPU \(% of one core\): CPU \d+\.\d % now, at most ([1-9]\d*\.\d)"))
    memory = page.get_by_test_id("chart-memory").get_by_role("img")
    expect(memory).to_have_attribute("aria-label", re.compile(r"Used \d+\.\d MiB now"))
    expect(page.get_by_test_id("chart-memory")).to_contain_text("limit 64")
    network = page.get_by_test_id("chart-network").get_by_role("img")
    expect(network).to_have_attribute("aria-label", re.compile(
        r"Out \d+\.\d\d KiB/s now, at most (0\.0[1-9]|0\.[1-9]\d|[1-9])"))
    doc_shot(page, "usage")

    nav = page.get_by_role("navigation", name="Main")
    nav.get_by_role("link", name="Events").click()
    table = page.get_by_role("table", name="Container actions across the project, newest first")
    expect(table.get_by_role("row").filter(has_text=busy["name"]).first).to_contain_text("create")
    with berth.http() as http:       # another client acts: the view shows it, newest first
        assert http.post(f"/v1/containers/{busy['uuid']}/pause").status_code == 202
    first = table.get_by_role("row").nth(1)
    expect(first).to_contain_text(busy["name"])
    expect(first).to_contain_text("pause")
    doc_shot(page, "events")
    first.get_by_role("link", name=busy["name"]).click()
    expect(page.get_by_test_id("status")).to_contain_text("Paused")

    nav.get_by_role("link", name="Hosts").click()
    host = page.get_by_role("listitem").filter(
        has=page.get_by_role("heading", name=berth.host))
    claimed = host.get_by_test_id("host-chart-cpu").get_by_role("img")
    expect(claimed).to_have_attribute("data-samples", samples_at_least(2), timeout=30_000)
    expect(claimed).to_have_attribute("aria-label", re.compile(r"Claimed \d+\.\d cores now"))
    doc_shot(page, "hosts")
