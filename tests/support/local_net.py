"""Local networks through berth's API, for functional tests: a helper that creates
networks and containers on a real ``berth serve`` and removes them afterwards, and
probes of reachability from inside a container."""

from __future__ import annotations

import json
import subprocess
import uuid as uuidlib
from typing import Any

from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

HTTPD = ["sh", "-c", "echo hello-from-berth > /tmp/index.html && exec httpd -f -p 8080 -h /tmp"]
SLEEP = ["sleep", "600"]


class Net:
    """Creates networks and containers through the API, removes them afterwards."""

    def __init__(self, proc: BerthProcess) -> None:
        self.proc = proc
        self.http = proc.http(version="container 1.40")
        self.containers: list[tuple[str, str]] = []
        self.networks: list[str] = []

    def network(self, **extra: Any) -> dict[str, Any]:
        name = f"ft-net-{uuidlib.uuid4().hex[:8]}"
        resp = self.http.post("/v1/networks", json={"name": name, **extra})
        assert resp.status_code == 200, resp.text
        self.networks.append(resp.json()["uuid"])
        return dict(resp.json())

    def create(self, command: list[str], *, nets: list[dict[str, str]] | None = None,
               token: str = "admin", wait: str | None = "Running", **extra: Any
               ) -> dict[str, Any]:
        # (only admins may set the pull policy; the berth's default is ifnotpresent)
        body: dict[str, Any] = {"image": TEST_IMAGE, "command": command, **extra}
        if token == "admin":
            body["image_pull_policy"] = "ifnotpresent"
        if nets is not None:
            body["nets"] = nets
        http = self.proc.http(token=token, version="container 1.40")
        resp = http.post("/v1/containers", params={"run": "true"}, json=body)
        assert resp.status_code == 202, resp.text
        uuid = str(resp.json()["uuid"])
        self.containers.append((uuid, token))
        if wait is None:
            return dict(resp.json())
        return self.wait(uuid, wait, token)

    def show(self, uuid: str, token: str = "admin") -> dict[str, Any]:
        resp = self.proc.http(token=token).get(f"/v1/containers/{uuid}")
        resp.raise_for_status()
        return dict(resp.json())

    def wait(self, uuid: str, status: str, token: str = "admin") -> dict[str, Any]:
        box: dict[str, Any] = {}

        def done() -> bool:
            box["c"] = self.show(uuid, token)
            return bool(box["c"]["status"] == status and not box["c"]["task_state"])
        wait_for(done, 60, what=f"{uuid} to be {status}")
        return box["c"]

    def exec(self, uuid: str, command: str) -> tuple[int, str]:
        resp = self.http.post(f"/v1/containers/{uuid}/execute",
                              params={"command": command, "run": "true"})
        assert resp.status_code == 200, resp.text
        out = resp.json()
        return int(out["exit_code"]), str(out["output"])

    def delete(self, uuid: str, token: str = "admin") -> None:
        resp = self.proc.http(token=token).delete(f"/v1/containers/{uuid}",
                                                  params={"force": "true"})
        assert resp.status_code in (204, 404), resp.text

        def gone() -> bool:
            return self.proc.http(token=token).get(f"/v1/containers/{uuid}").status_code == 404
        wait_for(gone, 60, what=f"{uuid} to be deleted")

    def cleanup(self) -> None:
        for uuid, _token in self.containers:
            self.delete(uuid)
        for net in self.networks:
            self.http.delete(f"/v1/networks/{net}")


def address_of(container: dict[str, Any], network: str | None = None) -> str:
    addresses = container["addresses"]
    key = network or next(iter(addresses))
    return str(addresses[key][0]["addr"])


def fetch(net: Net, uuid: str, ip: str, timeout: int = 3) -> tuple[int, str]:
    """An HTTP GET of the server's page from inside container ``uuid``, with busybox
    nc (the test image's busybox wget crashes)."""
    request = "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n'"
    return net.exec(uuid, f'sh -c "{request} | nc -w {timeout} {ip} 8080"')


def link_exists(name: str) -> bool:
    return subprocess.run(["ip", "link", "show", name], check=False,
                          capture_output=True).returncode == 0


def registry_of(proc: BerthProcess) -> dict[str, Any]:
    path = proc.dir / "state" / "cni" / "registry.json"
    return dict(json.loads(path.read_text())) if path.exists() else {"attachments": []}


def attachments_of(proc: BerthProcess, uuid: str) -> list[dict[str, Any]]:
    return [a for a in registry_of(proc).get("attachments", [])
            if uuid in json.dumps(a)]
