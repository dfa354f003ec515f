"""``berth-cni`` for containerd's pods: which configuration is the conflist's, what a
pod without berth networks gets, a DEL while the daemon is down (no daemon needed:
an unused port on loopback)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from berth.cni import conflist, pod
from berth.cni.contract import CniError, Code, network_config
from berth.network.base import NetworkSpec


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def config(annotations: dict[str, str] | None, delegate: dict[str, object] | None = None
           ) -> dict[str, object]:
    out = conflist.conflist(delegate)["plugins"][0]
    out.update(cniVersion="1.0.0", name="berth-pods")
    if annotations is not None:
        out["runtimeConfig"] = {pod.CAPABILITY: annotations}
    return out


ENV = {"CNI_CONTAINERID": "abc123", "CNI_NETNS": "/proc/1/ns/net", "CNI_IFNAME": "eth0",
       "CNI_PATH": "/nonexistent"}


def test_the_conflist_is_pod_mode_and_a_network_config_is_not() -> None:
    assert pod.is_pod_config(config({}))
    spec = NetworkSpec.build("n1", "10.9.0.0/24")
    assert not pod.is_pod_config(network_config(spec))


def test_a_pod_without_berth_networks_and_no_delegate_is_a_config_error() -> None:
    with pytest.raises(CniError) as caught:
        pod.handle(dict(ENV, CNI_COMMAND="ADD"), config(None))
    assert caught.value.code == Code.INVALID_NETWORK_CONFIG
    assert "no berth network" in caught.value.msg


def test_a_delegate_missing_from_cni_path_says_so() -> None:
    with pytest.raises(CniError, match="not in CNI_PATH"):
        pod.handle(dict(ENV, CNI_COMMAND="ADD"), config({}, {"type": "bridge"}))


def annotated(port: int) -> dict[str, str]:
    spec = NetworkSpec.build("n1", "10.9.0.0/24")
    return pod.pod_annotations([{"config": network_config(spec), "ifname": "eth0",
                                 "ip": None}], f"http://127.0.0.1:{port}")


def test_del_succeeds_when_the_daemon_does_not_answer() -> None:
    assert pod.handle(dict(ENV, CNI_COMMAND="DEL"), config(annotated(closed_port()))) is None


def test_add_fails_retryably_when_the_daemon_does_not_answer() -> None:
    with pytest.raises(CniError) as caught:
        pod.handle(dict(ENV, CNI_COMMAND="ADD"), config(annotated(closed_port())))
    assert caught.value.code == Code.TRY_AGAIN_LATER


def test_the_conflist_delegates_to_the_directorys_other_configuration(tmp_path: Path
                                                                        ) -> None:
    (tmp_path / "10-bridge.conflist").write_text(json.dumps(
        {"cniVersion": "1.0.0", "name": "b", "plugins": [{"type": "bridge", "bridge": "x"}]}))
    path = conflist.write(str(tmp_path), None)
    written = json.loads(path.read_text())
    assert path.name == conflist.FILE_NAME
    assert written["plugins"][0]["delegate"] == {"type": "bridge", "bridge": "x"}
    assert min(p.name for p in tmp_path.iterdir()) == conflist.FILE_NAME


def test_portmap_is_chained_after_berth_cni_only_when_containerd_can_run_it(
        tmp_path: Path) -> None:
    assert [p["type"] for p in conflist.conflist(None, portmap=True)["plugins"]] == \
        ["berth-cni", "portmap"]
    assert conflist.conflist(None, portmap=True)["plugins"][1]["capabilities"] == \
        {"portMappings": True}
    assert not conflist.has_portmap(str(tmp_path)) and not conflist.has_portmap(None)
    (tmp_path / "portmap").write_text("#!/bin/sh\n")
    (tmp_path / "portmap").chmod(0o755)
    assert conflist.has_portmap(str(tmp_path))
