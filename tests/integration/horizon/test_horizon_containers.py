"""zun-ui's Containers panel on berth, in a real browser: a container made through the
panel's workflow (image from the local registry, pull policy "If not present", a
command, a new volume, a Neutron network and a security group) runs; each action of
the panel is driven and its effect read back from berth's API; the detail page shows
the container's logs; delete. Each page's screenshot goes to docs/images."""

from __future__ import annotations

import re
from typing import Any

import docker
from playwright.sync_api import expect
from support import keystone as ks
from support.berth_proc import BerthProcess, wait_for

from .conftest import ADMIN, HORIZON_URL, shot

IMAGE = "127.0.0.1:5000/berth-test/busybox"
NAME = "hz-web"
PANEL = f"{HORIZON_URL}/project/container/containers"


def _api(berth: BerthProcess) -> Any:
    return berth.http(token=ks.issue_token(ADMIN.name, project=ADMIN.project))


def _container(http: Any, name: str) -> dict[str, Any] | None:
    for c in http.get("/v1/containers").json()["containers"]:
        if c["name"] == name:
            return c  # type: ignore[no-any-return]
    return None


def _status_is(http: Any, name: str, status: str) -> None:
    """berth says ``name`` is ``status``, with no task under way."""
    def reached() -> bool:
        found = _container(http, name)
        assert found is None or found["status"] != "Error", (
            f"{name} is in Error: {found['status_reason']}")
        return bool(found and found["status"] == status and not found["task_state"])

    wait_for(reached, 120, interval=0.5, what=f"{name} to be {status}")


def _row(page: Any, name: str) -> Any:
    return page.locator("tbody tr", has=page.get_by_role("link", name=name, exact=True))


def _shows_status(page: Any, name: str, status: str) -> None:
    """The panel's row of ``name`` says ``status`` (the page is loaded again until it
    does)."""
    def shown() -> bool:
        page.goto(PANEL)
        page.wait_for_load_state("networkidle")
        row = _row(page, name)
        # and no task state (container_stopping, image_pulling...) beside it
        return row.filter(has_text=status).count() == 1 and \
            not re.search(r"\b[a-z]+_[a-z]+ing\b", row.inner_text())

    wait_for(shown, 120, interval=1, what=f"the panel to show {name} {status}")


def _row_action(page: Any, name: str, action: str) -> None:
    row = _row(page, name)
    button = row.get_by_role("button", name=action, exact=True)
    if not button.is_visible():
        row.locator(".dropdown-toggle").click()
        button = row.get_by_role("menuitem", name=action, exact=True)
        if not button.count():
            button = row.get_by_text(action, exact=True)
    button.click()


def _submit(page: Any) -> None:
    """The open modal's primary button (Stop, Restart, Execute, Delete...)."""
    page.locator(".modal-footer .btn-primary").click()


def _transfer(page: Any, tab: str, item: str) -> None:
    """Move ``item`` from the available to the allocated table of a workflow tab."""
    page.locator(".modal .nav a", has_text=tab).click()
    available = page.locator(".modal tr:visible", has_text=item)
    available.locator("button").last.click()


def test_create_drive_and_delete_a_container_through_the_panel(
        page: Any, berth_hz: BerthProcess, neutron_net: dict[str, str]) -> None:
    page.goto(PANEL)
    expect(page.get_by_role("heading", name="Containers")).to_be_visible()
    page.get_by_role("button", name="Create Container").click()
    modal = page.locator(".modal")
    modal.locator("#name").fill(NAME)
    modal.locator("#image").fill(IMAGE)
    modal.locator("select[name=image_pull_policy]").select_option(label="If not present")
    modal.locator("#command").fill("sleep 3600")
    run = modal.locator("#run")
    if not run.is_checked():
        run.check()
    shot(page, "create-info")
    modal.locator(".nav a", has_text="Volumes").click()
    modal.locator("select#type").select_option(label="New Cinder Volume")
    modal.locator("#size").fill("1")
    modal.locator("#destination").fill("/data")
    modal.get_by_role("button", name="Add Volume").click()
    _transfer(page, "Networks", neutron_net["network"])
    shot(page, "create-networks")
    _transfer(page, "Security Groups", neutron_net["security_group"])
    modal.get_by_role("button", name="Create").click()

    with _api(berth_hz) as http:
        _status_is(http, NAME, "Running")
        made = _container(http, NAME)
        assert made is not None
        assert made["image"] == IMAGE and made["command"] == ["sleep", "3600"], made
        assert made["image_pull_policy"] == "ifnotpresent", made
        assert neutron_net["network_id"] in made["addresses"], made["addresses"]
        # the workflow allocates the project's "default" group to begin with
        assert neutron_net["security_group_id"] in made["security_groups"], made
        engine = docker.from_env()
        try:   # the engine's container is zun-<uuid>, as Zun names it
            mounts = engine.containers.get(f"zun-{made['uuid']}").attrs["Mounts"]
        finally:
            engine.close()
        assert "/data" in [m["Destination"] for m in mounts], mounts
        _shows_status(page, NAME, "Running")
        shot(page, "containers")

        for action, modal, done, status in (
                ("Stop Container", True, "stopped", "Stopped"),
                ("Start Container", False, "started", "Running"),
                ("Restart Container", True, "restarted", "Running"),
                ("Pause Container", False, "paused", "Paused"),
                ("Unpause Container", False, "unpaused", "Running")):
            _row_action(page, NAME, action)
            if modal:
                _submit(page)
            # the toast comes once berth has taken the action (202)
            expect(page.get_by_text(f"Container {NAME} was successfully {done}.")
                   ).to_be_visible()
            _status_is(http, NAME, status)
            _shows_status(page, NAME, status)
            if status == "Paused":
                shot(page, "paused")

        _row_action(page, NAME, "Execute Command")
        page.locator(".modal input[type=text]").first.fill(
            "sh -c 'echo hello-from-horizon > /data/note; cat /data/note'")
        _submit(page)
        expect(page.locator(".modal textarea")).to_have_value(
            re.compile("hello-from-horizon"))
        shot(page, "execute")
        page.locator(".modal").get_by_role("button", name="Cancel").click()

        # The detail page: its Logs tab shows what the container wrote.
        _row_action(page, NAME, "Execute Command")
        page.locator(".modal input[type=text]").first.fill(
            "sh -c 'echo to-the-log > /proc/1/fd/1'")
        _submit(page)
        page.locator(".modal").get_by_role("button", name="Cancel").click()
        page.get_by_role("link", name=NAME, exact=True).click()
        expect(page.get_by_text("Status Detail")).to_be_visible()
        expect(page.locator(".page-header, .detail-page-header, h1, h2, h3", has_text=NAME).first).to_be_visible()
        shot(page, "detail")
        page.locator(".nav-tabs a", has_text="Logs").click()
        expect(page.get_by_text("to-the-log")).to_be_visible()
        shot(page, "logs")

        page.goto(PANEL)
        _row_action(page, NAME, "Stop and Delete Container")
        page.locator(".modal-footer .btn-danger, .modal-footer .btn-primary").first.click()
        wait_for(lambda: _container(http, NAME) is None, 120, interval=0.5,
                 what=f"{NAME} to be deleted")
