"""Validation of container create and update requests (api-v1.md §3, §7.2, §7.5).

:func:`validate_create` turns the body of ``POST /v1/containers`` into a dict keyed by
``container`` column names plus request-only extras prefixed with ``_``;
:func:`validate_update` does the same for ``PATCH /v1/containers/{ident}``, and
:func:`parse_run_flag` reads ``?run=``. Order of checks in create: body shape and
unknown keys, microversion gates, field values (all 400), then admin-only fields and
the deny-all ``privileged`` policy (403). Quota, security-group, network and host
resolution are done by the caller.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import random
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from berth.api.microversions import APIVersion
from berth.api.schemas import types as T
from berth.common.exceptions import (
    InvalidParameterValue,
    InvalidParamInVersion,
    PolicyNotAuthorized,
)

_V = TypeVar("_V")

GREEK_LETTERS = (
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
    "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau",
    "upsilon", "phi", "chi", "psi", "omega",
)

#: Every key a create body may carry (version gates are applied separately).
CREATE_FIELDS = frozenset({
    "image", "name", "command", "entrypoint", "cpu", "memory", "disk", "cpu_policy",
    "workdir", "environment", "labels", "hints", "image_pull_policy", "image_driver",
    "restart_policy", "interactive", "tty", "auto_remove", "auto_heal", "runtime",
    "hostname", "security_groups", "nets", "mounts", "availability_zone", "privileged",
    "healthcheck", "exposed_ports", "registry", "host",
})

#: Field -> first microversion that accepts it (§3).
VERSION_GATES: dict[str, str] = {
    "auto_remove": "1.3", "runtime": "1.5", "hostname": "1.9", "mounts": "1.11",
    "privileged": "1.21", "healthcheck": "1.22", "exposed_ports": "1.24",
    "registry": "1.31", "host": "1.39", "entrypoint": "1.40",
}
# For these an empty value counts as "not sent" (zunclient always sends "mounts": []).
_EMPTY_IS_ABSENT = frozenset({"mounts", "healthcheck", "registry"})

UPDATE_FIELDS = ("cpu", "memory", "name", "auto_heal")
IMAGE_PULL_POLICIES = ("never", "always", "ifnotpresent")
CPU_POLICIES = ("dedicated", "shared")
MOUNT_TYPES = ("volume", "bind")
_NET_KEYS = frozenset({"network", "port", "v4-fixed-ip", "v6-fixed-ip"})
_MOUNT_KEYS = frozenset({"type", "source", "destination", "size"})
_COMMAND_LIST_FROM = APIVersion(1, 20)
_TTY_INDEPENDENT_FROM = APIVersion(1, 36)


@dataclass
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


def generate_name(rng: random.Random | None = None) -> str:
    """A default container name, ``<greek letter>-<1..24>-container``."""
    chooser = rng or random.SystemRandom()
    return f"{chooser.choice(GREEK_LETTERS)}-{chooser.randint(1, 24)}-container"


def parse_run_flag(value: object) -> bool:
    """``?run=`` on create: an extended boolean; absent, ``None`` or ``"None"`` is False."""
    if T.is_none_string(value):
        return False
    return T.extended_bool("run", value)


def _opt(body: dict[str, object], key: str, parser: Callable[[str, object], _V]) -> _V | None:
    """``parser(key, body[key])``, or None when the key is absent or null."""
    value = body.get(key)
    return None if value is None else parser(key, value)


def _check_keys(body: object, allowed: frozenset[str] | tuple[str, ...], what: str,
                needed: str) -> dict[str, object]:
    if not isinstance(body, dict):
        raise InvalidParameterValue(err=f"The request body must be a JSON object {needed}.")
    unknown = sorted(str(key) for key in body if key not in allowed)
    if unknown:
        listed = ", ".join(repr(key) for key in unknown)
        verb = "was" if len(unknown) == 1 else "were"
        raise InvalidParameterValue(
            err=f"Additional properties are not allowed ({listed} {verb} unexpected): "
                f"the {what} request accepts only {', '.join(sorted(allowed))}. "
                f"Check the spelling of the field names."
        )
    return body


def _check_versions(body: dict[str, object], version: APIVersion) -> None:
    for key, minimum in VERSION_GATES.items():
        value = body.get(key)
        sent = bool(value) if key in _EMPTY_IS_ABSENT else value is not None
        if sent and not version.at_least(minimum):
            raise InvalidParamInVersion(param=key, req_version=str(version),
                                        min_version=minimum)


def _command(value: object, version: APIVersion) -> list[str] | None:
    if value is None:
        return None
    if version >= _COMMAND_LIST_FROM:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise T.invalid("command", value, "From API version 1.20 the command is a JSON "
                                              "array of strings, e.g. [\"sleep\", \"60\"].")
        return list(value)
    if not isinstance(value, str):
        raise T.invalid("command", value, f"At API version {version} the command is one "
                                          f"string split with shell rules, e.g. "
                                          f"\"sh -c 'echo hi'\"; JSON arrays need 1.20 or later.")
    try:
        words = shlex.split(value, posix=True)
    except ValueError as exc:
        raise T.invalid("command", value, f"It cannot be split with shell rules ({exc}); "
                                          f"check the quotes.") from None
    return words or None


def _auto_remove(value: object) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise T.invalid("auto_remove", value, "It must be a JSON boolean (true or false) "
                                              "or null.")
    return value


def _flag(body: dict[str, object], key: str) -> bool | None:
    """A strict boolean if the key is present (null is rejected), else None."""
    return T.strict_bool(key, body[key]) if key in body else None


def _workdir(field: str, value: object) -> str | None:
    text = T.string(field, value, 0, 255, what="an absolute path")
    if text and not text.startswith("/"):
        raise T.invalid(field, value, "The working directory must be an absolute path "
                                      "such as /srv/app.")
    return text or None


def _image_driver(value: object, limits: CreateLimits) -> str:
    if T.is_none_string(value):
        return limits.default_image_driver
    return T.enum("image_driver", value, limits.image_driver_list)


def _nets(value: object) -> list[dict[str, str]]:
    shape = ("Each network request is an object with exactly one of 'network' or 'port' "
             "and optionally 'v4-fixed-ip' and 'v6-fixed-ip'.")
    if value is None:
        return []
    if not isinstance(value, list):
        raise T.invalid("nets", value, f"It must be a JSON array. {shape}")
    nets: list[dict[str, str]] = []
    for index, item in enumerate(value):
        field = f"nets[{index}]"
        if not isinstance(item, dict) or set(item) - _NET_KEYS:
            raise T.invalid(field, item, shape)
        if ("network" in item) == ("port" in item):
            raise T.invalid(field, item, shape)
        entry: dict[str, str] = {}
        for key in ("network", "port"):
            if key in item:
                entry[key] = T.string(field, item[key], 1, 255, what=f"a {key} name or id")
        for key, kind in (("v4-fixed-ip", ipaddress.IPv4Address),
                          ("v6-fixed-ip", ipaddress.IPv6Address)):
            if key not in item:
                continue
            try:
                if not isinstance(item[key], str):
                    raise TypeError(key)
                entry[key] = str(kind(item[key]))
            except (ValueError, TypeError):
                version = "IPv4" if kind is ipaddress.IPv4Address else "IPv6"
                raise T.invalid(field, item, f"'{key}' must be an {version} "
                                             f"address.") from None
        nets.append(entry)
    return nets


def _mounts(value: object) -> list[dict[str, object]]:
    shape = ("Each mount is an object with 'destination' (an absolute path) and either "
             "'source' (a volume name or id; base64 file content for type 'bind') or "
             "'size' (GiB, for a new volume); 'type' is 'volume' (default) or 'bind'.")
    if value is None:
        return []
    if not isinstance(value, list):
        raise T.invalid("mounts", value, f"It must be a JSON array. {shape}")
    mounts: list[dict[str, object]] = []
    for index, item in enumerate(value):
        field = f"mounts[{index}]"
        if not isinstance(item, dict) or set(item) - _MOUNT_KEYS:
            raise T.invalid(field, item, shape)
        kind = "volume" if item.get("type") is None else T.enum(field, item["type"],
                                                                 MOUNT_TYPES)
        dest = item.get("destination")
        if not isinstance(dest, str) or not dest.startswith("/"):
            raise T.invalid(field, item, f"'destination' must be an absolute path. {shape}")
        source, size = item.get("source"), item.get("size")
        if (source is None) == (size is None):
            raise T.invalid(field, item, f"Give exactly one of 'source' or 'size'. {shape}")
        if kind == "bind" and source is None:
            raise T.invalid(field, item, "A 'bind' mount needs 'source': the base64 "
                                         "content of the file to place at 'destination'.")
        entry: dict[str, object] = {"type": kind, "destination": dest}
        if source is not None:
            if kind == "volume":
                entry["source"] = T.string(field, source, 1, 255, what="a volume name or id")
            else:
                content = T.string(field, source, 1, what="base64 file content")
                entry["source"] = content
                try:
                    base64.b64decode(content, validate=True)
                except (binascii.Error, ValueError):
                    raise T.invalid(field, item, "The 'source' of a 'bind' mount must be "
                                                 "base64-encoded file content.") from None
        else:
            entry["size"] = T.integer(field, size, 1, what="a volume size in GiB")
        mounts.append(entry)
    return mounts


def _check_policies(body: dict[str, object], is_admin: bool) -> None:
    if body.get("privileged") is not None:
        # Zun's default policy for this rule denies everybody, admins included.
        raise PolicyNotAuthorized(action="container:create:privileged")
    if is_admin:
        return
    for key, action in (("runtime", "container:create:runtime"),
                        ("image_pull_policy", "container:create:image_pull_policy"),
                        ("host", "container:create:requested_destination")):
        if body.get(key) is not None:
            raise PolicyNotAuthorized(action=action)


def validate_create(body: object, version: APIVersion, is_admin: bool,
                    limits: CreateLimits) -> dict[str, object]:
    """Validate and normalise a container create body.

    Returns every ``container`` column the API sets (``name, image, command,
    entrypoint, cpu, memory, disk, cpu_policy, workdir, environment, labels,
    image_pull_policy, image_driver, restart_policy, interactive, tty, auto_remove,
    auto_heal, runtime, hostname, security_groups, healthcheck, exposed_ports,
    privileged``) with defaults applied, plus ``_hints``, ``_nets``, ``_mounts``,
    ``_availability_zone``, ``_registry`` and ``_requested_host``.
    """
    data = _check_keys(body, CREATE_FIELDS, "container create",
                       "with at least 'image'")
    if "image" not in data:
        raise InvalidParameterValue(
            err="'image' is a required property: name the image to run, "
                "e.g. {\"image\": \"busybox:latest\"}."
        )
    _check_versions(data, version)

    name = _opt(data, "name", T.container_name) or generate_name()
    cpu = _opt(data, "cpu", lambda f, v: T.cpu(f, v, limits.min_cpu, limits.max_cpu))
    memory = _opt(data, "memory",
                  lambda f, v: T.memory(f, v, limits.min_memory, limits.max_memory))
    disk = _opt(data, "disk", lambda f, v: T.disk(f, v, limits.min_disk, limits.max_disk))

    interactive = _flag(data, "interactive")
    tty = _flag(data, "tty")
    if _COMMAND_LIST_FROM <= version < _TTY_INDEPENDENT_FROM and interactive is not None:
        tty = interactive  # before 1.36, asking for stdin also meant a terminal

    exposed_ports = _opt(data, "exposed_ports", T.exposed_ports)
    security_groups = _opt(data, "security_groups", T.security_groups) or []
    if exposed_ports and security_groups:
        raise InvalidParameterValue(
            err="'security_groups' and 'exposed_ports' cannot be used together: exposing "
                "ports gives the container its own security group. Send only one of them."
        )

    healthcheck = data.get("healthcheck")
    result: dict[str, object] = {
        "name": name,
        "image": T.image_name("image", data["image"]),
        "command": _command(data.get("command"), version),
        "entrypoint": _opt(data, "entrypoint", T.string_list),
        "cpu": limits.default_cpu if cpu is None else cpu,
        "memory": str(limits.default_memory) if memory is None else memory,
        "disk": disk,
        "cpu_policy": _opt(data, "cpu_policy",
                           lambda f, v: T.enum(f, v, CPU_POLICIES)) or "shared",
        "workdir": _opt(data, "workdir", _workdir),
        "environment": _opt(data, "environment", T.string_dict) or {},
        "labels": _opt(data, "labels", T.labels) or {},
        "image_pull_policy": _opt(data, "image_pull_policy",
                                  lambda f, v: T.enum(f, v, IMAGE_PULL_POLICIES, True)),
        "image_driver": _image_driver(data.get("image_driver"), limits),
        "restart_policy": _opt(data, "restart_policy", T.restart_policy),
        "interactive": bool(interactive),
        "tty": bool(tty),
        "auto_remove": _auto_remove(data.get("auto_remove")),
        "auto_heal": bool(_flag(data, "auto_heal")),
        "runtime": _opt(data, "runtime",
                        lambda f, v: T.string(f, v, 1, 32, what="a Docker runtime name")),
        "hostname": _opt(data, "hostname", T.hostname),
        "security_groups": security_groups,
        "healthcheck": T.healthcheck("healthcheck", healthcheck) if healthcheck else None,
        "exposed_ports": exposed_ports,
        "privileged": bool(_opt(data, "privileged", T.strict_bool)),
        "_hints": _opt(data, "hints", T.json_object) or {},
        "_nets": _nets(data.get("nets")),
        "_mounts": _mounts(data.get("mounts")),
        "_availability_zone": _opt(data, "availability_zone",
                                   lambda f, v: T.string(f, v, 1, 255)),
        "_registry": _opt(data, "registry",
                          lambda f, v: T.string(f, v, 2, 255,
                                                what="a registry uuid or name")),
        "_requested_host": _opt(data, "host", T.host_name),
    }
    _check_policies(data, is_admin)
    return result


def validate_update(body: object, limits: CreateLimits) -> dict[str, object]:
    """Validate a PATCH body: a non-empty subset of cpu, memory, name, auto_heal.

    Returns only the keys sent, normalised like create (cpu float, memory str).
    """
    data = _check_keys(body, UPDATE_FIELDS, "container update",
                       "with at least one of cpu, memory, name, auto_heal")
    if not data:
        raise InvalidParameterValue(
            err="Nothing to update: send at least one of cpu, memory, name, auto_heal."
        )
    parsers: dict[str, Callable[[str, object], object]] = {
        "cpu": lambda f, v: T.cpu(f, v, limits.min_cpu, limits.max_cpu),
        "memory": lambda f, v: T.memory(f, v, limits.min_memory, limits.max_memory),
        "name": T.container_name,
        "auto_heal": T.strict_bool,
    }
    changes: dict[str, object] = {}
    for key in UPDATE_FIELDS:
        if key not in data:
            continue
        if data[key] is None:
            raise T.invalid(key, None, f"'{key}' cannot be null in an update; leave it "
                                       f"out to keep the current value.")
        changes[key] = parsers[key](key, data[key])
    return changes
