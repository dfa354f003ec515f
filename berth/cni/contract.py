"""The CNI contract as data, shared by ``berth-cni`` and ``berth-cni-daemon``.

A runtime runs the plugin with ``CNI_COMMAND`` (ADD, DEL, CHECK, VERSION),
``CNI_CONTAINERID``, ``CNI_NETNS``, ``CNI_IFNAME``, ``CNI_ARGS`` and ``CNI_PATH`` in the
environment and the network configuration as JSON on stdin. The plugin answers on
stdout: a result for ADD, nothing for DEL and CHECK, the supported versions for
VERSION, and on failure an error object with a non-zero exit status.

berth's network configuration (the well-known fields, plus)::

    {"cniVersion": "1.0.0", "name": "net-a", "type": "berth-cni",
     "ipam": {"subnet": "10.244.1.0/24", "gateway": "10.244.1.1",    # gateway optional
              "subnet6": "fd00:b:1::/64"},   # optional: dual stack (base.py: the twins)
     "bridge": "bth...",      # optional: derived from the name
     "ipMasq": false,         # masquerade egress to the host's other networks
     "mtu": 1500,
     "daemonUrl": "http://127.0.0.1:9036"}                           # optional

``CNI_ARGS`` may carry ``IP=<address>`` (a fixed IP) and ``MAC=<mac>`` (CONVENTIONS.md);
other keys are ignored, as the conventions ask. ``runtimeConfig.berthPolicy``
(``{"groups": [...], "ports": ["80/tcp"]}``, the capability ``berthPolicy``) says who
may reach the container (``berth.network.policy``); without it the network's own
rules alone apply.
"""

from __future__ import annotations

import enum
import ipaddress
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.network.base import VIF, AttachmentKey, InvalidNetworkSpec, NetworkSpec
from berth.network.policy import InvalidPolicy, Policy

#: The spec versions whose configuration and result berth reads and writes.
SUPPORTED_VERSIONS = ("0.3.0", "0.3.1", "0.4.0", "1.0.0")
#: The version of what berth writes when the request named none it supports.
CURRENT_VERSION = "1.0.0"
#: CHECK exists from 0.4.0 on.
_CHECK_SINCE = (0, 4, 0)

DEFAULT_DAEMON_URL = "http://127.0.0.1:9036"
#: The ``runtimeConfig`` key (and conflist capability) carrying a container's policy.
POLICY_CAPABILITY = "berthPolicy"

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_MAC_RE = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


class Code(enum.IntEnum):
    """The spec's well-known error codes (0-99), then berth's own (100+)."""

    INCOMPATIBLE_VERSION = 1
    UNSUPPORTED_FIELD = 2
    UNKNOWN_CONTAINER = 3
    INVALID_ENVIRONMENT = 4
    IO_FAILURE = 5
    DECODE_FAILURE = 6
    INVALID_NETWORK_CONFIG = 7
    TRY_AGAIN_LATER = 11
    ADDRESS_EXHAUSTED = 100
    ADDRESS_UNAVAILABLE = 101
    ATTACHMENT_MISMATCH = 102
    DRIVER_FAILURE = 103


class Command(enum.StrEnum):
    ADD = "ADD"
    DEL = "DEL"
    CHECK = "CHECK"
    VERSION = "VERSION"


class CniError(Exception):
    """An error the plugin prints as the spec's error object."""

    def __init__(self, code: int, msg: str, details: str = "",
                 version: str = CURRENT_VERSION) -> None:
        super().__init__(msg)
        self.code, self.msg, self.details, self.version = int(code), msg, details, version

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cniVersion": self.version, "code": self.code, "msg": self.msg}
        if self.details:
            out["details"] = self.details
        return out


@dataclass(frozen=True, slots=True)
class CniRequest:
    """One checked plugin invocation (not VERSION)."""

    command: Command
    container_id: str
    ifname: str
    netns: str | None
    config: Mapping[str, Any]
    args: Mapping[str, str] = field(default_factory=dict)
    path: str = ""

    @property
    def version(self) -> str:
        return str(self.config["cniVersion"])

    @property
    def network(self) -> str:
        return str(self.config["name"])

    @property
    def key(self) -> AttachmentKey:
        return AttachmentKey(self.network, self.container_id, self.ifname)

    @property
    def fixed_ip(self) -> ipaddress.IPv4Address | None:
        value = self.args.get("IP")
        return ipaddress.IPv4Address(value) if value else None

    @property
    def mac(self) -> str | None:
        return self.args.get("MAC") or None

    @property
    def policy(self) -> Policy | None:
        runtime = self.config.get("runtimeConfig")
        raw = runtime.get(POLICY_CAPABILITY) if isinstance(runtime, Mapping) else None
        return None if raw is None else Policy.from_dict(raw)

    @property
    def daemon_url(self) -> str:
        return str(self.config.get("daemonUrl") or DEFAULT_DAEMON_URL)

    def to_wire(self) -> dict[str, Any]:
        return {"command": str(self.command), "container_id": self.container_id,
                "ifname": self.ifname, "netns": self.netns, "config": dict(self.config),
                "args": dict(self.args), "path": self.path}

    @classmethod
    def from_wire(cls, body: Mapping[str, Any], netns_required: bool = True) -> CniRequest:
        """The daemon's side: the same checks as the plugin's, on the forwarded body.
        ``netns_required=False``: an ADD without a namespace yet (a reservation)."""
        if not isinstance(body, Mapping):
            raise CniError(Code.DECODE_FAILURE, "the request body is not a JSON object")
        env = {"CNI_COMMAND": body.get("command") or "",
               "CNI_CONTAINERID": body.get("container_id") or "",
               "CNI_IFNAME": body.get("ifname") or "", "CNI_NETNS": body.get("netns") or "",
               "CNI_ARGS": ";".join(f"{k}={v}" for k, v in (body.get("args") or {}).items()),
               "CNI_PATH": body.get("path") or ""}
        config = body.get("config")
        if not isinstance(config, Mapping):
            raise CniError(Code.INVALID_NETWORK_CONFIG, "the network configuration is missing")
        return parse_request(env, json.dumps(config).encode(), netns_required)


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def parse_args(text: str) -> dict[str, str]:
    """``CNI_ARGS``: ``K=V;K2=V2``; a pair without ``=`` is invalid (code 4)."""
    out: dict[str, str] = {}
    for pair in filter(None, text.split(";")):
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise CniError(Code.INVALID_ENVIRONMENT, f"CNI_ARGS: {pair!r} is not KEY=VALUE")
        out[name] = value
    return out


def _decode(stdin: bytes) -> dict[str, Any]:
    try:
        config = json.loads(stdin)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CniError(Code.DECODE_FAILURE, "the network configuration on stdin is not JSON",
                       str(exc)) from exc
    if not isinstance(config, dict):
        raise CniError(Code.DECODE_FAILURE, "the network configuration is not a JSON object")
    return config


def parse_version_request(stdin: bytes) -> str:
    """VERSION reads at most ``cniVersion`` from stdin (which may be empty)."""
    if not stdin.strip():
        return CURRENT_VERSION
    version = _decode(stdin).get("cniVersion")
    return str(version) if version in SUPPORTED_VERSIONS else CURRENT_VERSION


def version_result(version: str) -> dict[str, Any]:
    return {"cniVersion": version, "supportedVersions": list(SUPPORTED_VERSIONS)}


def parse_request(env: Mapping[str, str], stdin: bytes,
                  netns_required: bool = True) -> CniRequest:
    """The environment and stdin of an ADD, DEL or CHECK, checked; ``CniError`` with
    the spec's code otherwise. (VERSION: ``parse_version_request``.)"""
    raw = (env.get("CNI_COMMAND") or "").upper()
    if raw not in Command.__members__ or raw == Command.VERSION:
        raise CniError(Code.INVALID_ENVIRONMENT,
                       f"CNI_COMMAND {raw!r} is not one of ADD, DEL, CHECK, VERSION")
    command = Command(raw)
    config = _decode(stdin)
    version = config.get("cniVersion")
    if not isinstance(version, str) or not version:
        raise CniError(Code.INVALID_NETWORK_CONFIG, "the network configuration has no cniVersion")
    if version not in SUPPORTED_VERSIONS:
        raise CniError(Code.INCOMPATIBLE_VERSION, f"CNI version {version} is not supported",
                       f"supported: {', '.join(SUPPORTED_VERSIONS)}")
    if command is Command.CHECK and _version_tuple(version) < _CHECK_SINCE:
        raise CniError(Code.INCOMPATIBLE_VERSION, f"CHECK does not exist in CNI {version}",
                       version=version)

    def env_error(msg: str) -> CniError:
        return CniError(Code.INVALID_ENVIRONMENT, msg, version=version)

    container_id = env.get("CNI_CONTAINERID") or ""
    if not _ID_RE.match(container_id):
        raise env_error(f"CNI_CONTAINERID {container_id!r} is missing or not a valid id")
    ifname = env.get("CNI_IFNAME") or ""
    if (not ifname or len(ifname) > 15 or ifname in (".", "..")
            or any(c in ifname for c in "/:") or any(c.isspace() for c in ifname)):
        raise env_error(f"CNI_IFNAME {ifname!r} is not a valid interface name")
    netns = env.get("CNI_NETNS") or None
    if netns is None and command is not Command.DEL and netns_required:
        raise env_error(f"CNI_NETNS is required for {command}")
    args = parse_args(env.get("CNI_ARGS") or "")
    if args.get("IP"):
        try:
            ipaddress.IPv4Address(args["IP"])
        except ValueError as exc:
            raise env_error(f"CNI_ARGS IP={args['IP']!r} is not an IPv4 address") from exc
    if args.get("MAC") and not _MAC_RE.match(args["MAC"]):
        raise env_error(f"CNI_ARGS MAC={args['MAC']!r} is not a MAC address")
    request = CniRequest(command=command, container_id=container_id, ifname=ifname,
                         netns=netns, config=config, args=args, path=env.get("CNI_PATH") or "")
    network_spec(request)  # a bad network is code 7 here, before the daemon sees it
    try:
        request.policy  # noqa: B018 - checked here, as the network is
    except InvalidPolicy as exc:
        raise CniError(Code.INVALID_NETWORK_CONFIG, f"runtimeConfig.{POLICY_CAPABILITY}: {exc}",
                       version=version) from exc
    return request


def network_spec(request: CniRequest) -> NetworkSpec:
    """The network the configuration describes; ``CniError`` code 7 when it cannot work."""
    config = request.config
    ipam = config.get("ipam") or {}
    if not isinstance(ipam, Mapping):
        raise _config_error(request, "ipam must be an object")
    subnet = ipam.get("subnet") or config.get("subnet")
    name = config.get("name")
    if not isinstance(name, str) or not _ID_RE.match(name):
        raise _config_error(request, f"network name {name!r} is missing or not valid")
    if not isinstance(subnet, str):
        raise _config_error(request, "the network configuration needs ipam.subnet (an IPv4 CIDR)")
    try:
        subnet6 = ipam.get("subnet6")
        if subnet6 is not None and not isinstance(subnet6, str):
            raise _config_error(request, "ipam.subnet6 must be an IPv6 CIDR string")
        return NetworkSpec.build(name, subnet, ipam.get("gateway") or config.get("gateway"),
                                 config.get("bridge"), bool(config.get("ipMasq", False)),
                                 int(config.get("mtu", 1500)), subnet6 or None)
    except (InvalidNetworkSpec, ValueError, TypeError) as exc:
        raise _config_error(request, str(exc)) from exc


def _config_error(request: CniRequest, msg: str) -> CniError:
    return CniError(Code.INVALID_NETWORK_CONFIG, msg, version=request.version)


def add_result(vif: VIF, version: str) -> dict[str, Any]:
    """The ADD result: bridge, host end and container end, the address on the last."""
    ips: list[dict[str, Any]] = [{"address": str(vif.address), "gateway": str(vif.gateway),
                                  "interface": 2}]
    routes = [{"dst": "0.0.0.0/0", "gw": str(vif.gateway)}] if vif.default_route else []
    if vif.address6 is not None and vif.gateway6 is not None:
        ips.append({"address": str(vif.address6), "gateway": str(vif.gateway6),
                    "interface": 2})
        if vif.default_route:
            routes.append({"dst": "::/0", "gw": str(vif.gateway6)})
    if _version_tuple(version) < (1, 0, 0):
        for ip, family in zip(ips, ("4", "6"), strict=False):
            ip["version"] = family
    return {
        "cniVersion": version,
        "interfaces": [{"name": vif.bridge}, {"name": vif.host_ifname},
                       {"name": vif.ifname, "mac": vif.mac, "sandbox": vif.netns}],
        "ips": ips,
        "routes": routes,
        "dns": {},
    }


def network_config(spec: NetworkSpec, daemon_url: str | None = None,
                   version: str = CURRENT_VERSION) -> dict[str, Any]:
    """The CNI network configuration of ``spec`` (``network_spec``'s inverse): what the
    compute agent sends, and what a file in /etc/cni/net.d holds for containerd."""
    config: dict[str, Any] = {"cniVersion": version, "name": spec.name, "type": "berth-cni",
                              "bridge": spec.bridge, "ipMasq": spec.masquerade,
                              "mtu": spec.mtu, "ipam": {"subnet": str(spec.cidr),
                                                        "gateway": str(spec.gateway)}}
    if spec.cidr6 is not None:
        config["ipam"]["subnet6"] = str(spec.cidr6)
    if daemon_url:
        config["daemonUrl"] = daemon_url
    return config


def build_request(command: Command, spec: NetworkSpec, container_id: str, ifname: str,
                  netns: str | None, fixed_ip: ipaddress.IPv4Address | None = None,
                  mac: str | None = None, daemon_url: str | None = None,
                  policy: Policy | None = None, netns_required: bool = True) -> CniRequest:
    """A request made in-process (the compute agent's), checked like a plugin's."""
    args = ";".join(f"{k}={v}" for k, v in (("IP", fixed_ip), ("MAC", mac)) if v)
    env = {"CNI_COMMAND": str(command), "CNI_CONTAINERID": container_id,
           "CNI_IFNAME": ifname, "CNI_NETNS": netns or "", "CNI_ARGS": args}
    config = network_config(spec, daemon_url)
    if policy is not None:
        config["runtimeConfig"] = {POLICY_CAPABILITY: policy.to_dict()}
    return parse_request(env, json.dumps(config).encode(), netns_required)


def vif_from_result(key: AttachmentKey, result: Mapping[str, Any]) -> VIF:
    """The VIF an ADD result describes (``add_result``'s inverse); ``CniError`` code 6
    when the result does not have that shape."""
    try:
        interfaces, ip = result["interfaces"], result["ips"][0]
        inner = interfaces[int(ip.get("interface", 2))]
        six = [i for i in result["ips"][1:] if ":" in str(i.get("address", ""))]
        return VIF(key=key, netns=str(inner["sandbox"]), mac=str(inner["mac"]),
                   address=ipaddress.IPv4Interface(ip["address"]),
                   gateway=ipaddress.IPv4Address(ip["gateway"]),
                   bridge=str(interfaces[0]["name"]), host_ifname=str(interfaces[1]["name"]),
                   default_route=bool(result.get("routes")),
                   address6=ipaddress.IPv6Interface(six[0]["address"]) if six else None,
                   gateway6=ipaddress.IPv6Address(six[0]["gateway"]) if six else None)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise CniError(Code.DECODE_FAILURE, "the ADD result is not berth's", repr(exc)) from exc
