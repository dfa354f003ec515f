"""A container's actions log (``action-list``, ``action-show``) end to end through
python-zunclient and the ``zun`` CLI against the shared ``berth serve``."""

from __future__ import annotations

import datetime as dt
import subprocess
import uuid as uuidlib
from typing import Any

import pytest
from support.berth_proc import BerthProcess, bin_path
from support.lifecycle import Made, database_of, wait_action
from support.registry_probe import push_probe, remove_probe
from zunclient import exceptions as zexc


def zun_cli(proc: BerthProcess, *args: str) -> str:
    done = subprocess.run([bin_path("zun"), *args], check=False, env=proc.zun_cli_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"zun {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def parse_time(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f")


@pytest.fixture
def made(zun, docker_client):  # type: ignore[no-untyped-def]
    m = Made(zun, docker_client)
    yield m
    m.cleanup()


def test_action_list_and_show_record_what_was_asked_and_what_the_agent_did(
        berth, zun, made):
    uuid = made.create()
    zun.containers.stop(uuid, 1)
    with database_of(berth) as db:
        wait_action(db, uuid, "stop")
    listed = zun.actions.list(uuid)
    assert [a.action for a in listed][:2] == ["stop", "create"]       # newest first
    create = listed[1]
    assert create.container_uuid == uuid and create.request_id.startswith("req-")
    assert create.project_id == "admin" and create.user_id == "admin"
    assert create.message is None
    assert parse_time(create.finish_time) >= parse_time(create.start_time)

    shown = zun.actions.get(uuid, create.request_id)
    events = {e["event"]: e for e in shown.events}
    assert events["compute__do_container_create"]["result"] == "Success"
    assert events["compute__do_container_start"]["result"] == "Success"
    assert all(e["traceback"] is None for e in shown.events)
    assert set(shown.events[0]) == {"event", "start_time", "finish_time", "result",
                                    "traceback"}

    out = zun_cli(berth, "action-list", uuid)
    assert "create" in out and "stop" in out and create.request_id in out
    out = zun_cli(berth, "action-show", uuid, create.request_id)
    assert "compute__do_container_create" in out


@pytest.fixture
def only_in_registry(docker_client):  # type: ignore[no-untyped-def]
    """An image the local registry has and Docker does not (a tag of its own)."""
    ref = push_probe(docker_client, "actions-probe")
    yield ref
    remove_probe(docker_client, ref)


def test_a_failed_action_shows_its_traceback_to_admins_only(
        berth, zun, made, only_in_registry):
    # Pull policy never and an image Docker does not have: the agent's create fails.
    c = zun.containers.create(image=only_in_registry, command=["sleep", "1"],
                              image_pull_policy="never")
    made.uuids.append(c.uuid)
    with database_of(berth) as db:
        wait_action(db, c.uuid, "create")          # finished (Error comes a bit earlier)
    assert zun.containers.get(c.uuid).status == "Error"
    create = next(a for a in zun.actions.list(c.uuid) if a.action == "create")
    assert create.message == "Error"
    as_admin = zun.actions.get(c.uuid, create.request_id)
    event = next(e for e in as_admin.events if e["event"] == "compute__do_container_create")
    assert event["result"] == "Error"
    assert "pull policy is never" in event["traceback"]

    member = berth.client(token="erin:admin")              # same project, not an admin
    as_member = member.actions.get(c.uuid, create.request_id)
    event = next(e for e in as_member.events if e["event"] == "compute__do_container_create")
    assert event["result"] == "Error" and event["traceback"] is None


def test_actions_of_unknown_or_foreign_containers_are_not_found(berth, zun, made):
    uuid = made.create()
    with pytest.raises(zexc.NotFound):
        zun.actions.get(uuid, "req-does-not-exist")
    with pytest.raises(zexc.NotFound):
        zun.actions.list(str(uuidlib.uuid4()))
    stranger = berth.client(token="frank:otherproj")
    with pytest.raises(zexc.NotFound):
        stranger.actions.list(uuid)
    with berth.http() as http:
        missing = http.get(f"/v1/containers/{uuid}/container_actions/req-nope")
    body: Any = missing.json()
    assert missing.status_code == 404 and "action-list" in body["errors"][0]["title"]


def test_a_create_no_host_can_take_records_its_action_as_failed(berth, zun, made):
    # Zun's contract: 202, and the row in Error saying why; its create action is
    # written with the row and is already over, in Error.
    with berth.http() as http:
        resp = http.post("/v1/containers", headers={"OpenStack-API-Version": "container 1.40"},
                         json={"image": "berth-test/busybox:latest",
                               "availability_zone": "nowhere-" + uuidlib.uuid4().hex[:6]})
    assert resp.status_code == 202, resp.text
    uuid = resp.json()["uuid"]
    made.uuids.append(uuid)
    row = zun.containers.get(uuid)
    assert row.status == "Error" and "nowhere" in (row.status_reason or ""), row.status_reason
    [create] = zun.actions.list(uuid)
    assert create.action == "create" and create.message == "Error"
    assert create.finish_time is not None
    assert parse_time(create.finish_time) >= parse_time(create.start_time)
