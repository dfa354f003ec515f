"""zun-ui's other pages on berth, in a real browser: a capsule created from a template
(pasted into the Capsules panel's workflow) runs and is deleted; the admin's Images
panel lists the image berth has; the admin's Hosts panel lists berth's host. Each
page's screenshot goes to docs/images."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from support import keystone as ks
from support.berth_proc import BerthProcess, wait_for

from .conftest import ADMIN, HORIZON_URL, NEUTRON_HOST, shot

TEMPLATE = """\
kind: capsule
metadata:
  name: hz-pod
  labels:
    app: horizon-test
spec:
  containers:
  - image: 127.0.0.1:5000/berth-test/busybox
    command: ["sleep", "3600"]
"""


def _capsule(http: Any, name: str) -> dict[str, Any] | None:
    for c in http.get("/v1/capsules").json()["capsules"]:
        if name in (c.get("meta_name"), c.get("name")):
            return c  # type: ignore[no-any-return]
    return None


def test_a_capsule_from_a_template(page: Any, berth_hz: BerthProcess,
                                   neutron_net: dict[str, str]) -> None:
    page.goto(f"{HORIZON_URL}/project/container/capsules")
    page.get_by_role("button", name="Create").first.click()
    page.locator(".modal textarea").fill(TEMPLATE)
    shot(page, "capsule-create")
    page.locator(".modal-footer .btn-primary").click()
    token = ks.issue_token(ADMIN.name, project=ADMIN.project)
    with berth_hz.http(token=token) as http:
        def running() -> bool:
            found = _capsule(http, "hz-pod")
            assert found is None or found["status"] != "Error", found
            return bool(found and found["status"] == "Running")

        wait_for(running, 180, interval=0.5, what="capsule hz-pod to run")

        def listed() -> bool:
            page.goto(f"{HORIZON_URL}/project/container/capsules")
            page.wait_for_load_state("networkidle")
            return page.locator("tbody tr", has_text="Running").count() == 1

        wait_for(listed, 60, interval=1, what="the panel to list the capsule Running")
        shot(page, "capsules")
        uuid = _capsule(http, "hz-pod")["uuid"]  # type: ignore[index]
        row = page.locator("tbody tr", has_text="Running")
        row.locator(".dropdown-toggle, button").last.click()
        page.get_by_text("Delete", exact=True).last.click()
        page.locator(".modal-footer .btn-danger").click()
        wait_for(lambda: http.get(f"/v1/capsules/{uuid}").status_code == 404, 120,
                 interval=0.5, what="the capsule to be deleted")


def test_the_admin_images_and_hosts_panels(page: Any, berth_hz: BerthProcess) -> None:
    token = ks.issue_token(ADMIN.name, project=ADMIN.project)
    with berth_hz.http(token=token) as http:
        pulled = http.post("/v1/images", json={
            "repo": "127.0.0.1:5000/berth-test/busybox:latest", "host": NEUTRON_HOST})
        assert pulled.status_code == 202, pulled.text
        wait_for(lambda: any(i["repo"] == "127.0.0.1:5000/berth-test/busybox"
                             for i in http.get("/v1/images").json()["images"]),
                 60, interval=0.5, what="the image to be listed")
    page.goto(f"{HORIZON_URL}/admin/container/images")
    expect(page.locator("tbody tr", has_text="berth-test/busybox").first).to_be_visible()
    shot(page, "images")
    page.goto(f"{HORIZON_URL}/admin/container/hosts")
    expect(page.locator("tbody tr", has_text=NEUTRON_HOST)).to_be_visible()
    shot(page, "hosts")
    page.locator("tbody a", has_text=NEUTRON_HOST).click()
    expect(page.get_by_text("Total Containers").or_(page.get_by_text("Total containers"))
           .first).to_be_visible()
    shot(page, "host-detail")
