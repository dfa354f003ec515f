"""The console's views of a project's other resources, in one page load on a real
``berth serve`` and Docker: networks, volumes (with the container that mounts one),
images, registries, a quota with its usage, and the services; each table captioned
and its pages reached from the main navigation, which a non-admin sees without the
admin-only views (nor the create form's admin-only fields)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from support.berth_proc import REGISTRY, TEST_IMAGE, wait_for
from support.browser import doc_shot, log_in


@pytest.fixture
def resources(berth: Any) -> Iterator[dict[str, str]]:
    """A network, a stopped container mounting a new named volume, a registry and a
    project with a quota of its own; removed afterwards."""
    tag = uuid.uuid4().hex[:6]
    made = {"network": f"console-rnet-{tag}", "volume": f"console-rvol-{tag}",
            "container": f"console-rc-{tag}", "registry": f"console-reg-{tag}",
            "project": f"console-p-{tag}"}
    with berth.http() as http:
        net = http.post("/v1/networks", json={"name": made["network"]})
        assert net.status_code == 200, net.text
        made["network_uuid"] = net.json()["uuid"]
        c = http.post("/v1/containers?run=false", json={
            "name": made["container"], "image": TEST_IMAGE, "command": ["sleep", "60"],
            "mounts": [{"source": made["volume"], "size": 1, "destination": "/data"}]})
        assert c.status_code == 202, c.text
        made["container_uuid"] = c.json()["uuid"]
        reg = http.post("/v1/registries", json={"registry": {
            "name": made["registry"], "domain": f"{tag}.registry.example"}})
        assert reg.status_code == 201, reg.text
        made["registry_uuid"] = reg.json()["registry"]["uuid"]
        # An image record (the images API's pull, from the local registry; the record
        # stays with this berth's database: deleting it would remove the image from
        # Docker, which other tests use).
        pulled = http.post("/v1/images", json={"repo": f"{REGISTRY}/berth-test/busybox",
                                               "host": berth.host})
        assert pulled.status_code == 202, pulled.text
        http.put(f"/v1/quotas/{made['project']}", json={"containers": 5}).raise_for_status()
        try:
            yield made
        finally:
            http.delete(f"/v1/containers/{made['container_uuid']}", params={"force": "true"})
            wait_for(lambda: http.get(f"/v1/containers/{made['container_uuid']}")
                     .status_code == 404, timeout=90)
            http.delete(f"/v1/networks/{made['network_uuid']}")
            http.delete(f"/v1/registries/{made['registry_uuid']}")
            http.delete(f"/v1/quotas/{made['project']}")


def test_resource_views_show_the_project_networks_volumes_images_quota_services(
        page: Any, berth: Any, resources: dict[str, str]) -> None:
    log_in(page)
    nav = page.get_by_role("navigation", name="Main")

    nav.get_by_role("link", name="Networks").click()
    table = page.get_by_role("table", name="Networks")
    row = table.get_by_role("row").filter(has_text=resources["network"])
    expect(row).to_contain_text(resources["network_uuid"])
    doc_shot(page, "networks")

    nav.get_by_role("link", name="Volumes").click()
    row = page.get_by_role("table", name="Volumes, newest first").get_by_role("row").filter(
        has_text=resources["volume"])
    expect(row).to_contain_text(f"{resources['container']} at /data")
    expect(row).to_contain_text("local")
    doc_shot(page, "volumes")
    row.get_by_role("link", name=f"{resources['container']} at /data").click()
    expect(page.get_by_role("heading", name=resources["container"])).to_be_visible()

    nav.get_by_role("link", name="Images").click()
    images = page.get_by_role("table", name="Images")
    expect(images.get_by_role("row").filter(has_text=f"{REGISTRY}/berth-test/busybox").first) \
        .to_contain_text(berth.host)
    doc_shot(page, "images")

    nav.get_by_role("link", name="Registries").click()
    expect(page.get_by_role("table", name="Image registries").get_by_role("row")
           .filter(has_text=resources["registry"])).to_contain_text("registry.example")
    doc_shot(page, "registries")

    nav.get_by_role("link", name="Quotas").click()
    expect(page.get_by_role("heading", name="Project admin")).to_be_visible()
    page.get_by_role("textbox", name="Project").fill(resources["project"])
    page.get_by_role("textbox", name="Project").press("Enter")             # the keyboard alone
    quota = page.get_by_role("group", name=f"Project {resources['project']}")
    expect(quota.get_by_role("meter", name="Containers: 0 of 5 containers used")).to_be_visible()
    expect(quota.get_by_role("meter")).to_have_count(4)       # containers, cpu, memory, disk
    doc_shot(page, "quotas")

    nav.get_by_role("link", name="Services").click()
    row = page.get_by_role("table", name="Services").get_by_role("row").filter(
        has_text=berth.host).filter(has_text="zun-compute")
    expect(row).to_contain_text("up")
    doc_shot(page, "services")

    # A member of another project: no admin-only views in the navigation.
    page.get_by_role("button", name="Log out").click()
    log_in(page, f"viewer:{resources['project']}")
    expect(nav.get_by_role("link", name="Networks")).to_be_visible()
    for admin_only in ("Images", "Services", "Hosts"):
        expect(nav.get_by_role("link", name=admin_only)).to_have_count(0)
    nav.get_by_role("link", name="Create", exact=True).click()     # nor the admins' fields
    expect(page.get_by_label("Labels")).to_be_visible()
    expect(page.get_by_label("Host (admins)")).to_have_count(0)
    expect(page.get_by_label("Image pull policy")).to_have_count(0)
    # ... and the console's own reads show them their project's rows only.
    with berth.http(token=f"viewer:{resources['project']}") as http:
        for what in ("networks", "volumes", "actions"):
            mine = http.get(f"/dashboard/api/{what}")
            assert mine.status_code == 200, mine.text
            # (a shared network of another test may be listed: every project uses it)
            assert [r for r in mine.json()[what] if not r.get("shared")] == [], mine.text
            every = http.get(f"/dashboard/api/{what}", params={"all_projects": "true"})
            assert every.status_code == 403, every.text
        assert http.get("/dashboard/api/actions", params={"limit": "501"}).status_code == 400
