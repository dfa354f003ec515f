"""``host:*``: the compute hosts and their resources."""

from __future__ import annotations

from oslo_policy import policy

from berth.policies.base import ADMIN, documented

RULES: list[policy.RuleDefault] = [
    documented("host:get_all", ADMIN, "List the compute hosts.", ("GET", "/v1/hosts")),
    documented("host:get", ADMIN, "Show a compute host.", ("GET", "/v1/hosts/{host_ident}")),
]


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
