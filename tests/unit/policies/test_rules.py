"""Zun's rule names and defaults (api-v1.md §6), each exercised once against an admin,
an owner and a member of another project."""

from __future__ import annotations

import pytest
from oslo_config import cfg

from berth.common.context import RequestContext
from berth.policies import enforcer, list_rules

ADMIN_OR_OWNER = {
    *(f"container:{a}" for a in (
        "create", "get_one", "get_all", "update", "delete", "start", "stop", "reboot",
        "pause", "unpause", "kill", "logs", "execute", "execute_resize", "attach", "resize",
        "resize_container", "top", "get_archive", "put_archive", "stats", "commit", "rename",
        "rebuild", "network_attach", "network_detach", "add_security_group",
        "remove_security_group")),
    "container:actions", "capsule:create", "capsule:delete", "capsule:get", "capsule:get_all",
    "image:search", "quota:get", "quota:get_default", "registry:create", "registry:get_one",
    "registry:get_all", "registry:update", "registry:delete", "availability_zones:get_all",
}
ADMIN = {
    "container:create:runtime", "container:create:privileged",
    "container:create:requested_destination", "container:create:image_pull_policy",
    "container:delete_force", "container:delete_all_projects",
    "container:get_one_all_projects", "container:get_all_all_projects",
    "container:get_one:host", "container:get_one:image_pull_policy",
    "container:get_one:privileged", "container:get_one:runtime", "container:action:events",
    "capsule:delete_all_projects", "capsule:get_one_all_projects",
    "capsule:get_all_all_projects", "capsule:get:host", "image:pull", "image:get_all",
    "image:get_one", "image:delete", "host:get_all", "host:get", "zun-service:get_all",
    "zun-service:delete", "zun-service:enable", "zun-service:disable",
    "zun-service:force_down", "quota:update", "quota:delete", "quota_class:get",
    "quota_class:update", "registry:get_all_all_projects", "network:create",
    "network:delete", "network:attach_external_network",
}
BASE = {"context_is_admin", "admin_or_owner", "admin_api"}

ADMIN_CTX = RequestContext(user_id="a", project_id="ops", roles=["admin", "member"],
                           is_admin=True)
OWNER = RequestContext(user_id="m", project_id="p1", roles=["member", "reader"])
READER = RequestContext(user_id="r", project_id="p1", roles=["reader"])
STRANGER = RequestContext(user_id="s", project_id="p2", roles=["member"])
TARGET = {"project_id": "p1", "user_id": "m"}


@pytest.fixture(autouse=True)
def _defaults_only() -> None:
    enforcer.reset()
    enforcer.init(cfg.ConfigOpts())    # nothing parsed: no policy file, Zun's defaults
    yield
    enforcer.reset()


def test_the_rules_are_zuns_names_each_declared_once() -> None:
    names = [rule.name for rule in list_rules()]
    assert len(names) == len(set(names))
    assert set(names) == ADMIN_OR_OWNER | ADMIN | BASE


@pytest.mark.parametrize("rule", sorted(ADMIN_OR_OWNER))
def test_admin_or_owner_rule(rule: str) -> None:
    assert enforcer.allows(ADMIN_CTX, rule, TARGET)
    assert enforcer.allows(OWNER, rule, TARGET)
    assert enforcer.allows(READER, rule, TARGET)
    assert not enforcer.allows(STRANGER, rule, TARGET)


@pytest.mark.parametrize("rule", sorted(ADMIN))
def test_admin_rule(rule: str) -> None:
    assert enforcer.allows(ADMIN_CTX, rule, TARGET)
    assert not enforcer.allows(OWNER, rule, TARGET)
    assert not enforcer.allows(STRANGER, rule, TARGET)


def test_a_refusal_names_the_rule() -> None:
    with pytest.raises(Exception) as info:
        enforcer.authorize(OWNER, "host:get_all")
    assert type(info.value).__name__ == "PolicyNotAuthorized"
    assert "host:get_all" in str(info.value)


def test_is_admin_is_the_context_is_admin_rule() -> None:
    assert enforcer.is_admin(["Admin"], "p", "u")      # oslo.policy's roles ignore case
    assert not enforcer.is_admin(["member", "reader"], "p", "u")
