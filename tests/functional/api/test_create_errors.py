"""Bad requests against a real ``berth serve``: each gets the right status and Zun's
error envelope naming the cause, and leaves nothing behind (no row, no Docker
container)."""

from __future__ import annotations

import subprocess
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import docker
import httpx
import pytest
from support.berth_proc import REGISTRY, TEST_IMAGE, BerthProcess, bin_path, wait_for
from zunclient import exceptions as zun_exc

pytestmark = pytest.mark.functional

QUICK_STOP = ["sh", "-c", 'trap "exit 0" TERM; sleep 300 & wait']
SETTLE = 90.0


def unique(prefix: str) -> str:
    return f"{prefix}-{uuidlib.uuid4().hex[:8]}"


@pytest.fixture
def http(berth: BerthProcess) -> Iterator[httpx.Client]:
    with berth.http() as client:
        yield client


@pytest.fixture(autouse=True)
def _berth_log(berth: BerthProcess) -> Iterator[None]:
    """berth's log during the test, printed at teardown (shown only on failure)."""
    start = len(berth.log_text())
    yield
    print("---- berth serve log during this test ----")
    print(berth.log_text()[start:][-12000:])


class Leftovers:
    """Snapshot of what exists (rows in every project, Docker containers of this berth)
    to prove a failed request added nothing."""

    def __init__(self, berth: BerthProcess, http: httpx.Client,
                 docker_client: docker.DockerClient) -> None:
        self.berth, self.http, self.docker = berth, http, docker_client
        self.rows, self.containers = self.snapshot()

    def snapshot(self) -> tuple[set[str], set[str]]:
        resp = self.http.get("/v1/containers", params={"all_projects": "True"})
        assert resp.status_code == 200, resp.text
        rows = {c["uuid"] for c in resp.json()["containers"]}
        found = self.docker.containers.list(
            all=True, ignore_removed=True, filters={"label": f"berth.host={self.berth.host}"})
        return rows, {c.id for c in found}

    def assert_nothing_new(self) -> None:
        rows, found = self.snapshot()
        assert rows - self.rows == set(), "a failed request left a row"
        assert found - self.containers == set(), "a failed request left a Docker container"


@pytest.fixture
def leftovers(berth: BerthProcess, http: httpx.Client,
              docker_client: docker.DockerClient) -> Leftovers:
    return Leftovers(berth, http, docker_client)


@pytest.fixture
def made(berth: BerthProcess, http: httpx.Client,
         docker_client: docker.DockerClient) -> Iterator[list[str]]:
    """uuids of containers a test made; force-deleted at teardown, then removed from
    Docker by label if the API could not."""
    uuids: list[str] = []
    yield uuids
    for uuid in uuids:
        try:
            http.delete(f"/v1/containers/{uuid}", params={"force": "True"})
            wait_for(lambda u=uuid: http.get(f"/v1/containers/{u}").status_code == 404,
                     30, 0.2, what=f"{uuid} deleted")
        except Exception as err:  # noqa: BLE001 - teardown goes on
            print(f"cleanup of {uuid} through the API failed: {err}")
        for c in docker_client.containers.list(
                all=True, ignore_removed=True, filters={"label": f"berth.container.uuid={uuid}"}):
            c.remove(force=True)


def the_error(resp: httpx.Response, status: int) -> dict[str, Any]:
    """The one error of Zun's envelope, after checking its shape and request id."""
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert len(body["errors"]) == 1, body
    err = body["errors"][0]
    assert err["status"] == status
    assert err["code"].startswith("container.")
    assert err["request_id"] == resp.headers["x-openstack-request-id"]
    assert err["title"] and err["detail"]
    return err


def post(http: httpx.Client, body: Any, path: str = "/v1/containers", **kw: Any
         ) -> httpx.Response:
    return http.post(path, json=body, **kw)


def body(**fields: Any) -> dict[str, Any]:
    return {"image": TEST_IMAGE, "name": unique("err"), "command": QUICK_STOP,
            "image_pull_policy": "ifnotpresent", **fields}


def wait_status(http: httpx.Client, uuid: str, *statuses: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        resp = http.get(f"/v1/containers/{uuid}")
        assert resp.status_code == 200, resp.text
        row = resp.json()
        return row if row["status"] in statuses and row["task_state"] is None else None
    row = wait_for(reached, SETTLE, 0.2, what=f"{uuid} in {statuses}")
    assert isinstance(row, dict)
    return row


# -- validation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("memory", [-5, "abc"])
def test_bad_memory_is_400_naming_memory(http: httpx.Client, leftovers: Leftovers,
                                         memory: Any) -> None:
    err = the_error(post(http, body(memory=memory), params={"run": "true"}), 400)
    assert "memory" in err["title"]
    assert str(memory) in err["title"]
    leftovers.assert_nothing_new()


def test_zunclient_shows_the_validation_message(zun: Any, leftovers: Leftovers) -> None:
    with pytest.raises(zun_exc.BadRequest) as info:
        zun.containers.run(name=unique("err"), image=TEST_IMAGE, memory=-5,
                           command=QUICK_STOP)
    assert "memory" in str(info.value) and "-5" in str(info.value)
    leftovers.assert_nothing_new()


def test_malformed_image_name_is_400(http: httpx.Client, leftovers: Leftovers) -> None:
    err = the_error(post(http, body(image="UPPER/Case")), 400)
    assert "UPPER/Case" in err["title"]
    leftovers.assert_nothing_new()


def test_image_missing_from_its_registry_is_400_at_create(
        http: httpx.Client, leftovers: Leftovers) -> None:
    image = f"{REGISTRY}/berth-test/does-not-exist:latest"
    err = the_error(post(http, body(image=image), params={"run": "true"}), 400)
    assert err["code"] == "container.image-not-found"
    assert image in err["title"]
    leftovers.assert_nothing_new()


def test_body_that_is_not_json_is_400(http: httpx.Client, leftovers: Leftovers) -> None:
    resp = http.post("/v1/containers", content=b'{"image": ',
                     headers={"Content-Type": "application/json"})
    err = the_error(resp, 400)
    assert "JSON" in err["title"]
    leftovers.assert_nothing_new()


def test_wrong_content_type_is_415(http: httpx.Client, leftovers: Leftovers) -> None:
    resp = http.post("/v1/containers", content=f'{{"image": "{TEST_IMAGE}"}}'.encode(),
                     headers={"Content-Type": "text/plain"})
    err = the_error(resp, 415)
    assert "application/json" in err["title"]
    leftovers.assert_nothing_new()


def test_unsupported_microversion_is_406(http: httpx.Client, leftovers: Leftovers) -> None:
    resp = post(http, body(), headers={"OpenStack-API-Version": "container 1.99"})
    err = the_error(resp, 406)
    assert err["title"] == "Requested microversion is unsupported"
    assert "1.40" in err["detail"]
    leftovers.assert_nothing_new()


# -- unknown containers, wrong state -----------------------------------------------------------

def test_unknown_uuid_is_404_for_show_and_delete(http: httpx.Client,
                                                 leftovers: Leftovers) -> None:
    ident = str(uuidlib.uuid4())
    for resp in (http.get(f"/v1/containers/{ident}"), http.delete(f"/v1/containers/{ident}")):
        err = the_error(resp, 404)
        assert err["code"] == "container.container-not-found"
        assert ident in err["title"]
    leftovers.assert_nothing_new()


def test_delete_of_a_running_container_is_409_saying_how(
        berth: BerthProcess, http: httpx.Client, docker_client: docker.DockerClient,
        made: list[str]) -> None:
    resp = post(http, body(), params={"run": "true"})
    assert resp.status_code == 202, resp.text
    uuid = resp.json()["uuid"]
    made.append(uuid)
    wait_status(http, uuid, "Running")

    err = the_error(http.delete(f"/v1/containers/{uuid}"), 409)
    assert err["code"] == "container.invalid-state-exception"
    assert "Running" in err["title"]
    assert "Stop it first" in err["title"]
    assert "--stop" in err["title"] and "--force" in err["title"]
    # What a user of the OpenStack client reads.
    proc = subprocess.run([bin_path("openstack"), "appcontainer", "delete", uuid],
                          env=berth.openstack_env(), capture_output=True, text=True,
                          timeout=120, check=False)
    out = proc.stdout + proc.stderr
    assert "HTTP 409" in out and "--stop or --force" in out, out
    assert wait_status(http, uuid, "Running")["status"] == "Running"
    assert docker_client.api.inspect_container(f"zun-{uuid}")["State"]["Running"] is True


# -- unversioned paths ---------------------------------------------------------------------------

def test_unversioned_paths_behave_as_v1(http: httpx.Client, leftovers: Leftovers) -> None:
    v1 = http.get("/v1/containers", params={"all_projects": "True"})
    bare = http.get("/containers", params={"all_projects": "True"})
    assert bare.status_code == v1.status_code == 200
    assert [c["uuid"] for c in bare.json()["containers"]] == \
        [c["uuid"] for c in v1.json()["containers"]]
    assert bare.headers["openstack-api-version"] == "container 1.40"
    err = the_error(post(http, body(memory=-5), path="/containers"), 400)
    assert "memory" in err["title"]
    ident = str(uuidlib.uuid4())
    assert the_error(http.get(f"/containers/{ident}"), 404)["code"] == \
        "container.container-not-found"
    leftovers.assert_nothing_new()


# -- an image that cannot be checked offline -------------------------------------------------

def test_image_on_an_unreachable_registry_is_accepted_then_fails_saying_why(
        http: httpx.Client, docker_client: docker.DockerClient, made: list[str]) -> None:
    # A registry that cannot be reached (here one on a loopback port that refuses,
    # so that nothing leaves the machine, as Docker Hub would make the engine do): the
    # API cannot tell whether the image exists, so it accepts the request; the pull
    # fails on the node.
    image = f"127.0.0.1:1/berth-test/nonexistent-{uuidlib.uuid4().hex[:6]}"
    resp = post(http, body(image=image), params={"run": "true"})
    assert resp.status_code == 202, resp.text
    uuid = resp.json()["uuid"]
    made.append(uuid)
    row = wait_status(http, uuid, "Error")
    reason = row["status_reason"] or ""
    assert image in reason
    assert "pull" in reason.lower()
    assert "image_pull_policy" in reason or "registry" in reason, reason
    assert docker_client.containers.list(
        all=True, ignore_removed=True, filters={"label": f"berth.container.uuid={uuid}"}) == []
    # Error holds no resources (usage counts every row but Error/Deleted); the row
    # can be deleted without stop or force.
    resp = http.delete(f"/v1/containers/{uuid}")
    assert resp.status_code == 204, resp.text
    wait_for(lambda: http.get(f"/v1/containers/{uuid}").status_code == 404, SETTLE, 0.2,
             what=f"{uuid} deleted")


def test_run_whose_start_fails_is_error_saying_why_and_keeps_the_container(
        http: httpx.Client, made: list[str], docker_client: docker.DockerClient) -> None:
    """docker create succeeds, docker start fails (no such executable). The start was
    begun beside the writes that record the create (flows.create): its failure must
    still reach the row, the action's events and the Docker container as before."""
    resp = post(http, body(command=["/no/such/binary"]), params={"run": "true"})
    assert resp.status_code == 202, resp.text
    uuid = resp.json()["uuid"]
    made.append(uuid)
    # Error with berth's reason; the state sync may then show what Docker says, as
    # Zun does (model.md 3.1: Docker's error text on a never-started container ->
    # Created, the text as the reason). Either way the reason names the cause.
    row = wait_status(http, uuid, "Error", "Created", "Running")
    assert row["status"] in ("Error", "Created"), row
    assert "/no/such/binary" in row["status_reason"], row
    # the Docker container stays (its state says why); start may be retried from Error
    [kept] = docker_client.containers.list(
        all=True, ignore_removed=True, filters={"label": f"berth.container.uuid={uuid}"})
    assert kept.status == "created"
    req = resp.headers["x-openstack-request-id"]
    action = http.get(f"/v1/containers/{uuid}/container_actions/{req}").json()
    events = {e["event"]: e["result"] for e in action["events"]}
    assert events == {"compute__do_container_create": "Success",
                      "compute__do_container_start": "Error"}, action
    assert action["finish_time"] is not None and action["message"] == "Error", action
