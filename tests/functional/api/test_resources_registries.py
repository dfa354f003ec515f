"""Registries end to end: CRUD through python-zunclient and the ``zun`` CLI, the
password encrypted at rest, and a container created with ``registry`` pulling its
image from that registry (the local one at 127.0.0.1:5000, which needs no login)."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import uuid as uuidlib
from typing import Any

import pytest
from cryptography.fernet import Fernet
from support.berth_proc import REGISTRY, TEST_IMAGE, BerthProcess, bin_path, wait_for
from support.lifecycle import Made, settled
from zunclient import exceptions as zexc


def zun_cli(proc: BerthProcess, *args: str) -> str:
    done = subprocess.run([bin_path("zun"), *args], check=False, env=proc.zun_cli_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"zun {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def unique(prefix: str) -> str:
    return f"{prefix}-{uuidlib.uuid4().hex[:8]}"


@pytest.fixture
def registries(zun):  # type: ignore[no-untyped-def]
    """Creates registries through the Python API; deletes what is left afterwards."""
    made: list[str] = []

    def create(**kwargs: Any) -> dict[str, Any]:
        reg = zun.registries.create(**kwargs).registry
        made.append(reg["uuid"])
        return reg

    yield create
    for uuid in made:
        wait_for(lambda u=uuid: _deleted(zun, u), 60,
                 what=f"registry {uuid} to be deletable (its containers gone)")


def _deleted(zun: Any, uuid: str) -> bool:
    try:
        zun.registries.delete(uuid)
    except zexc.NotFound:
        return True
    except zexc.Conflict:
        return False            # a container being deleted still uses it
    return True


@pytest.fixture
def made(zun, docker_client):  # type: ignore[no-untyped-def]
    m = Made(zun, docker_client)
    yield m
    m.cleanup()


def _stored_password(proc: BerthProcess, uuid: str) -> str:
    with sqlite3.connect(proc.dir / "state" / "berth.sqlite") as conn:
        (value,) = conn.execute("SELECT password FROM registry WHERE uuid = ?",
                                (uuid,)).fetchone()
    return str(value)


def test_registry_crud_keeps_the_password_encrypted_and_never_shows_it(
        berth, zun, registries):
    name = unique("reg")
    reg = registries(name=name, domain="registry.example.com", username="u",
                     password="s3cret-pw")
    assert {k: reg[k] for k in ("name", "domain", "username", "password")} == \
        {"name": name, "domain": "registry.example.com", "username": "u", "password": "***"}
    assert reg["project_id"] == "admin" and reg["links"]

    stored = _stored_password(berth, reg["uuid"])
    assert "s3cret-pw" not in stored
    key_file = berth.dir / "state" / "registry.key"
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert Fernet(key_file.read_bytes().strip()).decrypt(stored.encode()) == b"s3cret-pw"

    assert zun.registries.get(name).registry["uuid"] == reg["uuid"]      # by name
    listed = [r for r in zun.registries.list() if r.uuid == reg["uuid"]]
    assert len(listed) == 1 and listed[0].password == "***"
    assert not hasattr(listed[0], "links")

    zun_cli(berth, "registry-update", "--username", "u2", "--password", "other-pw",
            reg["uuid"])
    shown = zun.registries.get(reg["uuid"]).registry
    assert shown["username"] == "u2" and shown["password"] == "***"
    assert Fernet(key_file.read_bytes().strip()).decrypt(
        _stored_password(berth, reg["uuid"]).encode()) == b"other-pw"

    out = zun_cli(berth, "registry-delete", reg["uuid"])
    assert "accepted" in out
    with pytest.raises(zexc.NotFound):
        zun.registries.get(reg["uuid"])


def test_registries_belong_to_their_project(berth, zun, registries):
    reg = registries(name=unique("mine"), domain="registry.example.com")
    other = berth.client(token="carol:regproj2")
    with pytest.raises(zexc.NotFound):
        other.registries.get(reg["uuid"])
    assert reg["uuid"] not in [r.uuid for r in other.registries.list()]
    with pytest.raises(zexc.Forbidden):
        other.registries.list(all_projects=True)
    assert reg["uuid"] in [r.uuid for r in zun.registries.list(all_projects=True)]


def test_registry_bad_input_is_refused_and_saves_nothing(berth, zun):
    before = len(zun.registries.list(all_projects=True))
    with berth.http() as http:
        cases = {
            "unwrapped": http.post("/v1/registries", json={"domain": "r.example"}),
            "no domain": http.post("/v1/registries", json={"registry": {"name": "nodomain"}}),
            "scheme": http.post("/v1/registries",
                                json={"registry": {"domain": "https://r.example"}}),
            "bare word": http.post("/v1/registries", json={"registry": {"domain": "myreg"}}),
            "bad name": http.post("/v1/registries",
                                  json={"registry": {"domain": "r.example", "name": "-x"}}),
            "empty pw": http.post("/v1/registries",
                                  json={"registry": {"domain": "r.example", "password": ""}}),
            "extra": http.post("/v1/registries",
                               json={"registry": {"domain": "r.example", "email": "a@b"}}),
            "filter": http.get("/v1/registries?colour=blue"),
        }
        not_json = http.post("/v1/registries", content=b"domain=r.example",
                             headers={"Content-Type": "text/plain"})
        unknown = http.get(f"/v1/registries/{uuidlib.uuid4()}")
        empty_patch = http.patch(f"/v1/registries/{uuidlib.uuid4()}", json={"registry": {}})
    for what, resp in cases.items():
        assert resp.status_code == 400, (what, resp.text)
    assert "domain" in cases["scheme"].json()["errors"][0]["title"]
    assert "email" in cases["extra"].json()["errors"][0]["title"]
    assert not_json.status_code == 415
    assert unknown.status_code == 404
    assert unknown.json()["errors"][0]["code"] == "container.registry-not-found"
    assert empty_patch.status_code == 400
    assert len(zun.registries.list(all_projects=True)) == before


def test_a_container_with_a_registry_pulls_its_image_from_that_registry(
        zun, registries, made, docker_client):
    """``berth-test/busybox`` has no domain: it is pulled as
    ``127.0.0.1:5000/berth-test/busybox`` (the registry's domain), with the
    registry's credentials (decrypted on the node; the local registry ignores them)."""
    reg = registries(name=unique("local"), domain=REGISTRY, username="puller",
                     password="pull-pw")
    c = zun.containers.run(image=TEST_IMAGE, command=["sleep", "300"],
                           image_pull_policy="always", registry=reg["uuid"])
    made.uuids.append(c.uuid)
    assert c.registry_id == reg["uuid"]
    wait_for(lambda: settled(zun, c.uuid, "Running"), 60, what="the container to run")
    assert made.inspect(c.uuid)["Config"]["Image"] == f"{REGISTRY}/{TEST_IMAGE}"
    assert zun.containers.get(c.uuid).registry_id == reg["uuid"]
    assert [x.registry_id for x in zun.containers.list() if x.uuid == c.uuid] == [reg["uuid"]]

    with pytest.raises(zexc.Conflict) as busy:       # in use: not deleted
        zun.registries.delete(reg["uuid"])
    assert c.uuid in str(busy.value)


def test_a_create_naming_an_unknown_registry_is_refused(zun, docker_client):
    count = len(zun.containers.list())
    with pytest.raises(zexc.NotFound) as refused:
        zun.containers.create(image=TEST_IMAGE, command=["sleep", "1"],
                              registry="no-such-registry")
    assert "no-such-registry" in str(refused.value)
    assert len(zun.containers.list()) == count
