"""Bad input to the lifecycle actions: every refused request gets a 4xx in Zun's error
envelope with a message that says what was wrong, and leaves Docker and berth's
database (row and action log) exactly as they were."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import pytest
from support.lifecycle import Made, database_of, docker_snapshot, row_snapshot

from berth.db import containers, nodes

V = "container 1.40"


@pytest.fixture(scope="module")
def env(berth, docker_url) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """One running and one created container, shared by the module (every test
    checks that it left them unchanged)."""
    import docker

    client = docker.DockerClient(base_url=docker_url, version="auto")
    made = Made(berth.client(), client)
    try:
        with database_of(berth) as db:
            yield {"made": made, "db": db, "running": made.create(),
                   "created": made.create(run=False)}
    finally:
        made.cleanup()
        client.close()


def _refused(berth, env, uuid: str, method: str, action: str, status: int,  # type: ignore[no-untyped-def]
             words: tuple[str, ...], version: str = V, **kw: Any) -> None:
    db, made = env["db"], env["made"]
    row_before, docker_before = row_snapshot(db, uuid), docker_snapshot(made, uuid)
    path = f"/v1/containers/{uuid}" + (f"/{action}" if action else "")
    with berth.http(version=version) as http:
        r = http.request(method, path, **kw)
    assert r.status_code == status, r.text
    error = r.json()["errors"][0]
    assert error["status"] == status and error["code"].startswith("container.")
    for word in words:
        assert word in error["title"], (word, error["title"])
    assert row_snapshot(db, uuid) == row_before
    assert docker_snapshot(made, uuid) == docker_before


BAD_PARAMS = [
    ("POST", "kill", {"params": {"signal": "SIGFOO"}}, ("signal", "SIGFOO")),
    ("POST", "kill", {"params": {"signal": "0"}}, ("signal",)),
    ("POST", "kill", {"params": {"signal": "65"}}, ("signal",)),
    ("POST", "kill", {"json": {"signal": True}}, ("signal",)),
    ("POST", "reboot", {"params": {"timeout": "abc"}}, ("timeout", "seconds")),
    ("POST", "reboot", {"params": {"timeout": "-1"}}, ("timeout",)),
    ("POST", "reboot", {"params": {"timeout": "86401"}}, ("timeout", "86400")),
    ("POST", "rebuild", {"params": {"image": "Bad/Upper"}}, ("lowercase",)),
    ("POST", "rebuild", {"params": {"image": "x"}}, ("image",)),
    ("POST", "rebuild", {"params": {"image": "127.0.0.1:5000/berth-test/nope:latest"}},
     ("could not be found",)),
    ("POST", "rebuild", {"params": {"image_driver": "foo"}}, ("image_driver", "docker")),
    ("POST", "rebuild", {"params": {"run": "maybe"}}, ("run",)),
    ("PATCH", "", {"json": {"memory": "abc"}}, ("memory", "MiB")),
    ("PATCH", "", {"json": {"memory": 2}}, ("memory", "between 4 and 8192")),
    ("PATCH", "", {"json": {"memory": 9000}}, ("memory",)),
    # Valid for berth (>= 4 MiB) but refused by Docker: the claim is given back.
    ("PATCH", "", {"json": {"memory": 4}}, ("Minimum memory limit",)),
    ("PATCH", "", {"json": {"cpu": 0}}, ("cpu",)),
    ("PATCH", "", {"json": {"cpu": "17"}}, ("cpu",)),
    ("PATCH", "", {"json": {"name": "!bad"}}, ("name",)),
    ("PATCH", "", {"json": {"auto_heal": "maybe"}}, ("auto_heal",)),
    ("PATCH", "", {"json": {"color": "red"}}, ("color",)),
    ("PATCH", "", {"json": {}}, ("Nothing to update",)),
    ("PATCH", "", {"content": b"not json", "headers": {"Content-Type": "application/json"}},
     ("not valid JSON",)),
    ("POST", "resize_container", {"params": {"memory": "abc"}}, ("memory",)),
    ("POST", "resize_container", {"params": {"memory": "64", "name": "x1"}}, ("PATCH",)),
]


@pytest.mark.parametrize("method,action,kw,words", BAD_PARAMS,
                         ids=[f"{m} {a or 'patch'} {k}" for m, a, k, _ in BAD_PARAMS])
def test_bad_parameters_are_400_and_change_nothing(berth, env, method, action, kw, words):
    _refused(berth, env, env["running"], method, action, 400, words, **kw)


OLD_API_BAD = [
    ("rename", "1.13", {"params": {"name": "!bad"}}, ("name",)),
    ("rename", "1.13", {}, ("'name' is required",)),
    ("add_security_group", "1.14", {"params": {"name": "x" * 256}}, ("name", "255")),
    ("add_security_group", "1.14", {}, ("'name' is required",)),
    ("remove_security_group", "1.14", {"params": {"name": "absent"}}, ("is not on container",)),
]


@pytest.mark.parametrize("action,version,kw,words", OLD_API_BAD,
                         ids=[f"{a} {k}" for a, _, k, _ in OLD_API_BAD])
def test_bad_parameters_of_old_api_actions_are_400(berth, env, action, version, kw, words):
    _refused(berth, env, env["running"], "POST", action, 400, words,
             version=f"container {version}", **kw)


@pytest.mark.parametrize("action,version,kw", [
    ("rename", "1.14", {"params": {"name": "new-name"}}),
    ("rename", "1.40", {"params": {"name": "new-name"}}),
    ("add_security_group", "1.15", {"params": {"name": "sg1"}}),
    ("remove_security_group", "1.40", {"params": {"name": "sg1"}}),
    ("resize_container", "1.18", {"params": {"memory": "64"}}),
])
def test_actions_outside_their_microversions_are_406(berth, env, action, version, kw):
    _refused(berth, env, env["running"], "POST", action, 406, ("not available", version),
             version=f"container {version}", **kw)


@pytest.mark.parametrize("method,action,kw", [
    ("POST", "reboot", {}), ("POST", "pause", {}), ("POST", "unpause", {}),
    ("POST", "kill", {"params": {"signal": "None"}}), ("POST", "rebuild", {}),
    ("PATCH", "", {"json": {"memory": "64"}}),
    ("POST", "resize_container", {"params": {"memory": "64"}}),
])
def test_unknown_container_is_404(berth, method, action, kw):
    ghost = str(uuidlib.uuid4())
    path = f"/v1/containers/{ghost}" + (f"/{action}" if action else "")
    with berth.http() as http:
        r = http.request(method, path, **kw)
    assert r.status_code == 404, r.text
    assert f"Container {ghost} could not be found" in r.json()["errors"][0]["title"]


@pytest.mark.parametrize("which,action,kw,status", [
    ("running", "unpause", {}, "Running"),
    ("created", "pause", {}, "Created"),
    ("created", "kill", {}, "Created"),
    ("created", "unpause", {}, "Created"),
])
def test_action_in_the_wrong_status_is_409_naming_it(berth, env, which, action, kw, status):
    uuid = env[which]
    allowed = "Paused" if action == "unpause" else "Running"
    _refused(berth, env, uuid, "POST", action, 409,
             (f"Cannot {action} container {uuid} in {status} state", allowed), **kw)


def test_same_name_is_409(berth, env):
    uuid = env["running"]
    name = containers.get_by_uuid(env["db"], uuid).name
    _refused(berth, env, uuid, "PATCH", "", 409, ("already named",), json={"name": name})
    _refused(berth, env, uuid, "POST", "rename", 409, ("already named",),
             version="container 1.13", params={"name": name})


def test_action_while_a_task_runs_is_409(berth, env):
    db, uuid = env["db"], env["running"]
    containers.update_(db, uuid, {"task_state": "container_rebooting"})
    try:
        for method, action, kw in (("POST", "pause", {}), ("POST", "kill", {}),
                                   ("POST", "reboot", {}), ("POST", "rebuild", {}),
                                   ("PATCH", "", {"json": {"memory": "64"}})):
            _refused(berth, env, uuid, method, action, 409, ("busy with container_rebooting",),
                     **kw)
    finally:
        containers.update_(db, uuid, {"task_state": None})


def test_action_on_a_host_whose_agent_is_down_is_409(berth, env, zun):
    # Forced down through the API, as an operator does: the API reads the up hosts at
    # most once a second (nodes.UpHosts) and forgets them on its own force-down; a
    # write straight to the database would be seen up to a second later.
    db, uuid = env["db"], env["running"]
    service = next(s for s in nodes.list_services(db) if s.host == berth.host)
    zun.services.force_down(service.host, service.binary, True)
    try:
        for method, action, kw in (("POST", "pause", {}), ("POST", "reboot", {}),
                                   ("POST", "rebuild", {}),
                                   ("PATCH", "", {"json": {"memory": "64"}})):
            _refused(berth, env, uuid, method, action, 409, ("compute agent is down",), **kw)
    finally:
        zun.services.force_down(service.host, service.binary, False)


def test_update_beyond_the_nodes_room_is_409_and_changes_nothing(berth_factory, docker_url):
    """The agent's claim refuses memory the node does not have; Docker keeps the old
    limit and the row its old value."""
    import docker

    proc = berth_factory("[compute]\nram_allocation_ratio = 0.02\n").start()
    client = docker.DockerClient(base_url=docker_url, version="auto")
    made = Made(proc.client(), client)
    try:
        uuid = made.create(memory="64")
        with database_of(proc) as db, proc.http() as http:
            row_before, docker_before = row_snapshot(db, uuid), docker_snapshot(made, uuid)
            r = http.patch(f"/v1/containers/{uuid}", json={"memory": "8192"})
            assert r.status_code == 409, r.text
            title = r.json()["errors"][0]["title"]
            assert "no room" in title and "memory: requested 8192 MiB" in title
            assert row_snapshot(db, uuid) == row_before
            assert docker_snapshot(made, uuid) == docker_before
            assert docker_before["memory"] == 64 * 2 ** 20
    finally:
        made.cleanup()
        client.close()
