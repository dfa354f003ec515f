"""Lifecycle actions end to end: python-zunclient (its Python API and the
``openstack appcontainer`` CLI) against ``berth serve`` on the real Docker engine,
checked in ``docker inspect`` and in berth's action log."""

from __future__ import annotations

import subprocess

import docker.errors
import pytest
from support.berth_proc import bin_path, wait_for
from support.lifecycle import Made, database_of, settled, wait_action
from zunclient.common.apiclient import exceptions as zexc

MIB = 2 ** 20
REGISTRY_IMAGE = "127.0.0.1:5000/berth-test/busybox:latest"
# A shell that handles SIGHUP: one keeps running, the other exits with 3.
HUP_SURVIVOR = ["sh", "-c", "trap 'echo got HUP' HUP; while true; do sleep 0.1; done"]
HUP_EXITS = ["sh", "-c", "trap 'exit 3' HUP; while true; do sleep 0.1; done"]


@pytest.fixture
def made(zun, docker_client):  # type: ignore[no-untyped-def]
    m = Made(zun, docker_client)
    yield m
    m.cleanup()


@pytest.fixture
def db(berth):  # type: ignore[no-untyped-def]
    with database_of(berth) as database:
        yield database


def test_pause_and_unpause_freeze_and_thaw_the_docker_container(zun, made, db):
    uuid = made.create()
    zun.containers.pause(uuid)
    action, events = wait_action(db, uuid, "pause")
    assert action.message is None
    assert events == {"compute__do_container_pause": "Success"}
    assert settled(zun, uuid, "Paused")
    state = made.inspect(uuid)["State"]
    assert state["Paused"] is True and state["Status"] == "paused"

    zun.containers.unpause(uuid)
    _, events = wait_action(db, uuid, "unpause")
    assert events == {"compute__do_container_unpause": "Success"}
    assert settled(zun, uuid, "Running")
    state = made.inspect(uuid)["State"]
    assert state["Paused"] is False and state["Running"] is True


def test_restart_starts_the_docker_container_again(zun, made, db):
    uuid = made.create()
    before = made.inspect(uuid)["State"]
    zun.containers.restart(uuid, 1)
    action, events = wait_action(db, uuid, "reboot")
    assert action.message is None
    assert events == {"compute__do_container_reboot": "Success"}
    assert settled(zun, uuid, "Running")
    after = made.inspect(uuid)["State"]
    assert after["Running"] is True
    assert after["StartedAt"] > before["StartedAt"]
    assert after["Pid"] != before["Pid"]


def test_restart_of_a_created_container_starts_it(zun, made, db):
    uuid = made.create(run=False)
    assert made.inspect(uuid)["State"]["Status"] == "created"
    zun.containers.restart(uuid, 1)
    wait_action(db, uuid, "reboot")
    assert settled(zun, uuid, "Running")
    assert made.inspect(uuid)["State"]["Running"] is True


def test_kill_without_a_signal_sends_sigkill_and_the_container_stops(zun, made, db):
    uuid = made.create()
    zun.containers.kill(uuid)                   # the client sends ?signal=None
    action, events = wait_action(db, uuid, "kill")
    assert action.message is None
    assert events == {"compute__do_container_kill": "Success"}
    assert settled(zun, uuid, "Stopped")
    state = made.inspect(uuid)["State"]
    assert state["Running"] is False and state["ExitCode"] == 137


def test_kill_with_a_handled_signal_leaves_the_container_running(zun, made, db):
    """Zun marked every killed container Stopped; berth reports what Docker sees."""
    uuid = made.create(HUP_SURVIVOR)
    zun.containers.kill(uuid, "SIGHUP")
    action, _ = wait_action(db, uuid, "kill")
    assert action.message is None
    assert settled(zun, uuid, "Running")
    assert made.inspect(uuid)["State"]["Running"] is True
    # The signal did arrive: the shell's trap ran.
    wait_for(lambda: b"got HUP" in made.docker.api.logs(f"zun-{uuid}"), 10,
             what="the shell's trap to run")


def test_kill_with_a_signal_that_ends_the_process_maps_its_exit(zun, made, db):
    uuid = made.create(HUP_EXITS)
    zun.containers.kill(uuid, "hup")             # lower case, no SIG prefix
    wait_action(db, uuid, "kill")
    assert settled(zun, uuid, "Stopped")
    state = made.inspect(uuid)["State"]
    assert state["Running"] is False and state["ExitCode"] == 3


def test_kill_with_an_ignored_signal_number_keeps_it_running(zun, made, db):
    uuid = made.create()                       # sleep as PID 1 ignores SIGTERM
    zun.containers.kill(uuid, "15")
    wait_action(db, uuid, "kill")
    assert settled(zun, uuid, "Running")
    assert made.inspect(uuid)["State"]["Running"] is True


def test_rebuild_with_a_new_image_replaces_the_docker_container_and_restarts_it(
        zun, made, db, docker_client):
    uuid = made.create()
    old_id = made.inspect(uuid)["Id"]
    zun.containers.rebuild(uuid, image=REGISTRY_IMAGE)
    action, events = wait_action(db, uuid, "rebuild")
    assert action.message is None
    assert events == {"compute__do_container_rebuild": "Success",
                      "compute__do_container_start": "Success"}
    assert settled(zun, uuid, "Running")
    new = made.inspect(uuid)
    assert new["Id"] != old_id
    assert new["Config"]["Image"] == REGISTRY_IMAGE
    assert new["State"]["Running"] is True
    assert zun.containers.get(uuid).image == REGISTRY_IMAGE
    with pytest.raises(docker.errors.NotFound):
        docker_client.api.inspect_container(old_id)


def test_rebuild_of_a_stopped_container_leaves_it_created(zun, made, db):
    uuid = made.create()
    zun.containers.kill(uuid)
    wait_action(db, uuid, "kill")
    old_id = made.inspect(uuid)["Id"]
    zun.containers.rebuild(uuid)
    _, events = wait_action(db, uuid, "rebuild")
    assert events == {"compute__do_container_rebuild": "Success"}
    assert settled(zun, uuid, "Created")
    new = made.inspect(uuid)
    assert new["Id"] != old_id and new["State"]["Status"] == "created"


def test_update_sets_the_memory_limit_and_cpu_shares_in_docker(zun, made):
    uuid = made.create()
    view = zun.containers.update(uuid, memory="128", cpu="0.5")
    assert view.memory == "128" and view.cpu == 0.5
    host_config = made.inspect(uuid)["HostConfig"]
    assert host_config["Memory"] == 128 * MIB
    assert host_config["MemorySwap"] == -1          # [DEFAULT]default_memory_swap
    assert host_config["CpuShares"] == 512
    assert made.inspect(uuid)["State"]["Running"] is True
    shown = zun.containers.get(uuid)
    assert shown.memory == "128" and shown.task_state is None


def test_update_of_a_paused_container_works_and_keeps_it_paused(zun, made, db):
    uuid = made.create()
    zun.containers.pause(uuid)
    wait_action(db, uuid, "pause")
    zun.containers.update(uuid, memory="96")
    assert made.inspect(uuid)["HostConfig"]["Memory"] == 96 * MIB
    assert settled(zun, uuid, "Paused")
    zun.containers.unpause(uuid)
    wait_action(db, uuid, "unpause")


def test_update_of_name_and_auto_heal_changes_only_the_row(zun, made):
    uuid = made.create()
    docker_before = made.inspect(uuid)
    view = zun.containers.update(uuid, name="renamed-by-patch", auto_heal=True)
    assert view.name == "renamed-by-patch" and view.auto_heal is True
    assert zun.containers.get("renamed-by-patch").uuid == uuid
    after = made.inspect(uuid)
    assert after["Name"] == f"/zun-{uuid}" and after["Id"] == docker_before["Id"]
    with pytest.raises(zexc.Conflict) as info:
        zun.containers.update(uuid, name="renamed-by-patch")
    assert "already named renamed-by-patch" in str(info.value)


def test_rename_works_up_to_1_13_and_is_406_at_the_latest_version(berth, zun, made):
    uuid = made.create()
    old = berth.client(version="1.13")
    old.containers.rename(uuid, "renamed-old-api")
    assert zun.containers.get(uuid).name == "renamed-old-api"
    assert made.inspect(uuid)["Name"] == f"/zun-{uuid}"
    with pytest.raises(zexc.Conflict):
        old.containers.rename(uuid, "renamed-old-api")
    with pytest.raises(zexc.NotAcceptable) as info:
        zun.containers.rename(uuid, "renamed-new-api")
    assert "PATCH" in str(info.value)
    assert zun.containers.get(uuid).name == "renamed-old-api"


def test_resize_container_answers_with_the_old_values_then_docker_changes(berth, made):
    uuid = made.create()
    with berth.http() as http:
        r = http.post(f"/v1/containers/{uuid}/resize_container", params={"memory": "64"})
        assert r.status_code == 202, r.text
        assert r.json()["memory"] == "512" and r.json()["uuid"] == uuid
        wait_for(lambda: made.inspect(uuid)["HostConfig"]["Memory"] == 64 * MIB, 30,
                 what="Docker's memory limit to become 64 MiB")
        wait_for(lambda: http.get(f"/v1/containers/{uuid}").json()["memory"] == "64", 30,
                 what="the row to say 64")


def test_security_groups_are_recorded_at_1_14_and_gone_from_1_15(berth, zun, made, db):
    uuid = made.create()
    old = berth.client(version="1.14")
    old.containers.add_security_group(uuid, "sg-web")
    _, events = wait_action(db, uuid, "add_security_group")
    assert events == {"compute__add_security_group": "Success"}
    shown = zun.containers.get(uuid)
    assert shown.security_groups == ["sg-web"] and shown.task_state is None
    with pytest.raises(zexc.BadRequest) as info:
        old.containers.add_security_group(uuid, "sg-web")
    assert "already" in str(info.value)

    old.containers.remove_security_group(uuid, "sg-web")
    wait_action(db, uuid, "remove_security_group")
    assert zun.containers.get(uuid).security_groups == []
    with pytest.raises(zexc.BadRequest) as info:
        old.containers.remove_security_group(uuid, "sg-web")
    assert "is not on container" in str(info.value)
    with pytest.raises(zexc.NotAcceptable):
        zun.containers.add_security_group(uuid, "sg-web")


def _osc(berth, *args: str) -> str:  # type: ignore[no-untyped-def]
    out = subprocess.run([bin_path("openstack"), "appcontainer", *args],
                         env=berth.openstack_env(), capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr + out.stdout
    return out.stdout


def test_openstack_cli_pause_unpause_set_restart_kill_rebuild(berth, zun, made, db):
    uuid = made.create()
    assert "accepted" in _osc(berth, "pause", uuid)
    wait_action(db, uuid, "pause")
    assert made.inspect(uuid)["State"]["Paused"] is True
    _osc(berth, "unpause", uuid)
    wait_action(db, uuid, "unpause")
    assert made.inspect(uuid)["State"]["Paused"] is False

    shown = _osc(berth, "set", "--memory", "64", "--cpu", "0.25", uuid)
    assert uuid in shown
    host_config = made.inspect(uuid)["HostConfig"]
    assert host_config["Memory"] == 64 * MIB and host_config["CpuShares"] == 256

    started = made.inspect(uuid)["State"]["StartedAt"]
    assert "accepted" in _osc(berth, "restart", "--timeout", "1", uuid)
    wait_action(db, uuid, "reboot")
    assert made.inspect(uuid)["State"]["StartedAt"] > started

    assert "accepted" in _osc(berth, "kill", "--signal", "SIGKILL", uuid)
    wait_action(db, uuid, "kill")
    assert settled(zun, uuid, "Stopped")

    old_id = made.inspect(uuid)["Id"]
    assert "accepted" in _osc(berth, "rebuild", uuid)
    wait_action(db, uuid, "rebuild")
    assert settled(zun, uuid, "Created")
    assert made.inspect(uuid)["Id"] != old_id



def test_a_failed_rebuild_sets_error_with_a_reason_and_a_new_rebuild_recovers(
        berth_factory, docker_client):
    """Without image validation at the API, an unknown image fails on the agent: the old
    Docker container is gone, the row says Error and why, engine actions are refused
    until a rebuild with a good image brings it back."""
    proc = berth_factory("[api]\nenable_image_validation = false\n").start()
    zun = proc.client()
    made = Made(zun, docker_client)
    try:
        uuid = made.create()
        old_id = made.inspect(uuid)["Id"]
        with database_of(proc) as db:
            zun.containers.rebuild(uuid, image="127.0.0.1:5000/berth-test/nope:latest")
            action, events = wait_action(db, uuid, "rebuild")
            assert action.message == "Error"
            assert events == {"compute__do_container_rebuild": "Error"}
            shown = zun.containers.get(uuid)
            assert shown.status == "Error" and shown.task_state is None
            assert "Rebuild failed" in shown.status_reason
            assert "nope" in shown.status_reason
            with pytest.raises(docker.errors.NotFound):
                docker_client.api.inspect_container(old_id)
            with pytest.raises(zexc.BadRequest) as info:
                zun.containers.restart(uuid, 1)
            assert "Rebuild it first" in str(info.value)

            zun.containers.rebuild(uuid, image=REGISTRY_IMAGE)
            wait_action(db, uuid, "rebuild", count=2)
            assert settled(zun, uuid, "Created")
            assert zun.containers.get(uuid).status_reason is None
            assert made.inspect(uuid)["State"]["Status"] == "created"
    finally:
        made.cleanup()
