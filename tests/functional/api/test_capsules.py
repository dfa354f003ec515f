"""Capsules end to end (issues 17 and 19) on a real ``berth serve``, each test on both
capsule drivers (the real Docker engine, and containerd's CRI), driven by
python-zunclient's Python API, the ``zun`` CLI and ``openstack capsule``: members that
share a network, init containers that run first and in order, a failing init
container, a member killed behind berth's back, bad templates and quotas, each
leaving nothing behind."""

from __future__ import annotations

import json
import subprocess
import tempfile
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import docker
import pytest
import yaml
from support.berth_proc import TEST_IMAGE, BerthProcess, bin_path, wait_for

pytestmark = pytest.mark.functional

SETTLE = 90.0
LATEST = "container 1.40"
QUICK_STOP = ["sh", "-c", 'trap "exit 0" TERM; sleep 300 & wait']
SERVE = "echo served-by-web > /tmp/index.html; exec httpd -f -p 8080 -h /tmp"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuidlib.uuid4().hex[:8]}"


def member(name: str, command: list[str], **extra: Any) -> dict[str, Any]:
    return {"image": TEST_IMAGE, "name": name, "imagePullPolicy": "IfNotPresent",
            "command": command, "resources": {"requests": {"cpu": 0.1, "memory": 32}},
            **extra}


def template(name: str, containers: list[dict[str, Any]],
             inits: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": containers, **spec}
    if inits is not None:
        body["initContainers"] = inits
    return {"kind": "capsule", "capsuleVersion": "beta",
            "metadata": {"name": name, "labels": {"test": "capsules"}}, "spec": body}


class Capsules:
    """Capsules a test made, deleted at teardown; then anything left in Docker."""

    def __init__(self, berth: BerthProcess, docker_client: docker.DockerClient) -> None:
        self.berth, self.docker = berth, docker_client
        self.uuids: list[str] = []

    def create(self, tpl: Any, token: str = "admin") -> dict[str, Any]:
        with self.berth.http(token=token, version=LATEST) as http:
            resp = http.post("/v1/capsules/", json={"template": tpl})
        assert resp.status_code == 202, resp.text
        shown: dict[str, Any] = resp.json()
        self.uuids.append(shown["uuid"])
        return shown

    def show(self, uuid: str, version: str = LATEST) -> dict[str, Any] | None:
        with self.berth.http(version=version) as http:
            resp = http.get(f"/v1/capsules/{uuid}")
        if resp.status_code == 404:
            return None
        assert resp.status_code == 200, resp.text
        return dict(resp.json())

    def settled(self, uuid: str) -> dict[str, Any]:
        def done() -> dict[str, Any] | None:
            shown = self.show(uuid)
            assert shown is not None
            return shown if shown["status"] != "Creating" else None
        found = wait_for(done, SETTLE, 0.2, what=f"capsule {uuid} to settle")
        assert isinstance(found, dict)
        return found

    def delete(self, uuid: str) -> None:
        with self.berth.http() as http:
            assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
        wait_for(lambda: self.show(uuid) is None, SETTLE, 0.2, what=f"{uuid} deleted")

    def docker_of(self, shown: dict[str, Any]) -> list[Any]:
        """Every Docker container of the capsule: its sandbox and its members'."""
        uuids = [shown["uuid"], *(m["uuid"] for m in shown["containers"]),
                 *(m["uuid"] for m in shown["init_containers"])]
        return [c for u in uuids for c in self.docker.containers.list(
            all=True, ignore_removed=True, filters={"label": f"berth.container.uuid={u}"})]

    # -- what a test asks of the engine itself (the cri driver's: CriCapsules) --

    def left_in_engine(self, shown: dict[str, Any]) -> list[Any]:
        """What the engine still holds of the capsule."""
        return self.docker_of(shown)

    def times(self, m: dict[str, Any]) -> tuple[Any, Any]:
        """When the member started and finished, by the engine's clock."""
        state = self.docker.api.inspect_container(f"zun-{m['uuid']}")["State"]
        return state["StartedAt"], state["FinishedAt"]

    def kill(self, m: dict[str, Any]) -> None:
        """SIGKILL the member behind berth's back."""
        self.docker.containers.get(f"zun-{m['uuid']}").kill()

    def cleanup(self) -> None:
        for uuid in self.uuids:
            shown = self.show(uuid)
            if shown is None:
                continue
            try:
                self.delete(uuid)
            except Exception as err:  # noqa: BLE001 - teardown goes on
                print(f"cleanup of capsule {uuid} failed: {err}")
            for c in self.docker_of(shown):
                c.remove(force=True)


class CriCapsules(Capsules):
    """Capsules on a berth with ``capsule_driver = cri``: the engine is containerd."""

    def __init__(self, berth: BerthProcess, docker_client: docker.DockerClient,
                 pods: Any) -> None:
        super().__init__(berth, docker_client)
        self.pods = pods

    def left_in_engine(self, shown: dict[str, Any]) -> list[Any]:
        from support.containerd import left_in_containerd

        return left_in_containerd(self.pods, self.berth.host, shown["uuid"])

    def _member_id(self, m: dict[str, Any]) -> str:
        found = [c.id for c in self.pods.host_members(self.berth.host) if c.uuid == m["uuid"]]
        assert found, f"containerd has no container of member {m['uuid']}"
        return str(found[-1])

    def times(self, m: dict[str, Any]) -> tuple[Any, Any]:
        state = self.pods.member(self._member_id(m)).state
        return state.started_at, state.finished_at

    def kill(self, m: dict[str, Any]) -> None:
        from support.containerd import SOCKET

        subprocess.run(["ctr", "--address", SOCKET, "-n", "k8s.io", "tasks", "kill", "-s",
                        "SIGKILL", self._member_id(m)], check=True, capture_output=True,
                       timeout=30)


@pytest.fixture(params=["docker", "cri"])
def capsules(request: pytest.FixtureRequest, docker_client: docker.DockerClient
             ) -> Iterator[Capsules]:
    """Capsules on a berth of either capsule driver, and what its engine still holds of
    a capsule (Docker containers, or containerd's pods, members, cgroups, logs)."""
    if request.param == "docker":
        made = Capsules(request.getfixturevalue("berth"), docker_client)
    else:
        made = CriCapsules(request.getfixturevalue("cri_berth"), docker_client,
                           request.getfixturevalue("pods"))
    yield made
    made.cleanup()


def usage(berth: BerthProcess) -> dict[str, Any]:
    with berth.http() as http:
        return dict(http.get("/v1/hosts").json()["hosts"][0])


def settled_mem_used(berth: BerthProcess) -> int:
    """The host's published memory use once it stops moving: a delete just before
    (another test's) publishes its release a moment later."""
    seen: list[int] = []

    def steady() -> bool:
        seen.append(int(usage(berth)["mem_used"]))
        return len(seen) > 1 and seen[-1] == seen[-2]
    wait_for(steady, 20, 1.0, what="the host's usage to settle")
    return seen[-1]


def test_members_share_the_sandbox_network_and_run_after_their_init_containers(
        capsules: Capsules) -> None:
    tpl = template(unique("web"), [
        member("web", ["sh", "-c", SERVE]),
        member("probe", QUICK_STOP, env={"TARGET": "127.0.0.1:8080"})],
        inits=[member("first", ["sh", "-c", "sleep 0.3; echo first"]),
               member("second", ["sh", "-c", "echo second"])])
    shown = capsules.settled(capsules.create(tpl)["uuid"])
    assert shown["status"] == "Running", shown["status_reason"]
    assert shown["cpu"] == pytest.approx(0.2) and shown["memory"] == "64"
    assert [m["status"] for m in shown["init_containers"]] == ["Stopped", "Stopped"]
    assert {m["status"] for m in shown["containers"]} == {"Running"}
    assert shown["restart_policy"] == {"Name": "always", "MaximumRetryCount": "0"}

    probe = next(m for m in shown["containers"] if m["name"].endswith("-probe"))
    with capsules.berth.http(version=LATEST) as http:
        resp = http.post(f"/v1/containers/{probe['uuid']}/execute", params={
            "run": "true", "command": "wget -qO- http://127.0.0.1:8080/index.html"})
        assert resp.status_code == 200, resp.text
        fetched = resp.json()
        assert fetched["exit_code"] == 0 and fetched["output"].strip() == "served-by-web"
        logs = [http.get(f"/v1/containers/{m['uuid']}/logs").json().strip()
                for m in shown["init_containers"]]
    assert logs == ["first", "second"]

    # Order, from the engine's own times: first ended before second began, and second
    # ended before any container began.
    (_, first_end), (second_start, second_end) = (capsules.times(m)
                                                  for m in shown["init_containers"])
    assert first_end <= second_start
    assert all(second_end <= capsules.times(m)[0] for m in shown["containers"])

    capsules.delete(shown["uuid"])
    assert capsules.left_in_engine(shown) == []


def test_a_failing_init_container_puts_the_capsule_in_error_naming_it(
        capsules: Capsules) -> None:
    before = settled_mem_used(capsules.berth)
    tpl = template(unique("broken"), [member("app", QUICK_STOP)],
                   inits=[member("migrate", ["sh", "-c", "echo no database; exit 3"])])
    shown = capsules.settled(capsules.create(tpl)["uuid"])
    assert shown["status"] == "Error"
    assert "migrate" in shown["status_reason"] and "exit 3" in shown["status_reason"]
    assert capsules.left_in_engine(shown) == []             # nothing left in the engine
    wait_for(lambda: usage(capsules.berth)["mem_used"] == before, 10,
             what="the claim to be released")
    capsules.delete(shown["uuid"])


def test_a_member_killed_behind_berths_back_shows_in_its_capsule(
        capsules: Capsules) -> None:
    tpl = template(unique("kill"), [member("a", QUICK_STOP), member("b", QUICK_STOP)],
                   restartPolicy="Never")
    shown = capsules.settled(capsules.create(tpl)["uuid"])
    assert shown["status"] == "Running", shown["status_reason"]
    victim = shown["containers"][0]
    capsules.kill(victim)

    def member_stopped() -> dict[str, Any] | None:
        now = capsules.show(shown["uuid"])
        assert now is not None
        states = {m["uuid"]: m["status"] for m in now["containers"]}
        return now if states[victim["uuid"]] == "Stopped" else None
    now = wait_for(member_stopped, 10, 0.1, what="the killed member to show Stopped")
    assert isinstance(now, dict)
    # Killed (exit 137) under restartPolicy Never: the capsule is in Error naming it.
    failed = wait_for(lambda: (c := capsules.show(shown["uuid"])) and c["status"] == "Error"
                      and c, 10, 0.1, what="the capsule to follow its member")
    assert isinstance(failed, dict)
    assert victim["name"] in failed["status_reason"] and "137" in failed["status_reason"]


@pytest.mark.parametrize("tpl,field", [
    ({"kind": "capsule", "metadata": {}, "spec": {"containers": []}}, "spec.containers"),
    ({"kind": "pod", "metadata": {}, "spec": {"containers": [{"image": TEST_IMAGE}]}},
     "kind"),
    ({"kind": "capsule", "metadata": {}, "spec": {"containers": [{"name": "x"}]}},
     "spec.containers[0]"),
    ({"kind": "capsule", "metadata": {"name": "-bad"},
      "spec": {"containers": [{"image": TEST_IMAGE}]}}, "metadata.name"),
    ({"kind": "capsule", "metadata": {}, "spec": {"containers": [
        {"image": TEST_IMAGE, "ports": [{"containerPort": 70000}]}]}},
     "spec.containers[0].ports[0].containerPort"),
    ({"kind": "capsule", "metadata": {}, "spec": {"containers": [{"image": TEST_IMAGE}],
                                                  "initContainers": [{"image": 5}]}},
     "spec.initContainers[0].image"),
    ({"kind": "capsule", "metadata": {}, "spec": {"containers": [
        {"image": TEST_IMAGE, "resources": {"requests": {"memory": "99999"}}}]}},
     "spec.containers[0].resources.requests.memory"),
    ({"kind": "capsule", "metadata": {}, "spec": {
        "containers": [{"image": TEST_IMAGE}], "volumes": [{"name": "v"}]}}, "spec.volumes[0]"),
    ("kind: capsule\nspec: [unclosed", "template"),
])
def test_a_bad_template_is_a_400_naming_the_field_and_leaves_nothing(
        capsules: Capsules, tpl: Any, field: str) -> None:
    with capsules.berth.http(version=LATEST) as http:
        before = http.get("/v1/capsules/").json()["capsules"]
        resp = http.post("/v1/capsules/", json={"template": tpl})
        assert resp.status_code == 400, resp.text
        (err,) = resp.json()["errors"]
        assert f"field '{field}'" in err["detail"], err["detail"]
        assert http.get("/v1/capsules/").json()["capsules"] == before


def test_a_capsules_members_count_against_the_containers_quota(capsules: Capsules) -> None:
    berth = capsules.berth
    project = unique("capq")
    token = f"user:{project}"
    with berth.http() as http:
        http.put(f"/v1/quotas/{project}", json={"containers": 2}).raise_for_status()
    tpl = template(unique("big"), [member(n, QUICK_STOP) for n in ("a", "b", "c")])
    with berth.http(token=token, version=LATEST) as http:
        resp = http.post("/v1/capsules/", json={"template": tpl})
        assert resp.status_code == 403, resp.text
        assert "containers" in resp.json()["errors"][0]["detail"]
        assert http.get("/v1/capsules/").json()["capsules"] == []
    shown = capsules.create(template(unique("fits"), [member("a", QUICK_STOP),
                                                      member("b", QUICK_STOP)]), token=token)
    with berth.http() as http:
        used = http.get(f"/v1/quotas/{project}", params={"usages": "True"}).json()
    assert used["containers"]["in_use"] == 2
    assert capsules.settled(shown["uuid"])["status"] == "Running"


def test_views_before_and_from_1_32(capsules: Capsules) -> None:
    berth = capsules.berth
    name = unique("views")
    shown = capsules.settled(capsules.create(template(name, [member("a", QUICK_STOP)]))
                             ["uuid"])
    legacy = capsules.show(shown["uuid"], version="container 1.31")
    assert legacy is not None
    assert legacy["meta_name"] == name and legacy["meta_labels"] == {"test": "capsules"}
    assert legacy["restart_policy"] == "always" and legacy["volumes_info"] == {}
    assert "name" not in legacy
    with berth.http(version="container 1.40") as http:
        by_name = http.get(f"/v1/capsules/{name}").json()
    assert by_name["uuid"] == shown["uuid"] and by_name["name"] == name
    assert by_name["links"][0]["href"].endswith(f"/v1/capsules/{shown['uuid']}")
    with berth.http(version="container 1.40") as http:
        listed = {c["uuid"]: c for c in http.get("/v1/capsules/").json()["capsules"]}
    # Zun 18's list gives each capsule its links too (tests/compat).
    assert listed[shown["uuid"]]["links"] == by_name["links"]


def run_cli(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_zun_cli_and_python_api_create_list_describe_and_delete(capsules: Capsules) -> None:
    berth = capsules.berth
    zun = berth.client()
    name = unique("cli")
    tpl = template(name, [member("web", QUICK_STOP, ports=[{"containerPort": 8080}])])
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as pod:
        yaml.safe_dump(tpl, pod)
    env = berth.zun_cli_env()
    out = run_cli([bin_path("zun"), "capsule-create", "-f", pod.name], env)
    assert "accepted" in out
    listed = {c.name if hasattr(c, "name") else c.meta_name: c for c in zun.capsules.list()}
    assert name in listed
    uuid = listed[name].uuid
    capsules.uuids.append(uuid)
    assert capsules.settled(uuid)["status"] == "Running"
    described = run_cli([bin_path("zun"), "capsule-describe", uuid], env)
    assert name in described and "Running" in described
    assert zun.capsules.get(uuid).containers[0]["name"] == f"capsule-{name}-web"
    if not isinstance(capsules, CriCapsules):
        # A member has no network of its own: its ports are its sandbox's.
        sandbox = capsules.docker.api.inspect_container(f"zun-{uuid}")
        assert "8080/tcp" in sandbox["Config"]["ExposedPorts"]
    run_cli([bin_path("zun"), "capsule-delete", uuid], env)
    wait_for(lambda: capsules.show(uuid) is None, SETTLE, 0.2, what="deleted")


def test_openstack_capsule_commands(capsules: Capsules) -> None:
    berth = capsules.berth
    name = unique("osc")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as pod:
        yaml.safe_dump(template(name, [member("a", QUICK_STOP)]), pod)
    env = berth.openstack_env()
    run_cli([bin_path("openstack"), "capsule", "create", "--file", pod.name], env)
    listed = json.loads(run_cli([bin_path("openstack"), "capsule", "list", "-f", "json"],
                                env))
    found = [c for c in listed if c.get("Name") == name or c.get("name") == name]
    assert len(found) == 1, listed
    uuid = found[0].get("UUID") or found[0].get("uuid")
    capsules.uuids.append(uuid)
    assert capsules.settled(uuid)["status"] == "Running"
    run_cli([bin_path("openstack"), "capsule", "delete", uuid], env)
    wait_for(lambda: capsules.show(uuid) is None, SETTLE, 0.2, what="deleted")
