"""The error envelope and the middleware, through the real application on a real
SQLite database. No Docker: the scheduler either refuses (NoValidHost) or picks
``node1``, whose "agent" is a recorder registered on the in-process transport."""

from __future__ import annotations

import contextlib
import shutil
import uuid as uuidlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import fastapi
import pytest
from fastapi.testclient import TestClient

from berth.api import errors
from berth.api.app import create_app
from berth.api.middleware import BerthMiddleware
from berth.api.state import ApiSettings, ApiState
from berth.common import exceptions as exc
from berth.db import actions, containers, migrate, nodes
from berth.db.engine import Database
from berth.rpc.client import ComputeAPI
from berth.rpc.inproc import InProcessTransport
from berth.runtime import base as rt
from berth.scheduler.base import RequestSpec, Selection

V = {"OpenStack-API-Version": "container 1.40"}
ADMIN = {"X-Auth-Token": "admin", **V}
NODE = "node1"


class Scheduler:
    """Refuses (NoValidHost) until ``host`` is set."""

    def __init__(self) -> None:
        self.host: str | None = None

    def select_destination(self, spec: RequestSpec, exclude: frozenset[str] = frozenset()
                           ) -> Selection:
        if self.host is None:
            raise exc.NoValidHost("There are not enough hosts available. test-node "
                                  "(ResourceFilter: memory 512 MiB > free 0 MiB)")
        return Selection(host=self.host)

    def room_check(self, selection: Selection, spec: RequestSpec, *, best: bool = True,
                   lock: Callable[[Any], bool] | None = None) -> Callable[[Any], None]:
        return lambda conn: None

    def holding(self, selection: Selection, spec: RequestSpec
                ) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def placed(self, selection: Selection, spec: RequestSpec) -> None:
        return None


class Agent:
    """What the API casts and calls on node1; ``images`` answers image_search."""

    RPC_METHODS = frozenset({"container_create", "container_delete", "container_start",
                             "container_stop", "container_show", "image_search"})

    def __init__(self) -> None:
        self.casts: list[tuple[str, dict[str, Any]]] = []
        self.images: list[dict[str, Any]] = [{"name": "x"}]

    def __getattr__(self, method: str):  # type: ignore[no-untyped-def]
        if method not in self.RPC_METHODS:
            raise AttributeError(method)

        def record(context: Any, **kwargs: Any) -> Any:
            if method == "image_search":
                return self.images
            self.casts.append((method, kwargs))
            return kwargs.get("container")
        return record


class World:
    def __init__(self, tmp_path: Path, template: Path) -> None:
        shutil.copy(template, tmp_path / "berth.sqlite")
        url = f"sqlite:///{tmp_path / 'berth.sqlite'}"
        self.db = Database(url)
        self.transport = InProcessTransport(call_workers=2)
        self.agent = Agent()
        self.server = self.transport.serve(NODE, self.agent)
        self.server.start()
        self.scheduler = Scheduler()
        compute = ComputeAPI(self.transport,
                             lambda h: h in nodes.up_compute_hosts(self.db, 180),
                             call_timeout=5)
        self.state = ApiState(db=self.db, compute=compute, scheduler=self.scheduler,
                              settings=ApiSettings())
        self.client = TestClient(create_app(self.state), base_url="http://berth.test")

    def agent_up(self) -> None:
        nodes.report_service_up(self.db, NODE, nodes.COMPUTE_BINARY, "nova")
        self.scheduler.host = NODE

    def rows(self) -> list[Any]:
        return containers.list_columns(self.db, ("uuid", "host", "status"), project_id=None,
                                       filters={}, limit=1000)

    def add(self, **values: Any) -> Any:
        values.setdefault("project_id", "admin")
        values.setdefault("status", "Running")
        return containers.create(self.db, values)

    def close(self) -> None:
        self.server.stop()
        self.transport.cleanup()
        self.db.dispose()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated database, copied for each test (migrating takes most of a second)."""
    path = tmp_path_factory.mktemp("template") / "berth.sqlite"
    migrate.upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
def world(tmp_path: Path, template: Path) -> Iterator[World]:
    w = World(tmp_path, template)
    yield w
    w.close()


def the_error(resp: Any, status: int) -> dict[str, Any]:
    """The single error of a Zun envelope, after checking the envelope's shape."""
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    assert list(body) == ["errors"] and len(body["errors"]) == 1
    err = body["errors"][0]
    assert set(err) == {"request_id", "code", "status", "title", "detail", "links"}
    assert err["status"] == status
    assert err["links"] == []
    assert err["code"].startswith("container.")
    assert err["request_id"].startswith("req-")
    assert err["request_id"] == resp.headers["x-openstack-request-id"]
    return err


# -- the envelope -------------------------------------------------------------------------------

def test_unknown_uuid_is_404_in_zuns_envelope(world: World) -> None:
    ident = str(uuidlib.uuid4())
    for method in ("GET", "DELETE"):
        err = the_error(world.client.request(method, f"/v1/containers/{ident}",
                                             headers=ADMIN), 404)
        assert err["code"] == "container.container-not-found"
        assert ident in err["title"] and err["title"] == err["detail"]
    for action in ("start", "stop"):
        the_error(world.client.post(f"/v1/containers/{ident}/{action}", headers=ADMIN), 404)


def test_each_response_has_its_own_request_id(world: World) -> None:
    ids = {the_error(world.client.get(f"/v1/containers/{uuidlib.uuid4()}", headers=ADMIN),
                     404)["request_id"] for _ in range(3)}
    assert len(ids) == 3


def test_unknown_route_and_method_use_the_envelope(world: World) -> None:
    err = the_error(world.client.get("/v1/no-such-thing/x", headers=ADMIN), 404)
    assert "/v1/no-such-thing/x" in err["detail"]
    err = the_error(world.client.put("/v1/containers", headers=ADMIN), 405)
    assert "PUT" in err["detail"]


def test_an_unexpected_error_is_500_without_its_details() -> None:
    app = fastapi.FastAPI()
    errors.install(app)

    @app.get("/v1/boom")
    def boom() -> None:
        raise RuntimeError("secret internals /etc/berth/password")

    @app.get("/v1/driver")
    def driver() -> None:
        raise rt.RuntimeDriverError("docker said something private")

    app.add_middleware(BerthMiddleware)
    client = TestClient(app, raise_server_exceptions=False)
    for path in ("/v1/boom", "/v1/driver"):
        err = the_error(client.get(path), 500)
        assert "private" not in err["detail"] and "secret" not in err["detail"]
        assert "berth's log" in err["detail"]


def test_fastapi_validation_errors_are_400_in_the_envelope() -> None:
    app = fastapi.FastAPI()
    errors.install(app)

    @app.get("/v1/typed")
    def typed(count: int) -> dict[str, int]:
        return {"count": count}

    app.add_middleware(BerthMiddleware)
    err = the_error(TestClient(app).get("/v1/typed?count=many"), 400)
    assert "count" in err["title"]


@pytest.mark.parametrize("error, status", [
    (exc.ContainerNotFound(container="c"), 404),
    (exc.InvalidStateException("x"), 409),
    (exc.ContainerHostNotUp(container="c", host="h"), 409),
    (exc.ImageNotFound("x"), 400),
    (exc.PolicyNotAuthorized(action="a"), 403),
    (exc.UnsupportedMediaType(content_type="text/plain"), 415),
    (exc.NotAcceptable("x"), 406),
    (exc.RPCError(host="h", reason="r"), 503),
    (exc.RPCTimeout(host="h", method="m", timeout=1), 504),
    (rt.RuntimeNotFound("x"), 404),
    (rt.RuntimeConflict("x"), 409),
    (exc.NoValidHost("x"), 500),
    (exc.BerthError("x"), 500),
])
def test_status_of(error: BaseException, status: int) -> None:
    assert errors.status_of(error) == status


def test_rpc_failures_keep_their_message_other_5xx_do_not() -> None:
    resp = errors.berth_error_response("req-1", exc.RPCTimeout(host="h", method="m",
                                                                 timeout=3))
    assert resp.status_code == 504 and b"did not answer m" in resp.body
    hidden = errors.berth_error_response("req-2", exc.ResourcesUnavailable(reason="xyz"))
    assert hidden.status_code == 500 and b"xyz" not in hidden.body


# -- the middleware: versions, unversioned paths ---------------------------------------------

def test_version_headers_on_v1_responses_including_errors(world: World) -> None:
    for resp in (world.client.get("/v1/containers", headers=ADMIN),
                 world.client.get(f"/v1/containers/{uuidlib.uuid4()}", headers=ADMIN)):
        assert resp.headers["openstack-api-version"] == "container 1.40"
        assert resp.headers["openstack-api-minimum-version"] == "container 1.1"
        assert resp.headers["openstack-api-maximum-version"] == "container 1.40"
        assert "OpenStack-API-Version" in resp.headers["vary"]
    no_header = world.client.get("/v1/containers", headers={"X-Auth-Token": "admin"})
    assert no_header.headers["openstack-api-version"] == "container 1.1"
    root = world.client.get("/")
    assert root.status_code == 200 and "openstack-api-version" not in root.headers
    assert root.headers["x-openstack-request-id"].startswith("req-")


@pytest.mark.parametrize("header", ["container 1.99", "container 2.0", "container 1.0"])
def test_unsupported_microversion_is_406(world: World, header: str) -> None:
    resp = world.client.get("/v1/containers", headers={"X-Auth-Token": "admin",
                                                       "OpenStack-API-Version": header})
    err = the_error(resp, 406)
    assert err["title"] == "Requested microversion is unsupported"
    assert "1.1 to 1.40" in err["detail"]


@pytest.mark.parametrize("header", ["container one", "compute 2.1", "container"])
def test_malformed_microversion_is_406(world: World, header: str) -> None:
    resp = world.client.post("/v1/containers", headers={"X-Auth-Token": "admin",
                                                        "OpenStack-API-Version": header},
                             json={"image": "busybox"})
    the_error(resp, 406)
    assert world.rows() == []


def test_unversioned_paths_are_served_as_v1(world: World) -> None:
    row = world.add(name="legacy")
    for path in ("/containers", "/containers/"):
        resp = world.client.get(path, headers=ADMIN)
        assert resp.status_code == 200, resp.text
        assert [c["uuid"] for c in resp.json()["containers"]] == [row.uuid]
        assert resp.headers["openstack-api-version"] == "container 1.40"
    assert world.client.get("/containers/legacy", headers=ADMIN).json()["uuid"] == row.uuid
    err = the_error(world.client.get(f"/containers/{uuidlib.uuid4()}", headers=ADMIN), 404)
    assert err["code"] == "container.container-not-found"


# -- create: bad input leaves nothing ---------------------------------------------------------

def create(world: World, body: Any = None, *, content: bytes | None = None,
           ctype: str | None = "application/json", query: str = "") -> Any:
    headers = dict(ADMIN)
    if ctype is not None:
        headers["Content-Type"] = ctype
    if content is None and body is not None:
        import json

        content = json.dumps(body).encode()
    return world.client.post(f"/v1/containers{query}", headers=headers, content=content)


@pytest.mark.parametrize("memory", [-5, "-5", "abc", 0, "1.5", True, 10 ** 9])
def test_bad_memory_is_400_naming_the_field_and_leaves_no_row(world: World,
                                                              memory: Any) -> None:
    world.agent_up()
    err = the_error(create(world, {"image": "busybox", "memory": memory}), 400)
    assert "memory" in err["title"]
    assert world.rows() == [] and world.agent.casts == []


@pytest.mark.parametrize("body, field", [
    ({"image": "busybox", "cpu": -1}, "cpu"),
    ({"image": "UPPER/Case"}, "UPPER/Case"),
    ({"image": ""}, "image"),
    ({"memory": 64}, "image"),
    ({"image": "busybox", "no_such_field": 1}, "no_such_field"),
    ({"image": "busybox", "image_pull_policy": "sometimes"}, "image_pull_policy"),
    ({"image": "busybox", "environment": ["A=1"]}, "environment"),
])
def test_other_bad_fields_are_400_naming_them(world: World, body: dict[str, Any],
                                              field: str) -> None:
    world.agent_up()
    err = the_error(create(world, body), 400)
    assert field in err["title"]
    assert world.rows() == [] and world.agent.casts == []


@pytest.mark.parametrize("body", [
    {"image": "busybox", "cpu": -1},
    {"image": ""},
    {"memory": 64},
    {"image": "busybox", "no_such_field": 1},
    {"image": "busybox", "image_pull_policy": "sometimes"},
    {"image": "busybox", "environment": ["A=1"]},
    ["image", "busybox"],
])
def test_a_body_its_schema_refuses_has_zuns_schema_code(world: World, body: Any) -> None:
    """Zun answers what its jsonschema layer refuses with schema-validation-error (seen
    against the real Zun 18, tests/compat); a client may key on the code."""
    err = the_error(create(world, body), 400)
    assert err["code"] == "container.schema-validation-error"
    assert world.rows() == []


def test_a_check_made_by_hand_keeps_invalid_parameter_value(world: World) -> None:
    err = the_error(create(world, {"image": "busybox", "command": ["a\u0000b"]}), 400)
    assert err["code"] == "container.invalid-parameter-value"
    assert world.rows() == []


def test_body_that_is_not_json_is_400(world: World) -> None:
    err = the_error(create(world, content=b'{"image": "busybox"'), 400)
    assert "JSON" in err["title"]
    assert world.rows() == []


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", None])
def test_wrong_content_type_is_415(world: World, ctype: str | None) -> None:
    err = the_error(create(world, {"image": "busybox"}, ctype=ctype), 415)
    assert err["code"] == "container.unsupported-media-type"
    assert "application/json" in err["title"]
    assert world.rows() == []


def test_an_image_no_node_can_get_is_400_at_create_and_leaves_no_row(world: World) -> None:
    world.agent_up()
    world.agent.images = []
    err = the_error(create(world, {"image": "127.0.0.1:5000/team/missing:1.0"}), 400)
    assert err["code"] == "container.image-not-found"
    assert "127.0.0.1:5000/team/missing:1.0" in err["title"]
    assert world.rows() == [] and world.agent.casts == []


def test_no_valid_host_is_202_with_the_row_in_error_saying_why(world: World) -> None:
    resp = create(world, {"image": "busybox", "name": "nowhere"})
    assert resp.status_code == 202, resp.text
    view = resp.json()
    assert view["status"] == "Error"
    assert "not enough hosts" in view["status_reason"]
    assert "ResourceFilter" in view["status_reason"]
    [row] = world.rows()
    assert row.host is None and row.status == "Error"
    [action] = actions.list_actions(world.db, row.uuid)
    assert action.action == "create" and action.message == "Error"
    assert action.request_id == resp.headers["x-openstack-request-id"]
    # Never placed: deleting it needs no agent.
    assert world.client.delete(f"/v1/containers/{row.uuid}", headers=ADMIN).status_code == 204
    assert world.rows() == []


def test_a_host_that_went_down_after_scheduling_is_202_in_error_not_500(
        world: World) -> None:
    """The scheduler chose node1 from a view taken before its agent's heartbeat lapsed
    (R3 found this after a database outage): the image check that asks node1 finds it
    down, and the create fails as unscheduled instead of answering 500."""
    world.scheduler.host = NODE          # chosen, but no heartbeat: the agent is down
    resp = create(world, {"image": "busybox", "name": "late"})
    assert resp.status_code == 202, resp.text
    view = resp.json()
    assert view["status"] == "Error" and "is down" in view["status_reason"]
    assert world.agent.casts == []


def test_accepted_create_casts_to_the_chosen_node(world: World) -> None:
    world.agent_up()
    resp = create(world, {"image": "busybox", "name": "ok", "command": ["sleep", "1"]},
                  query="?run=true")
    assert resp.status_code == 202, resp.text
    view = resp.json()
    assert view["status"] == "Creating" and view["host"] == NODE
    assert resp.headers["location"].endswith(f"/v1/containers/{view['uuid']}")
    [(method, kwargs)] = world.agent.casts
    assert method == "container_create" and kwargs["run"] is True
    assert kwargs["container"]["uuid"] == view["uuid"]


# -- state checks -------------------------------------------------------------------------------

def test_ambiguous_name_is_409(world: World) -> None:
    world.add(name="twin")
    world.add(name="twin")
    err = the_error(world.client.get("/v1/containers/twin", headers=ADMIN), 409)
    assert "uuid" in err["title"]


def test_delete_of_a_running_container_is_409_saying_how_to_proceed(world: World) -> None:
    world.agent_up()
    row = world.add(name="busy", host=NODE, container_id="abc")
    err = the_error(world.client.delete("/v1/containers/busy", headers=ADMIN), 409)
    assert err["code"] == "container.invalid-state-exception"
    assert "Running" in err["title"]
    assert "--stop" in err["title"] and "--force" in err["title"]
    assert containers.get_by_uuid(world.db, row.uuid).status == "Running"
    assert world.agent.casts == []


def test_delete_while_a_task_runs_is_409_unless_forced(world: World) -> None:
    world.agent_up()
    row = world.add(name="t", host=NODE, status="Stopped", task_state="container_stopping")
    err = the_error(world.client.delete("/v1/containers/t", headers=ADMIN), 409)
    assert err["code"] == "container.task-in-progress"
    assert "container_stopping" in err["title"]
    resp = world.client.delete("/v1/containers/t?force=true", headers=ADMIN)
    assert resp.status_code == 204, resp.text
    assert [m for m, _ in world.agent.casts] == ["container_delete"]
    assert containers.get_by_uuid(world.db, row.uuid).status == "Deleting"


def test_acting_on_a_container_whose_agent_is_down_is_409_and_changes_nothing(
        world: World) -> None:
    row = world.add(name="orphan", host="gone-node", container_id="abc")
    err = the_error(world.client.delete("/v1/containers/orphan?stop=true", headers=ADMIN),
                    409)
    assert err["code"] == "container.container-host-not-up"
    assert "gone-node" in err["title"]
    err = the_error(world.client.post("/v1/containers/orphan/stop", headers=ADMIN), 409)
    assert containers.get_by_uuid(world.db, row.uuid).status == "Running"
    assert actions.list_actions(world.db, row.uuid) == []


@pytest.mark.parametrize("status, action", [("Running", "start"), ("Stopped", "stop"),
                                            ("Creating", "start")])
def test_start_and_stop_in_the_wrong_state_are_409(world: World, status: str,
                                                   action: str) -> None:
    world.agent_up()
    world.add(name="c", host=NODE, status=status)
    err = the_error(world.client.post(f"/v1/containers/c/{action}", headers=ADMIN), 409)
    assert f"Cannot {action}" in err["title"]
    assert world.agent.casts == []


def test_another_projects_container_is_not_found(world: World) -> None:
    row = world.add(name="mine", project_id="p1")
    other = {"X-Auth-Token": "bob:p2", **V}
    the_error(world.client.get(f"/v1/containers/{row.uuid}", headers=other), 404)
    the_error(world.client.delete(f"/v1/containers/{row.uuid}", headers=other), 404)
    owner = {"X-Auth-Token": "alice:p1", **V}
    assert world.client.get(f"/v1/containers/{row.uuid}", headers=owner).status_code == 200


@pytest.mark.parametrize("query, code", [
    ("colour=red", "container.invalid-value"),
    ("sort_key=bogus", "container.invalid-parameter-value"),
])
def test_a_bad_list_parameter_has_zuns_code(world: World, query: str, code: str) -> None:
    """The codes the real Zun 18 answers (tests/compat): an unknown filter is its
    invalid-value, a bad sort key a check made by hand."""
    err = the_error(world.client.get(f"/v1/containers?{query}", headers=ADMIN), 400)
    assert err["code"] == code


def test_an_unknown_registry_list_filter_has_zuns_code(world: World) -> None:
    err = the_error(world.client.get("/v1/registries?colour=red", headers=ADMIN), 400)
    assert err["code"] == "container.invalid-value"


@pytest.mark.parametrize("query, needle", [
    ("limit=0", "limit"), ("limit=x", "limit"), ("sort_dir=up", "sort_dir"),
    ("sort_key=bogus", "sort_key"), ("colour=red", "colour"),
    (f"marker={uuidlib.UUID(int=7)}", str(uuidlib.UUID(int=7))),
])
def test_bad_list_parameters_are_4xx_naming_them(world: World, query: str,
                                                 needle: str) -> None:
    resp = world.client.get(f"/v1/containers?{query}", headers=ADMIN)
    assert resp.status_code in (400, 404)
    err = the_error(resp, resp.status_code)
    assert needle in err["title"]
