"""The capsule create body (api-v1.md §8), declared once, and what it becomes.

``POST /v1/capsules`` carries ``{"template": ...}``: a pod template as an object, or
as a JSON or YAML string (what ``zun capsule-create -f`` reads from a file). The
template is declared as Zun's schema is, with two differences: every part of it is
checked (Zun leaves ``initContainers`` unchecked, answers 500 for some bad volumes
and ignores a mount of an undeclared volume: here each is a 400 naming the field),
``readOnly`` mounts are read-only (Zun ignores the flag), and the deprecated top-level
``restartPolicy`` is honoured when ``spec`` names none (Zun ignores it).

:func:`parse_template` returns the capsule's row values and its members' (init
containers first, in the template's order), with Zun's sums: the capsule's cpu and
memory are the sums of its containers' requests (a container without one counts the
configured default), raised to the largest init container's request.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from berth.api.schemas import fields as F
from berth.api.schemas import types as T
from berth.api.schemas.container import (
    IMAGE,
    IMAGE_PULL_POLICIES,
    NAME,
    NET,
    CreateLimits,
    generate_name,
    parse_nets,
)
from berth.api.schemas.validation import RequestSchema
from berth.common.exceptions import InvalidParameterValue
from berth.common.memo import built_once

RESTART_POLICIES = {"Always": "always", "OnFailure": "on-failure", "Never": "no"}
_PORT = F.described("A port from 1 to 65535.",
                    {"type": "integer", "minimum": 1, "maximum": 65535})
_VOLUME_NAME = F.described("A volume's name: letters, digits, '-', '_' and '.', up to 63.",
                           {"type": "string", "minLength": 1, "maxLength": 63,
                            "pattern": "^[a-zA-Z0-9][a-zA-Z0-9_.-]*$"})


_DNS_CONFIG = F.closed_object({
    "nameservers": F.described("Up to 3 name servers' IP addresses.",
                               {"type": "array", "maxItems": 3,
                                "items": {"type": "string", "minLength": 2, "maxLength": 45,
                                          "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}}),
    "searches": F.described("Up to 6 search domains.",
                            {"type": "array", "maxItems": 6,
                             "items": {"type": "string", "minLength": 1, "maxLength": 253,
                                       "pattern": "^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9.])?$"}}),
    "options": F.described(
        "A JSON array of {\"name\": <a resolver option such as ndots>, \"value\": ...}.",
        {"type": "array", "maxItems": 16, "items": F.closed_object(
            {"name": {"type": "string", "minLength": 1, "maxLength": 64,
                      "pattern": "^[A-Za-z0-9_-]+$"},
             "value": {"type": "string", "maxLength": 64, "pattern": "^[A-Za-z0-9_.-]*$"}},
            required=("name",))}),
}, description="The pod's resolver: {\"nameservers\": [...], \"searches\": [...], "
               "\"options\": [{\"name\": ..., \"value\": ...}]} (berth: the sandbox's "
               "resolv.conf, shared by its members).")


def _member(limits: CreateLimits) -> F.Schema:
    return F.closed_object({
        "image": IMAGE,
        "name": F.described("The member's name in the template: unique within the "
                            "capsule; the container is named capsule-<capsule>-<name>.",
                            {"type": "string", "minLength": 1, "maxLength": 63,
                             "pattern": "^[a-zA-Z0-9][a-zA-Z0-9_.-]*$"}),
        "command": F.string_list(),
        "args": F.string_list("[\"-c\", \"echo hi\"] (appended to the command)"),
        "resources": F.closed_object({"requests": F.closed_object({
            "cpu": F.number_like(limits.min_cpu, limits.max_cpu, what="a number of CPUs"),
            "memory": F.integer_like(limits.min_memory, limits.max_memory,
                                     what="a whole number of MiB")})},
            description="{\"requests\": {\"cpu\": <CPUs>, \"memory\": <MiB>}}."),
        "ports": F.described(
            "A JSON array of {\"containerPort\": <1-65535>, \"protocol\": \"TCP\" or "
            "\"UDP\", \"name\": ..., \"hostPort\": ...}.",
            {"type": "array", "items": F.closed_object(
                {"containerPort": _PORT, "hostPort": _PORT,
                 "name": {"type": "string", "maxLength": 255},
                 "protocol": {"enum": ["TCP", "UDP", "tcp", "udp"]}},
                required=("containerPort",))}),
        "volumeMounts": F.described(
            "A JSON array of {\"name\": <a volume of spec.volumes>, \"mountPath\": "
            "<an absolute path>, \"readOnly\": <boolean>}.",
            {"type": "array", "items": F.closed_object(
                {"name": _VOLUME_NAME,
                 "mountPath": F.described("'mountPath' must be an absolute path.",
                                          {"type": "string", "pattern": "^/.",
                                           "maxLength": 255}),
                 "readOnly": F.described("A JSON boolean.", {"type": "boolean"})},
                required=("name", "mountPath"))}),
        "env": F.string_map(keys={"minLength": 1, "pattern": "^[^=]*$"},
                            description="It must be a JSON object mapping names without "
                                        "'=' to string values, e.g. {\"PATH\": \"/bin\"}."),
        "workDir": F.described("The working directory must be an absolute path such as "
                               "/srv/app.", {"type": "string", "maxLength": 255,
                                             "pattern": "^/"}),
        "imagePullPolicy": F.enum(("IfNotPresent", "Always", "Never", *IMAGE_PULL_POLICIES),
                                  fold_case=True),
        "stdin": F.described("A JSON boolean.", {"type": "boolean"}),
        "tty": F.described("A JSON boolean.", {"type": "boolean"}),
    }, required=("image",), description="A member container: its image, and optionally "
                                        "name, command, args, resources, ports, env, "
                                        "workDir, imagePullPolicy, stdin, tty.")


def _template(limits: CreateLimits) -> F.Schema:
    member = _member(limits)
    policy = F.enum(tuple(RESTART_POLICIES))
    return F.closed_object({
        "kind": F.enum(("capsule", "Capsule")),
        "capsuleVersion": F.enum(("beta", "Beta")),
        "metadata": F.closed_object({
            "name": NAME,
            "labels": F.string_map(keys={"minLength": 1}, description="It must be a JSON "
                                   "object with string values, e.g. {\"app\": \"web\"}."),
            "annotations": F.string_map(keys={"minLength": 1}, description="It must be a "
                                        "JSON object with string values."),
        }, description="{\"name\": ..., \"labels\": {...}, \"annotations\": {...}}."),
        "spec": F.closed_object({
            "containers": F.described("One or more member containers.",
                                      {"type": "array", "minItems": 1, "items": member}),
            "initContainers": F.described(
                "Containers run to completion, in order, before the containers start.",
                {"type": "array", "items": {"allOf": [member, _NO_HOST_PORT]}}),
            "volumes": F.described(
                "A JSON array of {\"name\": ..., \"cinder\": {\"volumeID\": <an existing "
                "volume's id or name> or \"size\": <GiB>, \"autoRemove\": <boolean>}}.",
                {"type": "array", "items": F.closed_object(
                    {"name": _VOLUME_NAME,
                     "cinder": F.closed_object(
                         {"volumeID": {"type": "string", "minLength": 1, "maxLength": 255},
                          "size": F.volume_size(),
                          "autoRemove": F.described("A JSON boolean.", {"type": "boolean"})},
                         description="Exactly one of 'volumeID' (an existing volume) and "
                                     "'size' (a new one, in GiB), and 'autoRemove'.",
                         oneOf=[{"required": ["volumeID"]}, {"required": ["size"]}])},
                    required=("name", "cinder"))}),
            "restartPolicy": policy,
            "dnsConfig": _DNS_CONFIG,
        }, required=("containers",), description="{\"containers\": [...], "
                                                   "\"initContainers\": [...], "
                                                   "\"restartPolicy\": ...}."),
        "restartPolicy": F.described("Deprecated here: put it in spec.", policy),
        "availabilityZone": F.string(1, 255),
    }, required=("kind", "metadata", "spec"),
        description="A capsule template (Zun's pod template).")


#: An init container publishes no port: it has ended before anyone connects.
_NO_HOST_PORT: F.Schema = {"properties": {"ports": {"items": {"not": {
    "description": "An init container cannot publish a port: publish it from a container.",
    "required": ["hostPort"]}}}}}


@built_once(maxsize=8)
def template_schema(limits: CreateLimits) -> RequestSchema:
    return RequestSchema(_template(limits), what="capsule template", full_paths=True,
                         eager=False, shape="with 'kind', 'metadata' and 'spec'",
                         hint="a template has kind: capsule, metadata: {name: ...} and "
                              "spec: {containers: [{image: ...}]}.")


@built_once(maxsize=8)
def create_schema(limits: CreateLimits) -> RequestSchema:
    """``POST /v1/capsules``: ``{"template": <object, or JSON/YAML text of one>}``."""
    template = template_schema(limits).schema
    return RequestSchema(
        F.closed_object({"template": F.described(
            "The capsule template: an object, or its JSON or YAML text.",
            {"anyOf": [template, {"type": "string", "maxLength": 1048576,
                                  "x-text-form": True}]}),
            # berth: the pod's networks, as a container's (the project's default
            # network when absent; local networks only).
            "nets": F.described(f"It must be a JSON array. {NET['description']}",
                                {"type": "array", "items": NET})},
            required=("template",), description="A capsule to create."),
        what="capsule create", shape="such as {\"template\": {\"kind\": \"capsule\", ...}}",
        hint="send {\"template\": <the capsule template>}.", eager=False)


@dataclass
class ParsedCapsule:
    """A template made into rows: the capsule's values, then its members' (init
    containers first), and where to schedule it."""

    capsule: dict[str, Any]
    members: list[dict[str, Any]] = field(default_factory=list)
    availability_zone: str | None = None
    #: The template's volumes: ``{"name", "source" (volumeID) or "size",
    #: "auto_remove"}``, in its order.
    volumes: list[dict[str, Any]] = field(default_factory=list)
    #: Each member's mounts (same order as ``members``): ``{"volume": <a name of
    #: volumes>, "destination", "read_only"}``.
    mounts: list[list[dict[str, Any]]] = field(default_factory=list)
    #: The body's ``nets``, as a container create's.
    nets: list[dict[str, str]] = field(default_factory=list)


def parse_template(body: object, limits: CreateLimits, pull_allowed: bool) -> ParsedCapsule:
    outer = create_schema(limits).check_shape(body)
    raw = outer["template"]
    if isinstance(raw, str):
        raw = _decode(raw)
    template = template_schema(limits).check(raw)
    create_schema(limits).check({**outer, "template": template})   # 'nets' as declared
    spec, metadata = template["spec"], template.get("metadata") or {}
    capsule_name = metadata.get("name") or generate_name().replace("container", "capsule")
    _check_names(spec)
    policy = RESTART_POLICIES[spec.get("restartPolicy") or template.get("restartPolicy")
                              or "Always"]
    inits = [_member_values(item, f"spec.initContainers[{i}]", capsule_name, limits,
                            pull_allowed, init=True)
             for i, item in enumerate(spec.get("initContainers") or [])]
    members = [_member_values(item, f"spec.containers[{i}]", capsule_name, limits, pull_allowed,
                              policy=policy)
               for i, item in enumerate(spec["containers"])]
    cpu = sum(m["cpu"] for m in members)
    memory = sum(int(m["memory"]) for m in members)
    cpu = max([cpu, *(m["cpu"] for m in inits)])
    memory = max([memory, *(int(m["memory"]) for m in inits)])
    items = [*(spec.get("initContainers") or []), *spec["containers"]]
    where = [*(f"spec.initContainers[{i}]" for i in range(len(inits))),
             *(f"spec.containers[{i}]" for i in range(len(members)))]
    _check_host_ports(items, where)
    capsule = {"name": capsule_name, "labels": metadata.get("labels") or {},
               "annotations": metadata.get("annotations") or {},
               "restart_policy": {"Name": policy, "MaximumRetryCount": "0"},
               "cpu": round(cpu, 6), "memory": str(memory),
               "dns_config": _dns_config(spec.get("dnsConfig"))}
    volumes, mounts = _volumes(spec.get("volumes") or [], items, where)
    return ParsedCapsule(capsule, inits + members, template.get("availabilityZone"),
                         volumes, mounts, parse_nets(outer.get("nets")))


def _volumes(declared: list[dict[str, Any]], items: list[dict[str, Any]], where: list[str]
             ) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """The template's volumes and each member's mounts of them. Every mount names a
    declared volume and every declared volume is mounted (Zun ignores the first and
    refuses the second); a member mounts one path once."""
    volumes: dict[str, dict[str, Any]] = {}
    for index, item in enumerate(declared):
        if item["name"] in volumes:
            raise T.invalid(f"spec.volumes[{index}].name", item["name"],
                            "Each volume's name must be unique within the capsule.")
        cinder = item["cinder"]
        volume: dict[str, Any] = {"name": item["name"],
                                  "auto_remove": bool(cinder.get("autoRemove", False))}
        if "volumeID" in cinder:
            volume["source"] = cinder["volumeID"]
        else:
            volume["size"] = int(cinder["size"])
        volumes[item["name"]] = volume
    used: set[str] = set()
    mounts: list[list[dict[str, Any]]] = []
    for item, member_where in zip(items, where, strict=True):
        paths: set[str] = set()
        member_mounts: list[dict[str, Any]] = []
        for index, mount in enumerate(item.get("volumeMounts") or []):
            field_name = f"{member_where}.volumeMounts[{index}]"
            if mount["name"] not in volumes:
                raise T.invalid(f"{field_name}.name", mount["name"],
                                "It must name a volume declared in spec.volumes.")
            path = mount["mountPath"].rstrip("/")
            if path in paths:
                raise T.invalid(f"{field_name}.mountPath", mount["mountPath"],
                                "The member already mounts a volume there.")
            paths.add(path)
            used.add(mount["name"])
            member_mounts.append({"volume": mount["name"], "destination": path,
                                  "read_only": bool(mount.get("readOnly", False))})
        mounts.append(member_mounts)
    for index, item in enumerate(declared):
        if item["name"] not in used:
            raise T.invalid(f"spec.volumes[{index}].name", item["name"],
                            "No member mounts this volume: mount it with volumeMounts, or "
                            "remove it.")
    return list(volumes.values()), mounts


def _check_host_ports(items: list[dict[str, Any]], where: list[str]) -> None:
    """A host port (and protocol) is published once per capsule; an init container
    publishes nothing (it has ended before anyone connects)."""
    seen: dict[tuple[int, str], str] = {}
    for item, member_where in zip(items, where, strict=True):
        for index, port in enumerate(item.get("ports") or []):
            if not port.get("hostPort"):
                continue
            field_name = f"{member_where}.ports[{index}].hostPort"
            if member_where.startswith("spec.initContainers"):
                raise T.invalid(field_name, port["hostPort"],
                                "An init container cannot publish a port: publish it "
                                "from a container.")
            key = (int(port["hostPort"]), (port.get("protocol") or "TCP").lower())
            if key in seen:
                raise T.invalid(field_name, port["hostPort"],
                                f"{seen[key]} publishes it already: each host port is "
                                f"published once.")
            seen[key] = field_name


def _dns_config(config: dict[str, Any] | None) -> dict[str, Any] | None:
    """``spec.dnsConfig`` as stored; every name server must be an IP address."""
    if not config:
        return None
    for index, server in enumerate(config.get("nameservers") or []):
        try:
            ipaddress.ip_address(server)
        except ValueError:
            raise T.invalid(f"spec.dnsConfig.nameservers[{index}]", server,
                            "It must be an IP address such as 10.0.0.2.") from None
    return {"nameservers": list(config.get("nameservers") or []),
            "searches": list(config.get("searches") or []),
            "options": [dict(o) for o in config.get("options") or []]}


def _decode(text: str) -> Any:
    """A template sent as JSON or YAML text."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        raise T.invalid("template", text, f"It is neither JSON nor YAML: "
                                          f"{getattr(err, 'problem', None) or err}{at}.") \
            from None


def _check_names(spec: dict[str, Any]) -> None:
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        for index, item in enumerate(spec.get(key) or []):
            name = item.get("name")
            if name is None:
                continue
            if name in seen:
                raise InvalidParameterValue(
                    err=f"Invalid input for field 'spec.{key}[{index}].name'. Value: "
                        f"'{name}'. Each member's name must be unique within the capsule.")
            seen.add(name)


def _member_values(item: dict[str, Any], where: str, capsule_name: str,
                   limits: CreateLimits, pull_allowed: bool, *, init: bool = False,
                   policy: str = "no") -> dict[str, Any]:
    """A member's row values (container_type 3 for an init container, else 2)."""
    requests = (item.get("resources") or {}).get("requests") or {}
    command = list(item.get("command") or []) + list(item.get("args") or [])
    short = item.get("name") or where.rsplit("[", 1)[-1].rstrip("]")
    short = f"init-{short}" if init and not item.get("name") else short
    values: dict[str, Any] = {
        "container_type": 3 if init else 2,
        "name": f"capsule-{capsule_name}-{short}"[:255],
        "image": item["image"],
        "command": command or None,
        "cpu": float(requests.get("cpu", limits.default_cpu)),
        "memory": str(int(requests.get("memory", limits.default_memory))),
        "environment": item.get("env") or {},
        "workdir": item.get("workDir"),
        "interactive": bool(item.get("stdin")),
        "tty": bool(item.get("tty")),
        "restart_policy": {"Name": "no" if init else policy, "MaximumRetryCount": "0"},
        # A hostPort is kept beside the port it publishes (the sandbox publishes it).
        "exposed_ports": {f"{p['containerPort']}/{(p.get('protocol') or 'TCP').lower()}":
                          ({"hostPort": p["hostPort"]} if p.get("hostPort") else {})
                          for p in item.get("ports") or []} or None,
        "image_pull_policy": _pull_policy(item.get("imagePullPolicy"), pull_allowed),
        "labels": {},
        "security_groups": [],
    }
    _check_range(f"{where}.resources.requests.cpu", values["cpu"], limits.min_cpu,
                 limits.max_cpu)
    _check_range(f"{where}.resources.requests.memory", int(values["memory"]),
                 limits.min_memory, limits.max_memory)
    return values


def _pull_policy(value: str | None, pull_allowed: bool) -> str | None:
    """Lower-cased; dropped unless the caller passes container:create:image_pull_policy
    (Zun's behaviour). None: the node's ``[DEFAULT]image_pull_policy``, as for a
    container that names none."""
    if value is None or not pull_allowed:
        return None
    return value.lower()


def _check_range(field: str, value: float, minimum: float, maximum: float) -> None:
    if not minimum <= value <= maximum:
        raise T.invalid(field, value, f"It must be{F.bounds_text(minimum, maximum)}.")
