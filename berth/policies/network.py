"""``network:*``: networks berth creates for containers (admin only)."""

from __future__ import annotations

from oslo_policy import policy

from berth.policies.base import ADMIN, documented

RULES: list[policy.RuleDefault] = [
    documented("network:create", ADMIN, "Create a network.", ("POST", "/v1/networks")),
    documented("network:delete", ADMIN, "Delete a network.",
               ("DELETE", "/v1/networks/{network_ident}")),
    documented("network:attach_external_network", ADMIN,
               "Attach a container to an external network.",
               ("POST", "/v1/containers"),
               ("POST", "/v1/containers/{container_ident}/network_attach")),
]


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
