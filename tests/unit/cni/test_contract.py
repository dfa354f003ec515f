"""The CNI contract: environment and stdin in, checked request or the spec's error code out."""

from __future__ import annotations

import ipaddress
import json

import pytest

from berth.cni.contract import (
    SUPPORTED_VERSIONS,
    CniError,
    CniRequest,
    Code,
    Command,
    add_result,
    network_spec,
    parse_args,
    parse_request,
    parse_version_request,
    version_result,
)
from berth.network.base import VIF, AttachmentKey

CONFIG = {"cniVersion": "1.0.0", "name": "net-a", "type": "berth-cni",
          "ipam": {"subnet": "10.244.1.0/24"}}
ENV = {"CNI_COMMAND": "ADD", "CNI_CONTAINERID": "c1", "CNI_NETNS": "/var/run/netns/x",
       "CNI_IFNAME": "eth0", "CNI_ARGS": "", "CNI_PATH": "/opt/cni/bin"}


def parse(env: dict[str, str] | None = None, config: object = CONFIG, **changes: str) -> CniRequest:
    merged = {**ENV, **(env or {}), **changes}
    stdin = config if isinstance(config, bytes) else json.dumps(config).encode()
    return parse_request(merged, stdin)


def code_of(**kwargs: object) -> int:
    with pytest.raises(CniError) as err:
        parse(**kwargs)  # type: ignore[arg-type]
    return err.value.code


def test_a_good_add_parses_into_key_and_network() -> None:
    request = parse(CNI_ARGS="IP=10.244.1.9;MAC=02:00:00:00:00:01;K8S_POD_NAME=x")
    assert request.command is Command.ADD
    assert request.key == AttachmentKey("net-a", "c1", "eth0")
    assert request.fixed_ip == ipaddress.IPv4Address("10.244.1.9")
    assert request.mac == "02:00:00:00:00:01"
    spec = network_spec(request)
    assert str(spec.cidr) == "10.244.1.0/24" and str(spec.gateway) == "10.244.1.1"


def test_request_survives_the_trip_to_the_daemon() -> None:
    request = parse(CNI_ARGS="IP=10.244.1.9")
    assert CniRequest.from_wire(json.loads(json.dumps(request.to_wire()))) == request


@pytest.mark.parametrize("stdin", [b"", b"{not json", b"\xff\xfe", b"[1, 2]"])
def test_undecodable_stdin_is_code_6(stdin: bytes) -> None:
    assert code_of(config=stdin) == Code.DECODE_FAILURE == 6


def test_unsupported_version_is_code_1() -> None:
    assert code_of(config={**CONFIG, "cniVersion": "9.9.9"}) == Code.INCOMPATIBLE_VERSION == 1


def test_check_before_0_4_0_is_code_1() -> None:
    assert code_of(config={**CONFIG, "cniVersion": "0.3.1"}, CNI_COMMAND="CHECK") == 1


@pytest.mark.parametrize("changes", [
    {"CNI_COMMAND": ""}, {"CNI_COMMAND": "FROB"}, {"CNI_CONTAINERID": ""},
    {"CNI_CONTAINERID": "-bad"}, {"CNI_IFNAME": ""}, {"CNI_IFNAME": "x" * 16},
    {"CNI_IFNAME": "a/b"}, {"CNI_IFNAME": ".."}, {"CNI_IFNAME": "e 0"}, {"CNI_NETNS": ""},
    {"CNI_ARGS": "novalue"}, {"CNI_ARGS": "IP=300.1.1.1"}, {"CNI_ARGS": "MAC=zz"},
])
def test_bad_environment_is_code_4(changes: dict[str, str]) -> None:
    assert code_of(**changes) == Code.INVALID_ENVIRONMENT == 4


def test_del_does_not_need_a_namespace() -> None:
    assert parse(CNI_COMMAND="DEL", CNI_NETNS="").netns is None


@pytest.mark.parametrize("config", [
    {k: v for k, v in CONFIG.items() if k != "cniVersion"},
    {**CONFIG, "ipam": {}}, {**CONFIG, "ipam": {"subnet": "10.244.1.0/33"}},
    {**CONFIG, "ipam": {"subnet": "10.244.1.0/24", "gateway": "10.9.9.9"}},
    {**CONFIG, "name": ""}, {**CONFIG, "name": "bad name"}, {**CONFIG, "ipam": "x"},
    {**CONFIG, "bridge": "docker0"}, {**CONFIG, "mtu": "big"},
    {**CONFIG, "ipam": {"subnet": "10.244.1.0/24", "subnet6": "fe80::/64"}},
    {**CONFIG, "ipam": {"subnet": "10.244.1.0/24", "subnet6": 6}},
])
def test_bad_network_configuration_is_code_7(config: dict[str, object]) -> None:
    assert code_of(config=config) == Code.INVALID_NETWORK_CONFIG == 7


def test_errors_carry_the_requests_version_when_it_is_supported() -> None:
    with pytest.raises(CniError) as err:
        parse(config={**CONFIG, "cniVersion": "0.4.0"}, CNI_IFNAME="")
    assert err.value.to_json() == {"cniVersion": "0.4.0", "code": 4,
                                   "msg": "CNI_IFNAME '' is not a valid interface name"}


def test_version_answers_the_asked_version_and_the_supported_list() -> None:
    assert parse_version_request(b"") == "1.0.0"
    assert parse_version_request(b'{"cniVersion": "0.4.0"}') == "0.4.0"
    assert version_result("0.4.0") == {"cniVersion": "0.4.0",
                                       "supportedVersions": list(SUPPORTED_VERSIONS)}


def test_cni_args_pairs() -> None:
    assert parse_args("A=1;B=;C=x=y") == {"A": "1", "B": "", "C": "x=y"}


def _vif() -> VIF:
    return VIF(key=AttachmentKey("net-a", "c1", "eth0"), netns="/var/run/netns/x",
               mac="02:00:00:00:00:01", address=ipaddress.IPv4Interface("10.244.1.2/24"),
               gateway=ipaddress.IPv4Address("10.244.1.1"), bridge="bthabc",
               host_ifname="vthabc")


def test_add_result_in_1_0_0_has_no_ip_version_and_points_at_the_container_end() -> None:
    result = add_result(_vif(), "1.0.0")
    assert result["interfaces"][2] == {"name": "eth0", "mac": "02:00:00:00:00:01",
                                       "sandbox": "/var/run/netns/x"}
    assert result["ips"] == [{"address": "10.244.1.2/24", "gateway": "10.244.1.1",
                              "interface": 2}]
    assert result["routes"] == [{"dst": "0.0.0.0/0", "gw": "10.244.1.1"}]


def test_add_result_before_1_0_0_says_the_ip_version() -> None:
    assert add_result(_vif(), "0.4.0")["ips"][0]["version"] == "4"


def test_network_config_and_network_spec_are_inverses() -> None:
    from berth.cni.contract import network_config
    from berth.network.base import NetworkSpec

    spec = NetworkSpec.build("net-b", "10.244.7.0/24", "10.244.7.254", masquerade=True,
                             mtu=1400)
    request = parse(config=network_config(spec, "http://127.0.0.1:1"))
    assert network_spec(request) == spec and request.daemon_url == "http://127.0.0.1:1"


def test_vif_from_result_reads_back_what_add_result_wrote() -> None:
    from berth.cni.contract import vif_from_result

    vif = _vif()
    assert vif_from_result(vif.key, add_result(vif, "1.0.0")) == vif
    with pytest.raises(CniError) as err:
        vif_from_result(vif.key, {"ips": []})
    assert err.value.code == 6


def test_a_dual_stack_add_result_has_both_addresses_and_both_default_routes() -> None:
    from berth.cni.contract import network_config, vif_from_result
    from berth.network.base import NetworkSpec

    spec = NetworkSpec.build("net-a", "10.244.1.0/24", cidr6="fd00:b:1::/64")
    request = parse(config=network_config(spec))
    assert network_spec(request) == spec
    vif = VIF.planned(spec, AttachmentKey("net-a", "c1", "eth0"), "/var/run/netns/x",
                      "02:00:00:00:00:01", ipaddress.IPv4Interface("10.244.1.2/24"))
    result = add_result(vif, "1.0.0")
    assert result["ips"] == [
        {"address": "10.244.1.2/24", "gateway": "10.244.1.1", "interface": 2},
        {"address": "fd00:b:1::2/64", "gateway": "fd00:b:1::1", "interface": 2}]
    assert result["routes"] == [{"dst": "0.0.0.0/0", "gw": "10.244.1.1"},
                                {"dst": "::/0", "gw": "fd00:b:1::1"}]
    assert [ip["version"] for ip in add_result(vif, "0.4.0")["ips"]] == ["4", "6"]
    assert vif_from_result(vif.key, result) == vif
