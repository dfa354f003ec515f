"""Scenarios over the resources beside containers, run on both services: quotas and quota
classes, registries, hosts, services, availability zones, images and capsules."""

from __future__ import annotations

import time
import uuid

from compat.differ import Answer
from compat.scenarios import Side, Steps


def quotas(side: Side) -> Steps:
    """A project's quotas: defaults, usages, an update, bad values, a delete; a class."""
    project = uuid.uuid4().hex
    path = f"/v1/quotas/{project}"
    steps: Steps = [
        ("show defaults", side.call("GET", path)),
        ("show with usages", side.call("GET", path, params={"usages": "true"})),
        ("update", side.call("PUT", path, {"containers": 5, "memory": 2048})),
        ("show after update", side.call("GET", path)),
        ("update with a bad value", side.call("PUT", path, {"containers": "many"})),
        ("update an unknown resource", side.call("PUT", path, {"gpus": 1})),
        ("delete", side.call("DELETE", path)),
        ("show after delete", side.call("GET", path)),
        ("quota class default", side.call("GET", "/v1/quota_classes/default")),
        ("quota class update with a bad value",
         side.call("PUT", "/v1/quota_classes/default", {"cpu": "lots"})),
    ]
    return steps


def registries(side: Side) -> Steps:
    """A registry's life: create, show by name and uuid, list, update, bad input, delete."""
    name = f"compat-reg-{uuid.uuid4().hex[:6]}"
    body = {"registry": {"name": name, "domain": "127.0.0.1:1", "username": "user",
                         "password": "secret"}}
    steps: Steps = []
    made = side.call("POST", "/v1/registries", body)
    steps.append(("create", made))
    ident = made.body.get("registry", {}).get("uuid") if isinstance(made.body, dict) else None
    assert ident, f"{side.name} refused the registry: {made.status} {made.body}"
    path = f"/v1/registries/{ident}"
    try:
        steps += [
            ("show", side.call("GET", path)),
            ("show by name", side.call("GET", f"/v1/registries/{name}")),
            ("list", side.call("GET", "/v1/registries", params={"name": name})),
            ("list with an unknown filter",
             side.call("GET", "/v1/registries", params={"colour": "red"})),
            ("update", side.call("PATCH", path, {"registry": {"username": "other"}})),
            ("update with an unknown field",
             side.call("PATCH", path, {"registry": {"colour": "red"}})),
            ("create without a domain",
             side.call("POST", "/v1/registries", {"registry": {"name": name + "x"}})),
            ("create with a flat body", side.call("POST", "/v1/registries", body["registry"])),
        ]
    finally:
        steps.append(("delete", side.call("DELETE", path)))
    steps.append(("show after delete", side.call("GET", path)))
    return steps


def cluster(side: Side) -> Steps:
    """What an operator reads of the cluster: hosts, services, zones, the images list."""
    hosts = side.call("GET", "/v1/hosts")
    steps: Steps = [("hosts", hosts)]
    first = (hosts.body.get("hosts") or [{}])[0] if isinstance(hosts.body, dict) else {}
    if first.get("uuid"):
        steps.append(("host by uuid", side.call("GET", f"/v1/hosts/{first['uuid']}")))
    steps += [
        ("host that does not exist", side.call("GET", f"/v1/hosts/{uuid.uuid4()}")),
        ("services", side.call("GET", "/v1/services")),
        ("availability zones", side.call("GET", "/v1/availability_zones")),
        ("images", side.call("GET", "/v1/images")),
        ("image that does not exist", side.call("GET", f"/v1/images/{uuid.uuid4()}")),
        ("containers with an unknown filter",
         side.call("GET", "/v1/containers", params={"colour": "red"})),
        ("containers sorted by a bad key",
         side.call("GET", "/v1/containers", params={"sort_key": "colour"})),
    ]
    return steps


def _template(name: str, image: str) -> dict[str, object]:
    return {"kind": "capsule", "capsuleVersion": "beta",
            "metadata": {"name": name, "labels": {"app": "compat"}},
            "spec": {"restartPolicy": "Never", "containers": [{
                "image": image, "command": ["sleep", "600"],
                "imagePullPolicy": "IfNotPresent",
                "resources": {"requests": {"cpu": 0.1, "memory": 64}}}]}}


def capsules(side: Side) -> Steps:
    """A capsule's life from a template, and templates that must be refused."""
    name = f"compat-cap-{uuid.uuid4().hex[:6]}"
    steps: Steps = []
    made = side.call("POST", "/v1/capsules", {"template": _template(name, side.image)})
    steps.append(("create", made))
    ident = made.body.get("uuid") if isinstance(made.body, dict) else None
    assert ident, f"{side.name} refused the capsule: {made.status} {made.body}"
    path = f"/v1/capsules/{ident}"
    deadline = time.monotonic() + 180
    shown = side.call("GET", path)
    while (isinstance(shown.body, dict) and shown.body.get("status") not in
           ("Running", "Error") and time.monotonic() < deadline):
        time.sleep(0.3)
        shown = side.call("GET", path)
    steps.append(("states to Running", Answer(200, {"status": shown.body.get("status")})))
    steps.append(("show", shown))
    steps.append(("list", side.call("GET", "/v1/capsules")))
    steps.append(("delete", side.call("DELETE", path)))
    deadline = time.monotonic() + 120
    gone = side.call("GET", path)
    while gone.status != 404 and time.monotonic() < deadline:
        time.sleep(0.3)
        gone = side.call("GET", path)
    steps.append(("show after delete", gone))
    bad = _template(name + "-bad", side.image)
    for label, template in (
            ("create without containers", {**bad, "spec": {"containers": []}}),
            ("create with a wrong kind", {**bad, "kind": "pod"}),
            ("create without metadata", {k: v for k, v in bad.items() if k != "metadata"})):
        a = side.call("POST", "/v1/capsules", {"template": template})
        if a.status < 300 and isinstance(a.body, dict) and a.body.get("uuid"):
            side.call("DELETE", f"/v1/capsules/{a.body['uuid']}")
        steps.append((label, a))
    return steps
