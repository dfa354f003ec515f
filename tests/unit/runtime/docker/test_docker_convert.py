"""Conversions between Docker's JSON and berth's runtime dataclasses (canned dicts)."""

from __future__ import annotations

import datetime as dt

import pytest

from berth.runtime.base import (
    LABEL_HOST,
    LABEL_UUID,
    ContainerSpec,
    HealthcheckSpec,
    NetworkEndpoint,
    RunState,
)
from berth.runtime.docker import convert

UTC = dt.UTC
ZERO = "0001-01-01T00:00:00Z"


def inspect_dict(**state: object) -> dict[str, object]:
    base_state: dict[str, object] = {
        "Status": "running", "Running": True, "Paused": False, "Restarting": False,
        "OOMKilled": False, "Dead": False, "Pid": 4242, "ExitCode": 0, "Error": "",
        "StartedAt": "2024-05-06T07:08:09.123456789Z", "FinishedAt": ZERO,
    }
    base_state.update(state)
    return {
        "Id": "c0ffee" * 10 + "abcd",
        "Name": "/zun-1234",
        "Image": "sha256:deadbeef",
        "State": base_state,
        "Config": {
            "Hostname": "web-1",
            "Image": "berth-test/busybox:latest",
            "Cmd": ["sleep", "300"],
            "Entrypoint": None,
            "ExposedPorts": {"80/tcp": {}, "53/udp": {}, "53/tcp": {}},
            "Labels": {LABEL_UUID: "1234", LABEL_HOST: "node-1", "team": "a"},
        },
        "HostConfig": {"Runtime": "runc"},
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-06T07:08:09.123456789Z", dt.datetime(2024, 5, 6, 7, 8, 9, 123456, UTC)),
        ("2024-05-06T07:08:09Z", dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)),
        ("2024-05-06T09:08:09.5+02:00", dt.datetime(2024, 5, 6, 7, 8, 9, 500000, UTC)),
        (ZERO, None),
        ("", None),
        (None, None),
    ],
)
def test_parse_time_reads_rfc3339_nanos_and_zero_time(
    text: str | None, expected: dt.datetime | None
) -> None:
    assert convert.parse_time(text) == expected


def test_from_nano_is_aware_utc_with_microseconds() -> None:
    assert convert.from_nano(1_700_000_000_123_456_789) == dt.datetime(
        2023, 11, 14, 22, 13, 20, 123456, UTC
    )


def test_container_from_inspect_maps_running_container() -> None:
    container = convert.container_from_inspect(inspect_dict())
    assert container.name == "zun-1234"
    assert container.uuid == "1234"
    assert container.image == "berth-test/busybox:latest"
    assert container.hostname == "web-1"
    assert container.ports == (53, 80)
    assert container.runtime == "runc"
    assert container.command == ("sleep", "300")
    assert container.entrypoint is None
    assert container.labels["team"] == "a"
    state = container.state
    assert state is not None
    assert state.status is RunState.RUNNING and state.running
    assert state.pid == 4242
    assert state.exit_code is None, "a container that never finished has no exit code"
    assert state.started_at == dt.datetime(2024, 5, 6, 7, 8, 9, 123456, UTC)
    assert state.finished_at is None


def test_container_from_inspect_maps_exit_code_and_oom_kill() -> None:
    data = inspect_dict(Status="exited", Running=False, Pid=0, ExitCode=137, OOMKilled=True,
                        FinishedAt="2024-05-06T07:09:00.000000001Z")
    state = convert.container_from_inspect(data).state
    assert state is not None
    assert state.status is RunState.EXITED and not state.running
    assert state.exit_code == 137
    assert state.oom_killed
    assert state.finished_at == dt.datetime(2024, 5, 6, 7, 9, 0, tzinfo=UTC)


def test_container_from_inspect_keeps_zero_exit_code_once_finished() -> None:
    data = inspect_dict(Status="exited", Running=False, ExitCode=0,
                        FinishedAt="2024-05-06T07:09:00Z")
    state = convert.container_from_inspect(data).state
    assert state is not None and state.exit_code == 0


def test_container_from_inspect_created_has_no_times_and_no_exit_code() -> None:
    data = inspect_dict(Status="created", Running=False, Pid=0, StartedAt=ZERO)
    state = convert.container_from_inspect(data).state
    assert state is not None
    assert state.status is RunState.CREATED
    assert (state.started_at, state.finished_at, state.exit_code) == (None, None, None)


def test_container_from_inspect_reports_failed_start_exit_code() -> None:
    data = inspect_dict(Status="created", Running=False, Pid=0, StartedAt=ZERO, ExitCode=127,
                        Error="exec: \"nope\": executable file not found in $PATH")
    state = convert.container_from_inspect(data).state
    assert state is not None
    assert state.exit_code == 127
    assert "executable file not found" in state.error


def test_container_from_inspect_tolerates_missing_parts() -> None:
    container = convert.container_from_inspect({"Id": "abc", "Name": "/x"})
    assert container.state is None
    assert container.uuid is None
    assert container.ports == ()
    assert container.hostname is None and container.runtime is None


def test_unknown_engine_state_maps_to_unknown() -> None:
    state = convert.state_from_inspect({"Status": "hibernating"})
    assert state is not None and state.status is RunState.UNKNOWN


def test_container_from_list_parses_state_exit_code_and_ports() -> None:
    entry = {
        "Id": "abc123",
        "Names": ["/zun-77"],
        "Image": "berth-test/busybox:latest",
        "State": "exited",
        "Status": "Exited (137) 3 seconds ago",
        "Ports": [{"PrivatePort": 8080, "Type": "tcp"}, {"PrivatePort": 53, "Type": "udp"}],
        "Labels": {LABEL_UUID: "77", LABEL_HOST: "node-1"},
    }
    container = convert.container_from_list(entry)
    assert (container.id, container.name, container.uuid) == ("abc123", "zun-77", "77")
    assert container.ports == (53, 8080)
    assert container.state is not None
    assert container.state.status is RunState.EXITED
    assert container.state.exit_code == 137
    assert container.hostname is None and container.command is None


@pytest.mark.parametrize(
    ("word", "status", "flag"),
    [("running", RunState.RUNNING, "running"), ("paused", RunState.PAUSED, "paused"),
     ("restarting", RunState.RESTARTING, "restarting"), ("dead", RunState.DEAD, "dead")],
)
def test_state_from_list_sets_flags(word: str, status: RunState, flag: str) -> None:
    state = convert.state_from_list({"State": word, "Status": "Up 2 minutes"})
    assert state.status is status
    assert getattr(state, flag) is True
    assert state.exit_code is None


def test_image_from_inspect_reads_cmd_and_entrypoint() -> None:
    image = convert.image_from_inspect({
        "Id": "sha256:abc", "RepoTags": ["a:1", "b:2"], "Size": 1984293,
        "Config": {"Cmd": ["sh"], "Entrypoint": "/init"},
    })
    assert image.id == "sha256:abc"
    assert image.repo_tags == ("a:1", "b:2")
    assert image.size == 1984293
    assert image.cmd == ("sh",)
    assert image.entrypoint == ("/init",)


def test_host_from_info_converts_units_labels_and_runtimes() -> None:
    host = convert.host_from_info({
        "NCPU": 4, "MemTotal": 8 * 1024**3 + 12345, "Architecture": "x86_64",
        "OSType": "linux", "OperatingSystem": "Debian GNU/Linux 12 (bookworm)",
        "KernelVersion": "6.1.0", "Labels": ["zone=a", "ssd=true", "flag"],
        "Runtimes": {"runc": {}, "kata": {}}, "Containers": 5, "ContainersRunning": 2,
        "ContainersPaused": 1, "ContainersStopped": 2, "DockerRootDir": "/var/lib/docker",
        "Driver": "overlay2",
    })
    assert host.cpus == 4
    assert host.mem_total_mib == 8192
    assert host.labels == {"zone": "a", "ssd": "true", "flag": ""}
    assert host.runtimes == ("kata", "runc")
    assert (host.total_containers, host.running_containers, host.paused_containers,
            host.stopped_containers) == (5, 2, 1, 2)
    assert host.storage_driver == "overlay2"


def test_host_from_info_defaults_runtimes_to_runc() -> None:
    assert convert.host_from_info({}).runtimes == ("runc",)


def full_spec() -> ContainerSpec:
    return ContainerSpec(
        uuid="u-1", host="node-1", image="berth-test/busybox:latest",
        command=("sleep", "60"), entrypoint=("/bin/sh", "-c"), environment={"A": "1"},
        workdir="/srv", labels={"team": "a", LABEL_UUID: "spoofed"}, hostname="web",
        memory_mib=64, cpu_shares=512, restart_policy={"Name": "on-failure",
                                                       "MaximumRetryCount": "3"},
        tty=True, interactive=True, auto_remove=True, privileged=True, runtime="runc",
        exposed_ports=("80/tcp", "53/udp", "8080"),
        healthcheck=HealthcheckSpec(test="true", interval=5, timeout=2, retries=3),
        disk_gib=10, cpuset_cpus="1,3", cpuset_mems="0", network_mode="none",
        binds=("/data:/data:ro",),
    )


def test_create_kwargs_maps_every_field() -> None:
    kwargs = convert.create_kwargs(full_spec())
    assert kwargs["name"] == "zun-u-1"
    assert kwargs["labels"] == {"team": "a", LABEL_UUID: "u-1", LABEL_HOST: "node-1"}
    assert kwargs["command"] == ["sleep", "60"]
    assert kwargs["entrypoint"] == ["/bin/sh", "-c"]
    assert kwargs["environment"] == {"A": "1"}
    assert kwargs["working_dir"] == "/srv"
    assert kwargs["hostname"] == "web"
    assert kwargs["tty"] is True and kwargs["stdin_open"] is True
    assert kwargs["ports"] == [(80, "tcp"), (53, "udp"), (8080, "tcp")]
    assert kwargs["healthcheck"] == {"Test": ["CMD-SHELL", "true"], "Interval": 5_000_000_000,
                                     "Timeout": 2_000_000_000, "Retries": 3}
    assert kwargs["use_config_proxy"] is False


def test_create_kwargs_leaves_unset_fields_to_docker() -> None:
    kwargs = convert.create_kwargs(ContainerSpec(uuid="u", host="h", image="img"))
    for key in ("command", "entrypoint", "environment", "working_dir", "hostname", "ports",
                "healthcheck", "mac_address"):
        assert key not in kwargs
    assert convert.host_config_kwargs(ContainerSpec(uuid="u", host="h", image="img")) == {}


def test_host_config_kwargs_maps_resources_and_policies() -> None:
    kwargs = convert.host_config_kwargs(full_spec())
    assert kwargs == {
        "mem_limit": "64M", "cpu_shares": 512,
        "restart_policy": {"Name": "on-failure", "MaximumRetryCount": 3},
        "auto_remove": True, "privileged": True, "runtime": "runc",
        "storage_opt": {"size": "10G"}, "cpuset_cpus": "1,3", "cpuset_mems": "0",
        "network_mode": "none", "binds": ["/data:/data:ro"],
    }
    assert "memswap_limit" not in kwargs


def test_create_kwargs_rejects_malformed_port() -> None:
    spec = ContainerSpec(uuid="u", host="h", image="img", exposed_ports=("http/tcp",))
    with pytest.raises(ValueError):
        convert.create_kwargs(spec)


def test_a_sandbox_publishes_its_host_ports_and_gets_its_dns_options() -> None:
    from berth.runtime.base import DnsConfig, PublishedPort

    kwargs = convert.host_config_kwargs(ContainerSpec(
        uuid="u", host="h", image="img",
        published_ports=(PublishedPort(8080, 18080), PublishedPort(53, 5353, "udp")),
        dns=DnsConfig(servers=("10.0.0.2",), searches=("a.test",), options=("ndots:2",))))
    assert kwargs == {"port_bindings": {"8080/tcp": 18080, "53/udp": 5353},
                      "dns": ["10.0.0.2"], "dns_search": ["a.test"], "dns_opt": ["ndots:2"]}


def test_an_endpoint_gives_the_container_its_ports_mac() -> None:
    """The kuryr driver's first network: the Neutron port's MAC on the container (API
    < 1.44 takes it there), its network as the network mode."""
    spec = ContainerSpec(uuid="u", host="h", image="img", network_mode="net-1",
                         endpoint=NetworkEndpoint(ipv4="10.0.0.5", mac="fa:16:3e:00:00:01"))
    assert convert.create_kwargs(spec)["mac_address"] == "fa:16:3e:00:00:01"
    assert convert.host_config_kwargs(spec)["network_mode"] == "net-1"
