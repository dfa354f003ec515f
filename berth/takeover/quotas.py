"""Quotas (per project) and quota classes.

Zun's ``hard_limit`` NULL means unlimited, berth's -1. Zun has no unique key on
(project, resource) or (class, resource); berth has: a second row for the same pair
is not carried (Zun reads the first it finds; which one is the operator's call).
Zun's ``quota_usages`` is not needed: berth counts usage from the rows themselves.
"""

from __future__ import annotations

from berth.takeover.plan import Plan, carry
from berth.takeover.source import ZunRows

UNLIMITED = -1


def _convert(zun: ZunRows, plan: Plan, name: str, owner: str) -> None:
    seen: dict[tuple[str, str], int] = {}
    for row in zun[name]:
        ident = f"id={row['id']}"
        who, resource = row.get(owner), row.get("resource")
        if not who or not resource:
            plan.refuse(name, ident, f"it has no {owner if not who else 'resource'}")
            continue
        key = (str(who), str(resource))
        if key in seen:
            plan.refuse(name, ident, f"{owner} {key[0]} has a {key[1]} limit already (row id="
                                     f"{seen[key]}); berth keeps one per {owner} and resource")
            continue
        seen[key] = row["id"]
        limit = row.get("hard_limit")
        plan.add(name, carry(row, name, hard_limit=UNLIMITED if limit is None else int(limit)))


def convert(zun: ZunRows, plan: Plan) -> None:
    _convert(zun, plan, "quotas", "project_id")
    _convert(zun, plan, "quota_classes", "class_name")
