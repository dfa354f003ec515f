"""The capsule template (berth.api.schemas.capsule): Zun's sums and names, JSON and
YAML text, and a 400 naming the field of each bad part."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from berth.api.schemas.capsule import parse_template
from berth.api.schemas.container import CreateLimits
from berth.common.exceptions import InvalidParameterValue

LIMITS = CreateLimits(default_cpu=1.0, default_memory=512)


def tpl(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"kind": "capsule", "metadata": {"name": "cap"},
            "spec": {"containers": containers, **spec}}


def test_sums_defaults_and_the_largest_init_request() -> None:
    parsed = parse_template({"template": tpl(
        [{"image": "busybox", "resources": {"requests": {"cpu": 0.5, "memory": 64}}},
         {"image": "busybox"}],
        initContainers=[{"image": "busybox", "resources": {"requests": {"cpu": 4}}}])},
        LIMITS, pull_allowed=False)
    assert parsed.capsule["cpu"] == 4.0                 # raised to the init request
    assert parsed.capsule["memory"] == "576"            # 64 + the default 512
    assert [m["container_type"] for m in parsed.members] == [3, 2, 2]
    assert [m["name"] for m in parsed.members] == ["capsule-cap-init-0", "capsule-cap-0",
                                                   "capsule-cap-1"]


def test_restart_policy_command_args_ports_and_pull_policy() -> None:
    item = {"image": "busybox", "name": "web", "command": ["sh"], "args": ["-c", "true"],
            "ports": [{"containerPort": 53, "protocol": "UDP"}, {"containerPort": 80}],
            "imagePullPolicy": "IfNotPresent", "stdin": True, "tty": True,
            "env": {"A": "b"}, "workDir": "/srv"}
    admin = parse_template({"template": tpl([item], restartPolicy="OnFailure")}, LIMITS,
                           pull_allowed=True)
    (web,) = admin.members
    assert web["command"] == ["sh", "-c", "true"]
    assert web["exposed_ports"] == {"53/udp": {}, "80/tcp": {}}
    assert web["image_pull_policy"] == "ifnotpresent"
    assert web["restart_policy"] == {"Name": "on-failure", "MaximumRetryCount": "0"}
    assert (web["interactive"], web["tty"], web["workdir"]) == (True, True, "/srv")
    user = parse_template({"template": tpl([item])}, LIMITS, pull_allowed=False)
    assert user.members[0]["image_pull_policy"] is None       # dropped, as Zun
    assert user.capsule["restart_policy"]["Name"] == "always"


def test_the_deprecated_top_level_restart_policy_is_honoured() -> None:
    body = dict(tpl([{"image": "busybox"}]), restartPolicy="Never")
    assert parse_template({"template": body}, LIMITS, False).capsule["restart_policy"] == \
        {"Name": "no", "MaximumRetryCount": "0"}


def test_json_and_yaml_text_are_templates_too() -> None:
    body = tpl([{"image": "busybox"}])
    as_yaml = parse_template({"template": yaml.safe_dump(body)}, LIMITS, False)
    assert as_yaml.capsule["name"] == "cap"
    import json
    assert parse_template({"template": json.dumps(body)}, LIMITS, False).members


def with_volumes(containers: list[dict[str, Any]], volumes: list[dict[str, Any]]
                 ) -> dict[str, Any]:
    body = tpl(containers)
    body["spec"]["volumes"] = volumes
    return body


@pytest.mark.parametrize("body,field", [
    ({"template": tpl([{"image": "busybox", "name": "a"}, {"image": "busybox",
                                                             "name": "a"}])},
     "spec.containers[1].name"),
    ({"template": tpl([{"image": "busybox", "stdin": "yes"}])}, "spec.containers[0].stdin"),
    ({"template": tpl([{"image": "busybox", "env": {"A": 1}}])}, "spec.containers[0].env.A"),
    ({"template": tpl([{"image": "busybox", "volumeMounts": [{"name": "v",
                                                               "mountPath": "/d"}]}])},
     "spec.containers[0].volumeMounts[0].name"),
    ({"template": with_volumes([{"image": "busybox"}], [{"name": "v", "cinder": {"size": 1}}])},
     "spec.volumes[0].name"),
    ({"template": with_volumes([{"image": "busybox", "volumeMounts": [
        {"name": "v", "mountPath": "/d"}, {"name": "v", "mountPath": "/d/"}]}],
        [{"name": "v", "cinder": {"size": 1}}])},
     "spec.containers[0].volumeMounts[1].mountPath"),
    ({"template": with_volumes([{"image": "busybox"}],
                               [{"name": "v", "cinder": {"size": 1, "volumeID": "x"}}])},
     "spec.volumes[0].cinder"),
    ({"template": with_volumes([{"image": "busybox", "volumeMounts": [
        {"name": "v", "mountPath": "relative"}]}], [{"name": "v", "cinder": {"size": 1}}])},
     "spec.containers[0].volumeMounts[0].mountPath"),
    ({"template": dict(tpl([{"image": "busybox"}]), extra=1)}, ""),
    ({"template": "[1, 2]"}, ""),
])
def test_bad_templates_name_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidParameterValue) as info:
        parse_template(body, LIMITS, False)
    if field:
        assert f"field '{field}'" in str(info.value)


def test_volumes_and_mounts() -> None:
    body = with_volumes(
        [{"image": "busybox", "name": "a", "volumeMounts": [
            {"name": "data", "mountPath": "/data/"}, {"name": "cfg", "mountPath": "/etc/app",
                                                      "readOnly": True}]},
         {"image": "busybox", "name": "b", "volumeMounts": [
             {"name": "data", "mountPath": "/srv", "readOnly": True}]}],
        [{"name": "data", "cinder": {"size": 2, "autoRemove": True}},
         {"name": "cfg", "cinder": {"volumeID": "app-config"}}])
    body["spec"]["initContainers"] = [{"image": "busybox", "volumeMounts": [
        {"name": "data", "mountPath": "/data"}]}]
    parsed = parse_template({"template": body}, LIMITS, False)
    assert parsed.volumes == [{"name": "data", "size": 2, "auto_remove": True},
                              {"name": "cfg", "source": "app-config", "auto_remove": False}]
    assert parsed.mounts == [   # init container first, as the members are
        [{"volume": "data", "destination": "/data", "read_only": False}],
        [{"volume": "data", "destination": "/data", "read_only": False},
         {"volume": "cfg", "destination": "/etc/app", "read_only": True}],
        [{"volume": "data", "destination": "/srv", "read_only": True}]]


def test_a_host_port_is_kept_beside_its_port_and_dns_config_on_the_capsule() -> None:
    parsed = parse_template({"template": tpl(
        [{"image": "busybox", "ports": [{"containerPort": 80, "hostPort": 8080},
                                        {"containerPort": 53, "protocol": "UDP"}]}],
        dnsConfig={"nameservers": ["10.0.0.2", "fd00::2"], "searches": ["a.test"],
                   "options": [{"name": "ndots", "value": "2"}]})},
        LIMITS, pull_allowed=False)
    assert parsed.members[0]["exposed_ports"] == {"80/tcp": {"hostPort": 8080}, "53/udp": {}}
    assert parsed.capsule["dns_config"] == {"nameservers": ["10.0.0.2", "fd00::2"],
                                            "searches": ["a.test"],
                                            "options": [{"name": "ndots", "value": "2"}]}
    assert parse_template({"template": tpl([{"image": "busybox"}])}, LIMITS,
                          pull_allowed=False).capsule["dns_config"] is None


@pytest.mark.parametrize(("spec", "field"), [
    ({"containers": [{"image": "busybox", "ports": [{"containerPort": 1, "hostPort": 9}]},
                     {"image": "busybox", "ports": [{"containerPort": 2, "hostPort": 9}]}]},
     "spec.containers[1].ports[0].hostPort"),
    ({"containers": [{"image": "busybox"}], "dnsConfig": {"nameservers": ["ns.test"]}},
     "spec.dnsConfig.nameservers[0]"),
])
def test_a_host_port_published_twice_or_a_name_server_by_name_is_a_400(
        spec: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidParameterValue, match=field.replace("[", r"\[")
                       .replace("]", r"\]")):
        parse_template({"template": {"kind": "capsule", "metadata": {"name": "cap"},
                                     "spec": spec}}, LIMITS, pull_allowed=False)


def test_the_same_host_port_over_tcp_and_udp_is_two_ports() -> None:
    parsed = parse_template({"template": tpl(
        [{"image": "busybox", "ports": [{"containerPort": 53, "hostPort": 53},
                                  {"containerPort": 53, "hostPort": 53, "protocol": "UDP"}]}])},
        LIMITS, pull_allowed=False)
    assert set(parsed.members[0]["exposed_ports"]) == {"53/tcp", "53/udp"}
