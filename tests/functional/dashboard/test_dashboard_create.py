"""The console's create form with every field zun-ui's has, in a real browser on a real
``berth serve`` and Docker: a network with a fixed IP, a new named volume, exposed
ports, labels, hints, the host (admins), auto-remove and a healthcheck. The API's
refusals are shown at the field (or the network row) they name, focus goes there, and
the container made carries what was asked."""

from __future__ import annotations

import ipaddress
import uuid
from typing import Any

from playwright.sync_api import expect
from support.berth_proc import TEST_IMAGE
from support.browser import doc_shot, log_in


def test_create_form_sends_networks_mounts_ports_and_shows_refusals_at_their_field(
        page: Any, berth: Any) -> None:
    tag = uuid.uuid4().hex[:6]
    name, net_name, vol_name = f"console-c-{tag}", f"console-net-{tag}", f"console-vol-{tag}"
    with berth.http() as http:
        made = http.post("/v1/networks", json={"name": net_name})
        assert made.status_code == 200, made.text
        net_uuid = made.json()["uuid"]
        address = str(ipaddress.ip_network(made.json()["subnet"]).network_address + 50)
        container = None
        try:
            sent: list[dict[str, Any]] = []
            page.on("request", lambda r: sent.append(r.post_data_json) if r.method == "POST"
                    and r.url.split("?")[0].endswith("/v1/containers") else None)
            log_in(page)
            page.get_by_role("link", name="Create", exact=True).click()
            page.get_by_label("Image", exact=True).fill(TEST_IMAGE)
            page.get_by_label("Name", exact=True).fill(name)
            page.get_by_label("Command", exact=True).fill("sleep 600")
            page.get_by_role("button", name="Add a network").click()
            page.get_by_label("Network 1 Network").fill(net_name)
            page.get_by_label("Network 1 IPv4 fixed IP").fill("10.0.0")      # not an address
            page.get_by_role("button", name="Add a mount").click()
            page.get_by_label("Mount 1 Volume").fill(vol_name)
            page.get_by_label("Mount 1 Size (GiB)").fill("1")
            page.get_by_label("Mount 1 Mounted at").fill("/data")
            page.get_by_label("Exposed ports").fill("8080/tcp 53/udp")
            page.get_by_label("Security groups").fill("default")
            page.get_by_label("Labels").fill("tier=web\nowner=console")
            page.get_by_label("Scheduler hints").fill("team=blue")
            page.get_by_label("Healthcheck command").fill("true")
            page.get_by_label("Interval (s)").fill("5")
            page.get_by_label("Remove it when it exits").check()
            host = page.get_by_label("Host (admins)")            # the admin sees it
            host.fill(berth.host)
            create = page.get_by_role("button", name="Create", exact=True)

            # Security groups beside exposed ports: refused, both fields marked.
            create.click()
            alert = page.get_by_role("alert")
            expect(alert).to_contain_text("security_groups")
            expect(page.get_by_label("Security groups")).to_have_attribute("aria-invalid", "true")
            expect(page.get_by_label("Exposed ports")).to_have_attribute("aria-invalid", "true")
            page.get_by_label("Security groups").fill("")

            # A fixed IP that is no address: the network row is marked and focused.
            create.click()
            expect(alert).to_contain_text("nets[0]")
            fixed = page.get_by_label("Network 1 IPv4 fixed IP")
            expect(fixed).to_have_attribute("aria-invalid", "true")
            expect(fixed).to_have_attribute("aria-describedby", "create-error")
            expect(fixed).to_be_focused()              # focus goes to what to fix
            expect(page.get_by_label("Security groups")).not_to_have_attribute("aria-invalid", "true")
            doc_shot(page, "create-refused")

            fixed.fill(address)
            create.click()
            expect(page.get_by_role("heading", name=name)).to_be_visible()
            expect(page.get_by_test_id("status")).to_contain_text("Running", timeout=90_000)
            detail = page.get_by_role("tabpanel")
            expect(detail).to_contain_text(address)
            expect(detail).to_contain_text("tier=web")
            doc_shot(page, "create-made")

            container = http.get(f"/v1/containers/{name}").json()
            assert container["host"] == berth.host
            assert container["auto_remove"] is True
            assert container["labels"] == {"tier": "web", "owner": "console"}
            assert sorted(container["ports"]) == [53, 8080]
            assert container["healthcheck"]["test"] == "true"
            assert [a["addr"] for a in container["addresses"][net_uuid]] == [address]
            # Hints go to the scheduler only (no container key shows them): the body sent.
            assert sent[-1]["hints"] == {"team": "blue"}
            assert sent[-1]["mounts"] == [{"source": vol_name, "size": "1",
                                           "destination": "/data"}]
            volumes = http.get("/dashboard/api/volumes").json()["volumes"]
            mine = [v for v in volumes if v["name"] == vol_name]
            assert [(v["size"], v["mounts"]) for v in mine] == [(1, [{
                "container_uuid": container["uuid"], "container_name": name,
                "path": "/data"}])]
        finally:
            if container is not None:
                http.delete(f"/v1/containers/{container['uuid']}", params={"force": "true"})
                berth_wait_gone(http, container["uuid"])
            http.delete(f"/v1/networks/{net_uuid}")


def berth_wait_gone(http: Any, ident: str) -> None:
    from support.berth_proc import wait_for

    wait_for(lambda: http.get(f"/v1/containers/{ident}").status_code == 404, timeout=90)
