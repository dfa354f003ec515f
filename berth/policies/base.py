"""The building blocks every resource's rules use: who is an admin, who owns a target.

``owner`` compares the target's ``project_id`` with the caller's project: the target is
the resource for per-resource checks (a container, a registry, a quota's project), else
the caller's own project (creates and lists), as in Zun.
"""

from __future__ import annotations

from oslo_policy import policy

#: Check strings the resource modules use; operators override the rules, not these.
ADMIN = "rule:context_is_admin"
ADMIN_OR_OWNER = "rule:admin_or_owner"

RULES = [
    policy.RuleDefault("context_is_admin", "role:admin",
                       description="Who berth treats as an administrator: sees and acts on "
                                   "every project's resources."),
    policy.RuleDefault("admin_or_owner", "is_admin:True or project_id:%(project_id)s",
                       description="An administrator, or a member of the project that owns "
                                   "the target."),
    policy.RuleDefault("admin_api", ADMIN,
                       description="Operations reserved to administrators."),
]


def documented(name: str, check: str, description: str,
               *operations: tuple[str, str]) -> policy.DocumentedRuleDefault:
    """One rule with the API operations it guards (``(method, path)`` pairs)."""
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=description,
        operations=[{"method": method, "path": path} for method, path in operations])


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
