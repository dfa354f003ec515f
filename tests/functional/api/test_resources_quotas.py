"""Quotas and quota classes end to end, and their enforcement at container create:
python-zunclient (Python API and the ``zun`` CLI) against the shared ``berth serve``.
Each test works in a project of its own, so that its quota touches nobody else."""

from __future__ import annotations

import re
import subprocess
import threading
import uuid as uuidlib
from typing import Any

import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, bin_path, wait_for
from support.lifecycle import database_of
from zunclient import exceptions as zexc

DEFAULTS = {"containers": 40, "memory": 51200, "cpu": 20, "disk": 100}


def zun_cli(proc: BerthProcess, *args: str) -> str:
    done = subprocess.run([bin_path("zun"), *args], check=False, env=proc.zun_cli_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"zun {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture
def project(berth, zun):  # type: ignore[no-untyped-def]
    """A fresh project id; its quota and containers are removed afterwards."""
    name = f"qproj-{uuidlib.uuid4().hex[:8]}"
    yield name
    member = berth.client(token=f"quser:{name}")
    for c in member.containers.list():
        try:
            zun.containers.delete(c.uuid, force=True)
        except zexc.NotFound:
            pass
    zun.quotas.delete(name)


def _berth_containers(docker_client: Any, proc: BerthProcess) -> list[Any]:
    return docker_client.containers.list(all=True, ignore_removed=True,
                                         filters={"label": f"berth.host={proc.host}"})


def _limits(quota: Any) -> dict[str, int]:
    return {k: getattr(quota, k) for k in DEFAULTS}


def test_quota_get_shows_the_defaults_and_usages_is_a_real_boolean(berth, zun, project):
    assert _limits(zun.quotas.get(project)) == DEFAULTS
    assert _limits(zun.quotas.defaults(project)) == DEFAULTS
    with_usage = zun.quotas.get(project, usages=True)
    assert with_usage.containers == {"limit": 40, "in_use": 0}
    assert with_usage.cpu == {"limit": 20, "in_use": 0}
    # Zun took usages=False as true; here it means no usages.
    with berth.http() as http:
        plain = http.get(f"/v1/quotas/{project}?usages=False")
        bad = http.get(f"/v1/quotas/{project}?usages=perhaps")
    assert plain.json() == DEFAULTS
    assert bad.status_code == 400 and "usages" in bad.json()["errors"][0]["title"]


def test_quota_update_and_delete_through_the_zun_cli(berth, zun, project):
    out = zun_cli(berth, "quota-update", "--containers", "10", "--memory", "2048",
                  "--cpu", "4", "--disk", "20", project)
    assert "2048" in out
    assert _limits(zun.quotas.get(project)) == \
        {"containers": 10, "memory": 2048, "cpu": 4, "disk": 20}
    zun.quotas.update(project, containers=-1)
    assert zun.quotas.get(project).containers == -1
    zun_cli(berth, "quota-delete", project)
    assert _limits(zun.quotas.get(project)) == DEFAULTS


def test_quota_class_default_sets_the_defaults_of_every_project(berth, zun, project):
    try:
        updated = zun.quota_classes.update("default", containers=45)
        assert updated.containers == 45
        assert zun.quota_classes.get("default").containers == 45
        assert zun.quotas.defaults(project).containers == 45
        assert zun.quotas.get(project).containers == 45
        zun.quotas.update(project, containers=3)         # the project's own limit wins
        assert zun.quotas.get(project).containers == 3
    finally:
        zun.quota_classes.update("default", containers=40)
    assert re.search(r"\|\s*containers\s*\|\s*40\s*\|", zun_cli(berth, "quota-class-get",
                                                                 "default"))
    other = zun.quota_classes.get("gold")          # a class without rows: the defaults
    assert _limits(other) == DEFAULTS


def test_a_create_over_the_container_quota_is_refused_and_leaves_nothing(
        berth, zun, project, docker_client):
    zun.quotas.update(project, containers=1)
    member = berth.client(token=f"quser:{project}")
    first = member.containers.create(image=TEST_IMAGE, command=["sleep", "300"])
    wait_for(lambda: member.containers.get(first.uuid).status == "Created", 60,
             what="the first container to be Created")
    in_docker = len(_berth_containers(docker_client, berth))
    with pytest.raises(zexc.Forbidden) as refused:
        member.containers.create(image=TEST_IMAGE, command=["sleep", "300"], name="second")
    message = str(refused.value)
    assert "Quota exceeded for resources: ['containers']" in message
    assert "quota-update" in message
    assert [c.uuid for c in member.containers.list()] == [first.uuid]
    assert len(_berth_containers(docker_client, berth)) == in_docker
    usage = zun.quotas.get(project, usages=True)
    assert usage.containers == {"limit": 1, "in_use": 1}
    assert usage.memory["in_use"] == 512               # the default memory counts


def test_concurrent_creates_never_exceed_the_container_quota(berth, zun, project):
    """Issue 24 item 1: 50 concurrent creates under a quota of 10 made 16 rows."""
    zun.quotas.update(project, containers=10)
    body = {"image": TEST_IMAGE, "command": ["sleep", "300"], "cpu": 0.1, "memory": 16}
    barrier = threading.Barrier(50)
    statuses: list[int] = []
    lock = threading.Lock()

    def create() -> None:
        with berth.http(token=f"quser:{project}") as http:
            barrier.wait()
            code = http.post("/v1/containers", json=body).status_code
        with lock:
            statuses.append(code)

    threads = [threading.Thread(target=create) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(statuses) == [202] * 10 + [403] * 40
    member = berth.client(token=f"quser:{project}")
    assert len(member.containers.list()) == 10
    assert zun.quotas.get(project, usages=True).containers == {"limit": 10, "in_use": 10}


def test_default_cpu_counts_against_the_cpu_quota(berth, zun, project):
    """Zun did not count the cpu a container gets by default; berth does."""
    zun.quotas.update(project, cpu=1)
    member = berth.client(token=f"quser:{project}")
    member.containers.create(image=TEST_IMAGE, command=["sleep", "300"], cpu=0.5)
    with pytest.raises(zexc.Forbidden) as refused:    # the default cpu is 1.0
        member.containers.create(image=TEST_IMAGE, command=["sleep", "300"])
    assert "['cpu']" in str(refused.value)
    assert "0.5 in use + 1 requested > limit 1" in str(refused.value)
    small = member.containers.create(image=TEST_IMAGE, command=["sleep", "300"], cpu=0.5)
    assert small.status in ("Creating", "Created", "Running")
    assert zun.quotas.get(project, usages=True).cpu == {"limit": 1, "in_use": 1}


def test_deleting_a_container_gives_its_quota_back(berth, zun, project):
    zun.quotas.update(project, containers=1)
    member = berth.client(token=f"quser:{project}")
    c = member.containers.create(image=TEST_IMAGE, command=["sleep", "300"])
    wait_for(lambda: member.containers.get(c.uuid).status == "Created", 60,
             what="the first container to be Created")
    member.containers.delete(c.uuid)
    wait_for(lambda: not member.containers.list(), 60, what="the first container to go")
    again = member.containers.create(image=TEST_IMAGE, command=["sleep", "300"])
    assert again.uuid != c.uuid


def test_quota_policies_and_bad_input(berth, zun, project):
    member = berth.client(token=f"quser:{project}")
    assert _limits(member.quotas.get(project)) == DEFAULTS       # owners may read
    with pytest.raises(zexc.Forbidden):
        member.quotas.get("someone-else")
    with pytest.raises(zexc.Forbidden):
        member.quotas.update(project, containers=100)
    with pytest.raises(zexc.Forbidden):
        member.quota_classes.get("default")
    with berth.http() as http:
        cases = [http.put(f"/v1/quotas/{project}", json={"containers": "many"}),
                 http.put(f"/v1/quotas/{project}", json={"containers": -2}),
                 http.put(f"/v1/quotas/{project}", json={"gpus": 1}),
                 http.put(f"/v1/quotas/{project}", json=[1]),
                 http.put("/v1/quota_classes/default", json={"cpu": True})]
        not_json = http.put(f"/v1/quotas/{project}", content=b"containers=1",
                            headers={"Content-Type": "text/plain"})
    for resp in cases:
        assert resp.status_code == 400, resp.text
    assert "containers" in cases[0].json()["errors"][0]["title"]
    assert "gpus" in cases[2].json()["errors"][0]["title"]
    assert not_json.status_code == 415
    assert _limits(zun.quotas.get(project)) == DEFAULTS           # nothing was saved
    with database_of(berth) as db:
        from berth.db import quotas as db_quotas

        assert db_quotas.project_limits(db, project) == {}
