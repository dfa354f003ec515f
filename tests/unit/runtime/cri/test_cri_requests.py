"""The CRI requests berth builds and the errors it maps (pure: no containerd)."""

from __future__ import annotations

import grpc
import pytest
from cri_api.v1 import api_pb2 as cri

from berth.runtime import base as rt
from berth.runtime.cri import client
from berth.runtime.cri.base import PodSpec


def test_a_member_keeps_dockers_meaning_of_entrypoint_and_command() -> None:
    spec = rt.ContainerSpec(uuid="m1", host="h1", image="berth-test/busybox:latest",
                            entrypoint=("sh", "-c"), command=("echo hi",),
                            environment={"A": "1"}, workdir="/w", memory_mib=32,
                            cpu_shares=102, privileged=True, tty=True, interactive=True,
                            binds=("/src:/dst:ro", "/a:/b"), labels={"x": "y"})
    config = client._member_config(spec)
    assert list(config.command) == ["sh", "-c"] and list(config.args) == ["echo hi"]
    assert [(e.key, e.value) for e in config.envs] == [("A", "1")]
    assert config.working_dir == "/w" and config.tty and config.stdin
    assert [(m.host_path, m.container_path, m.readonly) for m in config.mounts] == \
        [("/src", "/dst", True), ("/a", "/b", False)]
    assert config.linux.resources.memory_limit_in_bytes == 32 * 1024 * 1024
    assert config.linux.resources.cpu_shares == 102
    assert config.linux.security_context.privileged
    assert dict(config.labels) == {"x": "y", rt.LABEL_UUID: "m1", rt.LABEL_HOST: "h1"}
    assert config.log_path == "m1.log"
    options = config.linux.security_context.namespace_options
    assert (options.network, options.ipc, options.pid) == (
        cri.NamespaceMode.Value("POD"), cri.NamespaceMode.Value("POD"),
        cri.NamespaceMode.Value("CONTAINER"))


def test_a_pod_carries_the_capsule_uuid_labels_log_dir_and_cgroup_parent() -> None:
    pods = client.CriRuntime("/nonexistent.sock", 1.0, "berth-cri/", "/logs")
    try:
        config = pods._pod_config(PodSpec(uuid="c1", name="web", host="h1",
                                          labels={"app": "web"}, hostname="web"))
    finally:
        pods.close()
    assert (config.metadata.uid, config.metadata.name) == ("c1", "web")
    assert dict(config.labels) == {"app": "web", rt.LABEL_UUID: "c1", rt.LABEL_HOST: "h1"}
    assert config.log_directory == "/logs/c1" and config.hostname == "web"
    assert config.linux.cgroup_parent == "/berth-cri/c1"


class _Failed(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode) -> None:
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return "containerd's words"


@pytest.mark.parametrize("code,raised", [
    (grpc.StatusCode.NOT_FOUND, rt.RuntimeNotFound),
    (grpc.StatusCode.UNAVAILABLE, rt.RuntimeUnavailable),
    (grpc.StatusCode.INVALID_ARGUMENT, rt.RuntimeInvalid),
    (grpc.StatusCode.UNKNOWN, rt.RuntimeDriverError),
])
def test_grpc_codes_become_berths_runtime_errors(code: grpc.StatusCode,
                                                 raised: type[Exception]) -> None:
    with pytest.raises(raised) as caught, client._translated("/s.sock", "RunPodSandbox"):
        raise _Failed(code)
    assert type(caught.value) is raised
    assert "RunPodSandbox: containerd's words" in str(caught.value)
    if code == grpc.StatusCode.UNAVAILABLE:
        assert "[cri]containerd_socket" in str(caught.value)


def test_a_pod_carries_its_port_mappings_and_dns_config() -> None:
    pods = client.CriRuntime("/nonexistent.sock", 1.0, "berth-cri/", "/logs")
    try:
        config = pods._pod_config(PodSpec(
            uuid="c1", name="web", host="h1",
            ports=(rt.PublishedPort(8080, 18080), rt.PublishedPort(53, 5353, "udp")),
            dns=rt.DnsConfig(servers=("10.0.0.2",), searches=("a.test",),
                             options=("ndots:2",))))
        bare = pods._pod_config(PodSpec(uuid="c2", name="db", host="h1"))
    finally:
        pods.close()
    assert [(p.protocol, p.container_port, p.host_port) for p in config.port_mappings] == \
        [(cri.Protocol.Value("TCP"), 8080, 18080), (cri.Protocol.Value("UDP"), 53, 5353)]
    assert (list(config.dns_config.servers), list(config.dns_config.searches),
            list(config.dns_config.options)) == (["10.0.0.2"], ["a.test"], ["ndots:2"])
    assert not bare.HasField("dns_config") and not bare.port_mappings


def test_sandbox_options_read_host_ports_and_dns_from_the_rows() -> None:
    from types import SimpleNamespace

    from berth.compute.capsules.sandbox_options import dns_config, published_ports

    members = [SimpleNamespace(exposed_ports={"8080/tcp": {"hostPort": 18080}, "9/tcp": {}}),
               SimpleNamespace(exposed_ports={"53/udp": {"hostPort": 53}}),
               SimpleNamespace(exposed_ports=None)]
    assert published_ports(members) == (rt.PublishedPort(53, 53, "udp"),  # type: ignore[arg-type]
                                        rt.PublishedPort(8080, 18080))
    capsule = SimpleNamespace(dns_config={"nameservers": ["10.0.0.2"], "searches": [],
                                          "options": [{"name": "ndots", "value": "2"},
                                                      {"name": "edns0"}]})
    assert dns_config(capsule) == rt.DnsConfig(("10.0.0.2",), (), ("ndots:2", "edns0"))  # type: ignore[arg-type]
    assert dns_config(SimpleNamespace(dns_config=None)) is None  # type: ignore[arg-type]
