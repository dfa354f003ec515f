"""Strings berth cannot store or pass on (issue 42), against a real ``berth serve``.

A create whose ``environment`` held ``"\\ud800"`` (a lone surrogate, valid JSON) made
its row and Docker container, answered 500, and from then on every list that included
the row answered 500. Now such a string, and a NUL, anywhere in a body, a query
parameter, the path or a header, is a 400 naming the field, and nothing is made;
legitimate non-ASCII still works; and a row an older berth stored all the same is
listed, shown and streamed (U+FFFD in place of the surrogate), named by
``berth-status upgrade check``, and deleted by an admin's force delete.
"""

from __future__ import annotations

import base64
import io
import json
import socket
import sqlite3
import subprocess
import tarfile
import uuid
from collections.abc import Iterator
from typing import Any

import docker
import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, bin_path, wait_for

pytestmark = pytest.mark.functional

JSON = {"Content-Type": "application/json"}
PROJECT = "mallory:p42"
S = "\\ud800"          # a lone surrogate, as JSON escapes it
NUL = "\\u0000"


def create_body(**fields: Any) -> str:
    """A container create's JSON text, with ``fields`` (JSON texts) spliced in as
    written, so that their escapes reach berth unchanged."""
    base = {"image": f'"{TEST_IMAGE}"', "command": '["sleep", "300"]'} | fields
    return "{" + ", ".join(f'"{k}": {v}' for k, v in base.items()) + "}"


def capsule_body(command: str) -> str:
    """A capsule create's JSON text whose member's command is the JSON text ``command``."""
    template = {"kind": "capsule", "capsuleVersion": "beta", "metadata": {"name": "poison"},
                "spec": {"containers": [{"image": TEST_IMAGE, "command": "COMMAND"}]}}
    return json.dumps({"template": template}).replace('"COMMAND"', command)


@pytest.fixture(scope="module")
def running(berth: BerthProcess) -> Iterator[str]:
    with berth.http(PROJECT) as http:
        made = http.post("/v1/containers?run=true", content=create_body(), headers=JSON)
        assert made.status_code == 202, made.text
        ident = str(made.json()["uuid"])
        wait_for(lambda: http.get(f"/v1/containers/{ident}").json()["status"] == "Running",
                 60, what="Running")
        yield ident
    with berth.http() as admin:
        admin.delete(f"/v1/containers/{ident}", params={"force": "true"})


def what_exists(berth: BerthProcess) -> dict[str, Any]:
    """Everything a refused request could have left behind."""
    with berth.http() as http:
        found = {
            "containers": sorted(c["uuid"] for c in http.get(
                "/v1/containers", params={"all_projects": "1"}).json()["containers"]),
            "capsules": sorted(c["uuid"] for c in http.get(
                "/v1/capsules", params={"all_projects": "1"}).json()["capsules"]),
            "networks": sorted(n["uuid"] for n in http.get("/v1/networks").json()
                               .get("networks", [])),
            "registries": sorted(r["uuid"] for r in http.get(
                "/v1/registries", params={"all_projects": "1"}).json()["registries"]),
            "quotas": http.get("/v1/quotas/p42").json(),
        }
    client = docker.from_env()
    try:
        found["docker"] = sorted(c.id for c in client.containers.list(
            all=True, filters={"label": f"berth.host={berth.host}"}))
    finally:
        client.close()
    return found


def made_since(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What ``after`` holds that ``before`` did not: the berth is shared with other test
    modules, whose deletes may still be ending, so only what was added counts (and a
    quota changed)."""
    added: dict[str, Any] = {k: sorted(set(after[k]) - set(before[k]))
                             for k in after if k != "quotas"}
    if after["quotas"] != before["quotas"]:
        added["quotas"] = after["quotas"]
    return {k: v for k, v in added.items() if v}


#: (what, method, path, query, JSON text of the body, the field the 400 names).
CASES = [
    ("environment", "POST", "/v1/containers", "run=true",
     create_body(environment=f'{{"A": "{S}"}}'), "environment.A"),
    ("environment NUL", "POST", "/v1/containers", "run=true",
     create_body(environment=f'{{"A": "x{NUL}"}}'), "environment.A"),
    ("label key", "POST", "/v1/containers", "",
     create_body(labels=f'{{"k{S}": "v"}}'), "labels.k\\ud800"),
    ("command", "POST", "/v1/containers", "run=true",
     create_body(command=f'["sleep", "6{NUL}0"]'), "command[1]"),
    ("hints", "POST", "/v1/containers", "", create_body(hints=f'{{"h": "{S}"}}'), "hints.h"),
    ("mounts", "POST", "/v1/containers", "",
     create_body(mounts=f'[{{"source": "", "destination": "/d{NUL}"}}]'),
     "mounts[0].destination"),
    ("name", "POST", "/v1/containers", "", create_body(name=f'"poison{S}"'), "name"),
    ("capsule template", "POST", "/v1/capsules", "", capsule_body(f'["sleep", "{S}"]'),
     "template.spec.containers[0].command[1]"),
    ("network", "POST", "/v1/networks", "", f'{{"name": "net{S}"}}', "name"),
    ("registry", "POST", "/v1/registries", "",
     f'{{"registry": {{"domain": "127.0.0.1:5000", "username": "u", "password": "p{S}"}}}}',
     "registry.password"),
    ("quota", "PUT", "/v1/quotas/p42", "", f'{{"containers": "5{NUL}"}}', "containers"),
    ("query parameter", "GET", "/v1/containers", "name=a%00", "", "name"),
    ("path", "GET", "/v1/containers/a%00b", "", "", "path"),
]


@pytest.mark.parametrize(("what", "method", "path", "query", "body", "field"), CASES,
                         ids=[c[0] for c in CASES])
def test_a_nul_or_lone_surrogate_is_a_400_naming_the_field_and_nothing_is_made(
        berth: BerthProcess, what: str, method: str, path: str, query: str, body: str,
        field: str) -> None:
    before = what_exists(berth)
    with berth.http(PROJECT if "quotas" not in path else "admin") as http:
        answer = http.request(method, path + ("?" + query if query else ""),
                              content=body.encode() if body else None,
                              headers=JSON if body else {})
    assert_names(answer, field)
    assert made_since(before, what_exists(berth)) == {}


#: The same, on an existing container: the exec command and the archive paths.
ON_A_CONTAINER = [
    ("exec command (query)", "execute", "command=ls%00", "", "command"),
    ("exec command (body)", "execute", "", f'{{"command": "ls {S}"}}', "command"),
    ("get_archive path", "get_archive", "path=/tmp%00", "", "path"),
    ("put_archive path", "put_archive", "",
     '{{"path": "/tmp{}", "data": "{}"}}'.format(S, base64.b64encode(b"x").decode()), "path"),
    ("put_archive data (a tar as text, 1.24)", "put_archive", "path=/tmp",
     f'{{"data": "{S}"}}', "data"),
]


@pytest.mark.parametrize(("what", "action", "query", "body", "field"), ON_A_CONTAINER,
                         ids=[c[0] for c in ON_A_CONTAINER])
def test_a_containers_actions_refuse_them_too(
        berth: BerthProcess, running: str, what: str, action: str, query: str, body: str,
        field: str) -> None:
    method = "GET" if action == "get_archive" else "POST"
    version = "container 1.24" if "1.24" in what else "container 1.40"
    with berth.http(PROJECT, version=version) as http:
        answer = http.request(method, f"/v1/containers/{running}/{action}"
                              + ("?" + query if query else ""),
                              content=body.encode() if body else None,
                              headers=JSON if body else {})
        assert_names(answer, field)
        assert http.get(f"/v1/containers/{running}").json()["status"] == "Running"


def test_a_tar_as_text_before_1_25_still_carries_its_nuls(
        berth: BerthProcess, running: str) -> None:
    """put_archive's ``data`` before API 1.25 is a tar archive as text: NULs are data."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("nul.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"a\x00b"))
    with berth.http(PROJECT, version="container 1.24") as http:
        put = http.post(f"/v1/containers/{running}/put_archive", params={"path": "/tmp"},
                        json={"data": buf.getvalue().decode("latin-1")})
    assert put.status_code == 200, put.text


def test_a_nul_in_a_header_is_refused(berth: BerthProcess) -> None:
    """httpx will not send one: a raw request. The HTTP parser or berth refuses it."""
    with socket.create_connection(("127.0.0.1", berth.port), timeout=30) as sock:
        sock.sendall(b"GET /v1/containers HTTP/1.1\r\nHost: x\r\n"
                     b"X-Auth-Token: adm\x00in\r\nConnection: close\r\n\r\n")
        head = sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 400"), head[:200]


def test_other_characters_are_kept_as_sent(berth: BerthProcess) -> None:
    sent = "é 日本 😀"
    body = create_body(name=f'"uni-{uuid.uuid4().hex[:6]}"',
                       environment='{"A": "\\u00e9 \\u65e5\\u672c \\ud83d\\ude00"}',
                       labels=json.dumps({"k": sent}))
    with berth.http(PROJECT) as http:
        made = http.post("/v1/containers", content=body, headers=JSON)
        assert made.status_code == 202, made.text
        ident = made.json()["uuid"]
        try:
            shown = http.get(f"/v1/containers/{ident}").json()
            assert shown["environment"] == {"A": sent} and shown["labels"]["k"] == sent
            listed = http.get("/v1/containers").json()["containers"]
            assert any(c["uuid"] == ident for c in listed)
        finally:
            with berth.http() as admin:
                admin.delete(f"/v1/containers/{ident}", params={"force": "true"})


def assert_names(answer: httpx.Response, field: str) -> None:
    assert answer.status_code == 400, answer.text[:400]
    (err,) = answer.json()["errors"]
    assert err["code"] == "container.invalid-parameter-value"
    assert f"Invalid input for field '{field}'" in err["detail"], err["detail"]


# -- a row an older berth stored ------------------------------------------------------


def poison(berth: BerthProcess, ident: str) -> None:
    """What an older berth stored for the issue's create: the environment's JSON text
    with the lone surrogate escaped."""
    conn = sqlite3.connect(berth.dir / "state" / "berth.sqlite", timeout=30)
    try:
        with conn:
            done = conn.execute("UPDATE container SET environment = ? WHERE uuid = ?",
                                ('{"A": "\\ud800"}', ident))
            assert done.rowcount == 1
    finally:
        conn.close()


def test_a_stored_row_with_one_is_listed_shown_streamed_named_and_deleted(
        berth: BerthProcess) -> None:
    with berth.http(PROJECT) as http:
        made = [http.post("/v1/containers?run=true", content=create_body(), headers=JSON)
                for _ in range(2)]
        assert all(m.status_code == 202 for m in made), [m.text for m in made]
        bad, good = (str(m.json()["uuid"]) for m in made)
        for ident in (bad, good):
            wait_for(lambda i=ident: http.get(f"/v1/containers/{i}").json()["status"]
                     == "Running", 60, what="Running")
    poison(berth, bad)
    try:
        with berth.http(PROJECT) as http:
            own = http.get("/v1/containers")
            assert own.status_code == 200, own.text
            listed = {c["uuid"]: c for c in own.json()["containers"]}
            assert good in listed and listed[bad]["environment"] == {"A": "\ufffd"}
            shown = http.get(f"/v1/containers/{bad}")
            assert shown.status_code == 200 and shown.json()["environment"] == {"A": "\ufffd"}
            stopped = http.post(f"/v1/containers/{bad}/stop")   # the agent reads the row
            assert stopped.status_code == 202, stopped.text
            wait_for(lambda: http.get(f"/v1/containers/{bad}").json()["status"] == "Stopped",
                     60, what="Stopped")
            refused = http.delete(f"/v1/containers/{bad}", params={"force": "true"})
            assert refused.status_code == 403, refused.text
        with berth.http() as admin:
            every = admin.get("/v1/containers", params={"all_projects": "1"})
            assert every.status_code == 200 and {bad, good} <= {
                c["uuid"] for c in every.json()["containers"]}
        assert f"of uuid {bad} with U+FFFD" in berth.log_text()
        assert {bad, good} <= streamed(berth)
        named = upgrade_check(berth)
        assert f"container uuid {bad} environment field A" in named
        assert good not in named
    finally:
        with berth.http() as admin:
            deleted = admin.delete(f"/v1/containers/{bad}", params={"force": "true"})
            admin.delete(f"/v1/containers/{good}", params={"force": "true"})
    assert deleted.status_code == 204, deleted.text
    with berth.http() as admin:
        wait_for(lambda: bad not in {c["uuid"] for c in admin.get(
            "/v1/containers", params={"all_projects": "1"}).json()["containers"]},
            60, what="the row deleted")
    assert f"container uuid {bad}" not in upgrade_check(berth)


def streamed(berth: BerthProcess) -> set[str]:
    """The uuids of the console stream's first snapshot (the admin's, every project)."""
    with httpx.stream("GET", f"{berth.url}/dashboard/api/events",
                      params={"all_projects": "true"}, headers={"X-Auth-Token": "admin"},
                      timeout=60) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                return {c["uuid"] for c in json.loads(line[6:])["containers"]}
    raise AssertionError("the stream ended before its snapshot")


def upgrade_check(berth: BerthProcess) -> str:
    """The details of ``berth-status upgrade check``'s rows check on berth's database."""
    done = subprocess.run([bin_path("berth-status"), "--config-file", str(berth.conf),
                           "upgrade", "check", "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    checks = {c["check"]: c for c in json.loads(done.stdout)["checks"]}
    return str(checks["Rows with unstorable strings"]["details"])
