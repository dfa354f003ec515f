"""The bodies of the network APIs, declared once: ``POST /v1/networks`` (api-v1.md
§15) and the container's ``network_attach`` / ``network_detach`` (§7.7), whose
arguments zunclient sends in the query string (checked here all the same)."""

from __future__ import annotations

from berth.api.schemas import fields as F
from berth.api.schemas.validation import RequestSchema

_IDENT = F.string(1, 255, what="a network name or uuid")
_PORT = F.string(1, 255, what="a port name or id")

NETWORK_CREATE = RequestSchema(
    F.closed_object({
        "name": F.string(2, 255, what="a network name"),
        "neutron_net_id": F.nullable(F.described(
            "The Neutron network this network stands for; berth's local networks "
            "([network]driver = local) have none, and record it only for the caller's "
            "sake. It must be a string of 1 to 255 characters.",
            {"type": "string", "minLength": 1, "maxLength": 255})),
        "shared": F.described("berth: whether every project may use the network (not "
                              "only the creator's). It must be true or false.",
                              F.strict_bool()),
    }, required=("name",), description="A local network: a subnet of "
                                        "[network]local_subnet_pool on a bridge of its own."),
    what="network", shape="such as {\"name\": \"net-a\"}",
    hint="name the network, e.g. {\"name\": \"net-a\"}.")

NETWORK_ATTACH = RequestSchema(
    F.closed_object({
        "network": _IDENT,
        "port": _PORT,
        "fixed_ip": F.described("'fixed_ip' must be an IPv4 address of the network's "
                                "subnet.", {"type": "string", "format": "ipv4"}),
    }, description="Exactly one of 'network' or 'port' (the operation checks which), "
                   "and optionally 'fixed_ip'."),
    what="network attach", shape="such as {\"network\": \"net-a\"}",
    hint="name the network: ?network=<name or uuid>[&fixed_ip=<address>].")

NETWORK_DETACH = RequestSchema(
    F.closed_object({"network": _IDENT, "port": _PORT},
                    description="Exactly one of 'network' or 'port' (the operation checks "
                                "which)."),
    what="network detach", shape="such as {\"network\": \"net-a\"}",
    hint="name the network: ?network=<name or uuid>.")
