"""The container create and update bodies (api-v1.md §3, §7.2, §7.5), declared once.

:func:`create_schema` declares ``POST /v1/containers`` and :func:`update_schema`
``PATCH /v1/containers/{ident}``, as JSON Schema built from the configured bounds
(:class:`CreateLimits`); the declaration of the newest microversion is what
``/openapi.json`` publishes, and the only one that differs is that of 1.1-1.19, whose
``command`` is a string split with shell rules (Zun changes the type at 1.20).

:func:`validate_create` and :func:`validate_update` check a body against its
declaration (:mod:`berth.api.schemas.validation`), then normalise what a declaration
cannot (numbers given as strings, a shell-split command, defaults). Order of checks in
create: body shape and unknown keys, microversion gates, field values (all 400), then
admin-only fields and the deny-all ``privileged`` policy (403). Quota,
security-group, network and host resolution are done by the caller.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import random
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from berth.api.microversions import APIVersion
from berth.api.schemas import fields as F
from berth.api.schemas import types as T
from berth.api.schemas.validation import RequestSchema
from berth.common.exceptions import InvalidParameterValue, PolicyNotAuthorized
from berth.common.memo import built_once
from berth.image.reference import REFERENCE_PATTERN

GREEK_LETTERS = (
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
    "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau",
    "upsilon", "phi", "chi", "psi", "omega",
)

IMAGE_PULL_POLICIES = ("never", "always", "ifnotpresent")
CPU_POLICIES = ("dedicated", "shared")
MOUNT_TYPES = ("volume", "bind")
RESTART_POLICY_NAMES = ("no", "always", "on-failure", "unless-stopped")
_COMMAND_LIST_FROM = APIVersion(1, 20)
_TTY_INDEPENDENT_FROM = APIVersion(1, 36)


@dataclass(frozen=True)
class CreateLimits:
    """Configured bounds and defaults for create/update (filled by the API from config)."""

    min_memory: int = 4
    max_memory: int = 8192
    min_cpu: float = 0.1
    max_cpu: float = 16.0
    min_disk: int = 1
    max_disk: int = 160
    default_cpu: float = 1.0
    default_memory: int = 512
    image_driver_list: tuple[str, ...] = ("glance", "docker")
    default_image_driver: str = "docker"


# -- the declarations -------------------------------------------------------------------

NAME = F.described("A name must be 2 to 255 characters long, start with a letter or "
                   "digit and contain only letters, digits, '_', '.' and '-'.",
                   {"type": "string", "minLength": 2, "maxLength": 255,
                    "pattern": F.NAME})
_LEGACY_COMMAND = F.described(
    "At API versions before 1.20 the command is one string split with shell rules, "
    "e.g. \"sh -c 'echo hi'\"; JSON arrays need 1.20 or later.", {"type": "string"})
_COMMAND = F.described("From API version 1.20 the command is a JSON array of strings, "
                       "e.g. [\"sleep\", \"60\"].",
                       {"type": "array", "items": {"type": "string"}})
IMAGE = F.described(
    "An image reference of 2 to 255 characters in Docker's grammar, such as \"busybox\", "
    "\"busybox:1.36\" or \"127.0.0.1:5000/team/app:v1\": a lowercase repository path "
    "(letters, digits and '.', '_', '__' or '-' between them), optionally after a "
    "registry host, then an optional :tag and @digest.",
    {"type": "string", "minLength": 2, "maxLength": 255, "pattern": REFERENCE_PATTERN})
_HOST = F.described("It must be 1 to 255 characters of letters, digits, '-', '.' and '_'.",
                    {"type": "string", "minLength": 1, "maxLength": 255,
                     "pattern": F.HOST_NAME})
_HOSTNAME = F.described("A hostname is 1 to 63 characters (at most 63) of letters, digits, "
                        "'-', '.' and '_'.",
                        {"type": "string", "minLength": 1, "maxLength": 63,
                         "pattern": F.HOST_NAME})
_WORKDIR = F.described("The working directory must be an absolute path such as /srv/app.",
                       {"type": "string", "maxLength": 255, "pattern": "^(/.*)?$"})
_ENVIRONMENT = F.string_map(
    keys={"minLength": 1, "pattern": "^[^=]*$"},
    description="It must be a JSON object mapping non-empty names without '=' to string "
                "values, e.g. {\"PATH\": \"/bin\"}.")
_LABELS = F.string_map(keys={"minLength": 1}, description="It must be a JSON object with "
                                                           "string values, e.g. "
                                                           "{\"tier\": \"web\"}.")
_COUNT = {"anyOf": [{"type": "integer", "minimum": 0},
                    {"type": "string", "pattern": F.DIGITS}, F.NULL]}
_RESTART_POLICY = F.closed_object(
    {"Name": {"enum": list(RESTART_POLICY_NAMES)}, "MaximumRetryCount": _COUNT},
    required=("Name",),
    description=(f"It must be an object {{\"Name\": <{', '.join(RESTART_POLICY_NAMES)}>, "
                 f"\"MaximumRetryCount\": <integer of at least 0>}}; the count is only "
                 f"meaningful with 'on-failure' and must be 0 (or omitted) with 'always' "
                 f"and 'unless-stopped'."),
    **{"if": {"properties": {"Name": {"enum": ["always", "unless-stopped"]}}},
       "then": {"properties": {"MaximumRetryCount": {
           "anyOf": [{"const": 0}, {"type": "string", "pattern": "^0+$"}, F.NULL]}}}})
_HEALTHCHECK_SHAPE = ("It must be an object {\"cmd\": <shell command of 1 to 255 characters>, "
                      "\"interval\": <seconds>, \"retries\": <count>, \"timeout\": "
                      "<seconds>} with integers of at least 0; {} means no healthcheck.")
_HEALTHCHECK = F.described(_HEALTHCHECK_SHAPE, {"anyOf": [
    {"type": "object", "maxProperties": 0},
    F.closed_object({"cmd": {"type": "string", "maxLength": 255, "pattern": "\\S"},
                     "interval": _COUNT, "retries": _COUNT, "timeout": _COUNT},
                    required=("cmd",)),
    F.NULL]})
_PORT = ("^([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|"
         "6553[0-5])(/([tT][cC][pP]|[uU][dD][pP]))?$")
_EXPOSED_PORTS = F.described(
    "It must be an object such as {\"80/tcp\": {}, \"53/udp\": {}}: each key a port from 1 "
    "to 65535 with an optional /tcp or /udp (default tcp), each value {}.",
    {"type": "object", "propertyNames": {"pattern": _PORT},
     "additionalProperties": {"anyOf": [{"type": "object", "maxProperties": 0}, F.NULL]}})
_SECURITY_GROUPS = F.described(
    "It must be a JSON array of security group names or ids of 1 to 255 characters.",
    {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 255}})
NET = F.closed_object(
    {"network": F.string(1, 255, what="a network name or id"),
     "port": F.string(1, 255, what="a port name or id"),
     "v4-fixed-ip": F.described("'v4-fixed-ip' must be an IPv4 address.",
                                {"type": "string", "format": "ipv4"}),
     "v6-fixed-ip": F.described("'v6-fixed-ip' must be an IPv6 address.",
                                {"type": "string", "format": "ipv6"})},
    description="Each network request is an object with exactly one of 'network' or "
                "'port' and optionally 'v4-fixed-ip' and 'v6-fixed-ip'.",
    oneOf=[{"required": ["network"]}, {"required": ["port"]}])
_MOUNT_SHAPE = ("Each mount is an object with 'destination' (an absolute path) and "
                "'source' (a volume name or id; base64 file content for type 'bind'), "
                "'size' (GiB, for a new volume), or both (a local volume named 'source' "
                "made of that size on first use); 'type' is 'volume' (default) or "
                "'bind'.")
_MOUNT = F.closed_object(
    {"type": F.nullable(F.enum(MOUNT_TYPES)),
     "destination": F.described("'destination' must be an absolute path.",
                                {"type": "string", "pattern": "^/"}),
     # An empty source beside a size is no source (a new volume), as in Zun:
     # zun-ui sends {"source": "", "size": "1"} for a new volume.
     "source": {"type": "string"},
     "size": F.volume_size()},
    required=("destination",), description=_MOUNT_SHAPE,
    anyOf=[{"required": ["source"], "properties": {"source": {"minLength": 1}}},
           {"required": ["size"]}],
    **{"if": {"properties": {"type": {"const": "bind"}}, "required": ["type"]},
       "then": {"required": ["source"], "not": {"required": ["size"]},
                "properties": {"source": {"minLength": 1}}},
       "else": {"properties": {"source": {"maxLength": 255}}}})


def _cpu_schema(limits: CreateLimits) -> F.Schema:
    return F.number_like(limits.min_cpu, limits.max_cpu, what="a number of CPUs")


def _memory_schema(limits: CreateLimits) -> F.Schema:
    return F.integer_like(limits.min_memory, limits.max_memory, what="a whole number of MiB")


def _fields(limits: CreateLimits, legacy_command: bool) -> dict[str, F.Schema]:
    n = F.nullable
    return {
        "image": IMAGE,
        "name": n(NAME),
        "command": n(_LEGACY_COMMAND if legacy_command else _COMMAND),
        "entrypoint": F.since("1.40", n(F.string_list())),
        "cpu": n(_cpu_schema(limits)),
        "memory": n(_memory_schema(limits)),
        "disk": n(F.integer_like(limits.min_disk, limits.max_disk,
                                 what="a whole number of GiB")),
        "cpu_policy": n(F.enum(CPU_POLICIES)),
        "workdir": n(_WORKDIR),
        "environment": n(_ENVIRONMENT),
        "labels": n(_LABELS),
        "hints": n(F.json_object()),
        "image_pull_policy": n(F.enum(IMAGE_PULL_POLICIES, fold_case=True)),
        "image_driver": n(F.described(
            f"It must be one of: {', '.join(limits.image_driver_list)} (or \"None\").",
            {"enum": [*limits.image_driver_list, "None"]})),
        "restart_policy": n(_RESTART_POLICY),
        "interactive": F.strict_bool(),
        "tty": F.strict_bool(),
        "auto_remove": F.since("1.3", F.described(
            "It must be a JSON boolean (true or false) or null.",
            {"type": ["boolean", "null"]})),
        "auto_heal": F.strict_bool(),
        "runtime": F.since("1.5", n(F.string(1, 32, what="a Docker runtime name"))),
        "hostname": F.since("1.9", n(_HOSTNAME)),
        "security_groups": n(_SECURITY_GROUPS),
        "nets": n(F.described(f"It must be a JSON array. {NET['description']}",
                              {"type": "array", "items": NET})),
        "mounts": F.since("1.11", n(F.described(f"It must be a JSON array. {_MOUNT_SHAPE}",
                                                {"type": "array", "items": _MOUNT})),
                          empty_is_absent=True),
        "availability_zone": n(F.string(1, 255)),
        "privileged": F.since("1.21", n(F.strict_bool())),
        "healthcheck": F.since("1.22", _HEALTHCHECK, empty_is_absent=True),
        "exposed_ports": F.since("1.24", n(_EXPOSED_PORTS)),
        "registry": F.since("1.31", n(F.string(2, 255, what="a registry uuid or name")),
                            empty_is_absent=True),
        "host": F.since("1.39", n(_HOST)),
    }


#: Zun's rule across two fields: exposing ports gives the container its own security group.
_PORTS_AND_GROUPS: F.Schema = {
    "description": "'security_groups' and 'exposed_ports' cannot be used together: exposing "
                   "ports gives the container its own security group. Send only one of them.",
    "required": ["security_groups", "exposed_ports"],
    "properties": {"security_groups": {"type": "array", "minItems": 1},
                   "exposed_ports": {"type": "object", "minProperties": 1}}}


@built_once(maxsize=16)
def create_schema(limits: CreateLimits, legacy_command: bool = False) -> RequestSchema:
    """``POST /v1/containers``; ``legacy_command`` for microversions before 1.20."""
    schema = F.closed_object(_fields(limits, legacy_command), required=("image",),
                             description="A container to create (at the newest "
                                         "microversion; see each field's x-min-version).",
                             **{"not": _PORTS_AND_GROUPS})
    return RequestSchema(schema, what="container create", shape="with at least 'image'",
                         hint="name the image to run, e.g. {\"image\": \"busybox:latest\"}.")


@built_once(maxsize=16)
def update_schema(limits: CreateLimits) -> RequestSchema:
    """``PATCH /v1/containers/{ident}`` (and the resize action's cpu and memory)."""
    schema = F.closed_object({"cpu": _cpu_schema(limits), "memory": _memory_schema(limits),
                              "name": NAME, "auto_heal": F.strict_bool()},
                             description="The fields of a container that change in place.",
                             minProperties=1)
    return RequestSchema(schema, what="container update",
                         shape="with at least one of cpu, memory, name, auto_heal")


# -- normalisation ----------------------------------------------------------------------

def generate_name(rng: random.Random | None = None) -> str:
    """A default container name, ``<greek letter>-<1..24>-container``."""
    chooser = rng or random.SystemRandom()
    return f"{chooser.choice(GREEK_LETTERS)}-{chooser.randint(1, 24)}-container"


def parse_run_flag(value: object) -> bool:
    """``?run=`` on create: an extended boolean; absent, ``None`` or ``"None"`` is False."""
    if T.is_none_string(value):
        return False
    return T.extended_bool("run", value)


def _truth(value: object) -> bool:
    """A value the declaration accepted as a boolean (JSON or true/True/false/False)."""
    return value is True or value in ("true", "True")


def _in_range(field: str, value: float | str, minimum: float, maximum: float,
              limits: CreateLimits) -> float:
    """A number the declaration accepted as a number or a numeric string, within bounds
    (a pattern cannot bound a numeric string)."""
    number = float(value)
    if not minimum <= number <= maximum:
        raise T.invalid(field, value, update_schema(limits).describe(field)
                        if field != "disk" else create_schema(limits).describe(field))
    return number


def _memory(value: float | str, limits: CreateLimits) -> str:
    return str(int(_in_range("memory", value, limits.min_memory, limits.max_memory,
                             limits)))


def _cpu(value: float | str, limits: CreateLimits) -> float:
    return _in_range("cpu", value, limits.min_cpu, limits.max_cpu, limits)


def _command(value: str | list[str] | None, version: APIVersion) -> list[str] | None:
    if value is None:
        return None
    if version >= _COMMAND_LIST_FROM:
        return list(value)
    try:
        words = shlex.split(str(value), posix=True)
    except ValueError as exc:
        raise T.invalid("command", value, f"It cannot be split with shell rules ({exc}); "
                                          f"check the quotes.") from None
    return words or None


def _count(value: int | str | None) -> int:
    return 0 if value is None else int(value)


def _restart_policy(value: dict[str, Any]) -> dict[str, str]:
    count = 0 if value["Name"] == "no" else _count(value.get("MaximumRetryCount"))
    return {"Name": str(value["Name"]), "MaximumRetryCount": str(count)}


def _healthcheck(value: dict[str, Any] | None) -> dict[str, object] | None:
    if not value:
        return None
    stored: dict[str, object] = {"test": value["cmd"]}
    for key in ("interval", "retries", "timeout"):
        stored[key] = _count(value.get(key))
    return stored


def _exposed_ports(value: dict[str, Any] | None) -> dict[str, dict[str, object]] | None:
    if value is None:
        return None
    ports: dict[str, dict[str, object]] = {}
    for key in value:
        port, _, proto = key.partition("/")
        ports[f"{int(port)}/{proto.lower() or 'tcp'}"] = {}
    return ports


def _unique(items: list[str] | None) -> list[str]:
    return list(dict.fromkeys(items or []))


def parse_nets(value: list[dict[str, str]] | None) -> list[dict[str, str]]:
    """A create's ``nets`` (a container's or a capsule's), normalised."""
    nets: list[dict[str, str]] = []
    for item in value or []:
        entry: dict[str, str] = {k: item[k] for k in ("network", "port") if k in item}
        for key, kind in (("v4-fixed-ip", ipaddress.IPv4Address),
                          ("v6-fixed-ip", ipaddress.IPv6Address)):
            if key in item:
                entry[key] = str(kind(item[key]))
        nets.append(entry)
    return nets


def _mounts(value: list[dict[str, Any]] | None) -> list[dict[str, object]]:
    mounts: list[dict[str, object]] = []
    for index, item in enumerate(value or []):
        kind = item.get("type") or "volume"
        entry: dict[str, object] = {"type": kind, "destination": item["destination"]}
        if "source" in item:
            if kind == "bind":
                try:
                    base64.b64decode(item["source"], validate=True)
                except (binascii.Error, ValueError):
                    raise T.invalid(f"mounts[{index}]", item,
                                    "The 'source' of a 'bind' mount must be base64-encoded "
                                    "file content.") from None
            entry["source"] = item["source"]
        if "size" in item:
            entry["size"] = int(item["size"])
        mounts.append(entry)
    return mounts


@dataclass(frozen=True)
class CreateRequest:
    """A checked, normalised container create body.

    ``fields`` holds every ``container`` column the API sets from the body (``name,
    image, command, entrypoint, cpu, memory, disk, cpu_policy, workdir, environment,
    labels, image_pull_policy, image_driver, restart_policy, interactive, tty,
    auto_remove, auto_heal, runtime, hostname, security_groups, healthcheck,
    exposed_ports, privileged``) with defaults applied; the other attributes are the
    body's fields that are not columns, for the caller to resolve (scheduler hints,
    networks, mounts, zone, registry, host). Copy ``fields`` before adding to it.
    """

    fields: dict[str, object]
    hints: dict[str, object]
    nets: list[dict[str, str]]
    mounts: list[dict[str, object]]
    availability_zone: str | None
    registry: str | None
    requested_host: str | None


#: Body fields that need a rule of their own (admin by default): any non-null value,
#: even ``privileged: false``, is checked.
_GUARDED_FIELDS = (("privileged", "container:create:privileged"),
                   ("runtime", "container:create:runtime"),
                   ("image_pull_policy", "container:create:image_pull_policy"),
                   ("host", "container:create:requested_destination"))


def _check_policies(body: dict[str, object], allows: Callable[[str], bool]) -> None:
    for key, rule in _GUARDED_FIELDS:
        if body.get(key) is not None and not allows(rule):
            raise PolicyNotAuthorized(action=rule)


def validate_create(body: object, version: APIVersion, allows: Callable[[str], bool],
                    limits: CreateLimits) -> CreateRequest:
    """Check a container create body against its declaration, and normalise it into a
    :class:`CreateRequest`. ``allows(rule)`` answers whether the caller passes a policy
    rule (fields guarded by their own).
    """
    latest = create_schema(limits)
    data = latest.check_shape(body)
    latest.check_versions(data, version)
    create_schema(limits, legacy_command=version < _COMMAND_LIST_FROM).check(data)

    interactive = _truth(data.get("interactive"))
    tty = _truth(data.get("tty"))
    if _COMMAND_LIST_FROM <= version < _TTY_INDEPENDENT_FROM and "interactive" in data:
        tty = interactive  # before 1.36, asking for stdin also meant a terminal
    exposed_ports = _exposed_ports(data.get("exposed_ports"))
    security_groups = _unique(data.get("security_groups"))
    if exposed_ports and security_groups:
        raise InvalidParameterValue(
            err="'security_groups' and 'exposed_ports' cannot be used together: exposing "
                "ports gives the container its own security group. Send only one of them."
        )
    cpu, memory, disk = data.get("cpu"), data.get("memory"), data.get("disk")
    image_driver = data.get("image_driver")
    pull_policy = data.get("image_pull_policy")
    restart_policy = data.get("restart_policy")
    columns: dict[str, object] = {
        "name": data.get("name") or generate_name(),
        "image": data["image"],
        "command": _command(data.get("command"), version),
        "entrypoint": data.get("entrypoint"),
        "cpu": limits.default_cpu if cpu is None else _cpu(cpu, limits),
        "memory": str(limits.default_memory) if memory is None else _memory(memory, limits),
        "disk": None if disk is None else int(_in_range(
            "disk", disk, limits.min_disk, limits.max_disk, limits)),
        "cpu_policy": data.get("cpu_policy") or "shared",
        "workdir": data.get("workdir") or None,
        "environment": data.get("environment") or {},
        "labels": data.get("labels") or {},
        "image_pull_policy": None if pull_policy is None else str(pull_policy).lower(),
        "image_driver": limits.default_image_driver if T.is_none_string(image_driver)
        else image_driver,
        "restart_policy": None if restart_policy is None else _restart_policy(
            restart_policy),
        "interactive": interactive,
        "tty": tty,
        "auto_remove": bool(data.get("auto_remove")),
        "auto_heal": _truth(data.get("auto_heal")),
        "runtime": data.get("runtime"),
        "hostname": data.get("hostname"),
        "security_groups": security_groups,
        "healthcheck": _healthcheck(data.get("healthcheck")),
        "exposed_ports": exposed_ports,
        "privileged": _truth(data.get("privileged")),
    }
    request = CreateRequest(
        fields=columns, hints=data.get("hints") or {}, nets=parse_nets(data.get("nets")),
        mounts=_mounts(data.get("mounts")), availability_zone=data.get("availability_zone"),
        registry=data.get("registry"), requested_host=data.get("host"))
    _check_policies(data, allows)
    return request


def validate_update(body: object, limits: CreateLimits) -> dict[str, object]:
    """Check a PATCH body (a non-empty subset of cpu, memory, name, auto_heal).

    Returns only the keys sent, normalised like create (cpu float, memory str).
    """
    data = update_schema(limits).check(body)
    changes: dict[str, object] = {}
    if "cpu" in data:
        changes["cpu"] = _cpu(data["cpu"], limits)
    if "memory" in data:
        changes["memory"] = _memory(data["memory"], limits)
    if "name" in data:
        changes["name"] = data["name"]
    if "auto_heal" in data:
        changes["auto_heal"] = _truth(data["auto_heal"])
    return changes
