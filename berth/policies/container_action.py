"""``container:actions`` and ``container:action:events``: a container's action log."""

from __future__ import annotations

from oslo_policy import policy

from berth.policies.base import ADMIN, ADMIN_OR_OWNER, documented

LOG = "/v1/containers/{container_ident}/container_actions"

RULES: list[policy.RuleDefault] = [
    documented("container:actions", ADMIN_OR_OWNER,
               "List a container's actions, or show one.",
               ("GET", LOG), ("GET", LOG + "/{request_id}")),
    documented("container:action:events", ADMIN,
               "See the traceback of an action's events (others get null).",
               ("GET", LOG + "/{request_id}")),
]


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
