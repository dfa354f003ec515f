"""``image:*``: the images on the compute hosts."""

from __future__ import annotations

from oslo_policy import policy

from berth.policies.base import ADMIN, ADMIN_OR_OWNER, documented

ALL = "/v1/images"
ONE = "/v1/images/{image_id}"

RULES: list[policy.RuleDefault] = [
    documented("image:pull", ADMIN, "Pull an image onto a host.", ("POST", ALL)),
    documented("image:get_all", ADMIN, "List the hosts' images.", ("GET", ALL)),
    documented("image:get_one", ADMIN, "Show an image.", ("GET", ONE)),
    documented("image:delete", ADMIN, "Delete an image from its host.", ("DELETE", ONE)),
    documented("image:search", ADMIN_OR_OWNER, "Search an image in a registry.",
               ("GET", "/v1/images/{image}/search")),
]


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
