"""The benchmarks never pull an image: no call in bench/ can reach an outside registry.

docker-py's ``containers.run`` pulls an image the engine lacks before it creates the
container (Docker Hub, for ``berth-test/busybox``), and ``images.pull`` (or the low
level ``pull``) is a pull by name. The benchmarks start their baselines with
``bench.common.run_detached`` (create, then start) and check the engine for the test
image before anything runs (``require_images``)."""

from __future__ import annotations

import ast
from pathlib import Path

import docker
import pytest

from bench import common

BENCH = Path(__file__).resolve().parents[3] / "bench"


def _pulling_calls(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        attr, owner = node.func.attr, node.func.value
        owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if attr == "pull" or (attr == "run" and owner_name == "containers"):
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node.func)}")
    return found


def test_no_module_of_bench_calls_containers_run_or_pull() -> None:
    modules = sorted(BENCH.rglob("*.py"))
    assert len(modules) > 20
    assert [call for path in modules for call in _pulling_calls(path)] == []


def test_the_check_itself_finds_such_a_call(tmp_path: Path) -> None:
    copy = tmp_path / "p1_p2_create.py"   # a real module with the two calls added
    copy.write_text((BENCH / "p1_p2_create.py").read_text()
                    + "\n\ndef _x(client):\n    client.containers.run('a')\n"
                    "    client.api.pull('a')\n")
    assert sorted(c.split(" ", 1)[1] for c in _pulling_calls(copy)) == [
        "client.api.pull", "client.containers.run"]


class _EngineWithout:
    """An engine's ``images`` that holds nothing: ``get`` is a 404, ``pull`` fails the
    test (the check must never ask for one)."""

    def __init__(self) -> None:
        self.images = self

    def get(self, name: str) -> None:
        raise docker.errors.ImageNotFound(f"No such image: {name}")

    def pull(self, *args: object, **kwargs: object) -> None:
        pytest.fail("require_images pulled an image")


def test_a_missing_image_stops_the_run_naming_the_command_that_builds_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///run/berth-node-bench.sock")
    with pytest.raises(common.MissingImage) as err:
        common.require_images(_EngineWithout())  # type: ignore[arg-type]
    assert ("`DOCKER_HOST=unix:///run/berth-node-bench.sock bash .ci/make-test-images.sh "
            "busybox`") in str(err.value)
    assert common.IMAGE in str(err.value)


def test_both_sides_use_the_engine_docker_host_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///run/berth-node-bench.sock")
    assert common.engine_url() == "unix:///run/berth-node-bench.sock"
    assert common.engine_conf() == "[docker]\napi_url = unix:///run/berth-node-bench.sock\n"
    monkeypatch.delenv("DOCKER_HOST")
    assert common.engine_conf() == "[docker]\napi_url = unix:///var/run/docker.sock\n"
