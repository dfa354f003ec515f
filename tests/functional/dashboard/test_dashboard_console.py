"""The web console end to end, in a real browser on a real ``berth serve`` and Docker:
log in, create a container through the form (an API refusal shown first), watch it turn
Running as the server pushes it, read its logs as they come, type into its terminal,
read its history, see the hosts' bars, delete it. Each page's screenshot is kept."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from support.berth_proc import TEST_IMAGE


def log_in(page: Any, token: str = "admin") -> None:
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("status").filter(has_text="Live")).to_be_visible()


def shot(page: Any, artifacts: Path, name: str) -> None:
    page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)


def test_console_creates_follows_and_deletes_a_container(page, berth, artifacts) -> None:
    name = f"console-{uuid.uuid4().hex[:8]}"
    shot(page, artifacts, "01-login")
    page.get_by_label("Token").fill("admin")
    page.get_by_label("Token").press("Enter")           # the keyboard alone logs in
    expect(page.get_by_role("status").filter(has_text="Live")).to_be_visible()
    expect(page.get_by_role("table", name="Containers")).to_be_visible()
    shot(page, artifacts, "02-containers")

    page.get_by_role("link", name="Create", exact=True).click()
    page.get_by_label("Image", exact=True).fill(TEST_IMAGE)
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Command", exact=True).fill(
        "sh -c 'i=0; while true; do echo tick-$i; i=$((i+1)); sleep 1; done'")
    page.get_by_label("Memory (MiB)").fill("1")          # below the API's minimum
    page.get_by_role("button", name="Create").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("memory")
    expect(page.get_by_label("Memory (MiB)")).to_have_attribute("aria-invalid", "true")
    shot(page, artifacts, "03-create-refused")

    page.get_by_label("Memory (MiB)").fill("64")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name=name)).to_be_visible()
    # Running arrives on the event stream: nothing on the page polls the container.
    expect(page.get_by_test_id("status")).to_contain_text("Running", timeout=90_000)
    shot(page, artifacts, "04-container-running")

    page.get_by_role("tab", name="Logs").click()
    logs = page.get_by_test_id("logs")
    expect(logs).to_contain_text("tick-0")
    expect(logs).to_contain_text("tick-3")               # lines keep coming, followed
    assert logs.inner_text().count("tick-1\n") == 1     # and none is shown twice
    shot(page, artifacts, "05-logs")

    status = page.get_by_test_id("status")
    page.get_by_role("button", name="Pause", exact=True).click()    # actions, their statuses pushed
    expect(status).to_contain_text("Paused")
    expect(page.get_by_role("button", name="Pause", exact=True)).to_be_disabled()
    page.get_by_role("button", name="Unpause").click()
    expect(status).to_contain_text("Running")

    page.get_by_role("tab", name="Terminal").click()
    expect(page.get_by_text("Shell open")).to_be_visible()
    page.get_by_test_id("terminal").click()
    page.keyboard.type("echo hi-$((40+2))\n")
    expect(page.locator(".xterm-rows")).to_contain_text("hi-42")
    shot(page, artifacts, "06-terminal")
    page.keyboard.type("exit\n")                       # the shell ends; a new one opens
    page.get_by_role("button", name="Open a new shell").click()   # with a new token
    expect(page.get_by_text("Shell open")).to_be_visible()
    page.get_by_test_id("terminal").click()
    page.keyboard.type("echo again-$((1+1))\n")
    expect(page.locator(".xterm-rows")).to_contain_text("again-2")

    page.get_by_role("tab", name="History").click()
    history = page.get_by_role("table")
    expect(history).to_contain_text("create")
    shot(page, artifacts, "07-history")
    page.get_by_role("tab", name="History").press("ArrowRight")   # the tablist's keys
    overview = page.get_by_role("tab", name="Overview")
    expect(overview).to_be_focused()
    expect(overview).to_have_attribute("aria-selected", "true")

    page.get_by_role("link", name="Containers", exact=True).click()
    page.get_by_role("searchbox").fill(name)
    row = page.get_by_role("row").filter(has_text=name)
    expect(row).to_contain_text("Running")
    shot(page, artifacts, "08-containers-filtered")

    page.get_by_role("link", name="Hosts").click()
    expect(page.get_by_role("heading", name=berth.host)).to_be_visible()
    expect(page.get_by_role("meter").first).to_be_visible()
    shot(page, artifacts, "09-hosts")

    page.get_by_role("link", name="Capsules").click()
    expect(page.get_by_role("table", name="Capsules")).to_be_visible()
    shot(page, artifacts, "10-capsules")

    page.get_by_role("link", name="Containers", exact=True).click()
    page.get_by_role("link", name=name).click()
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("button", name="Confirm delete").click()
    expect(page.get_by_test_id("gone")).to_be_visible(timeout=90_000)
    shot(page, artifacts, "11-deleted")
    with berth.http() as http:
        assert http.get(f"/v1/containers/{name}").status_code == 404


def test_list_shows_changes_made_elsewhere_without_reloading(page, berth, artifacts) -> None:
    """A container made and stopped through the API (as another client would) shows,
    then turns Stopped, on a page that is never reloaded."""
    log_in(page)
    name = f"pushed-{uuid.uuid4().hex[:8]}"
    page.get_by_role("searchbox").fill(name)
    with berth.http() as http:
        made = http.post("/v1/containers?run=true", json={
            "name": name, "image": TEST_IMAGE, "command": ["sleep", "600"]})
        assert made.status_code == 202, made.text
        uuid_ = made.json()["uuid"]
        try:
            row = page.get_by_role("row").filter(has_text=name)
            expect(row).to_contain_text("Running", timeout=90_000)
            http.post(f"/v1/containers/{uuid_}/stop", params={"timeout": "0"})
            expect(row).to_contain_text(re.compile(r"Stopped"), timeout=90_000)
            shot(page, artifacts, "12-pushed-stop")
        finally:
            http.delete(f"/v1/containers/{uuid_}", params={"force": "true"})
        expect(row).to_have_count(0, timeout=90_000)
