"""Checking a caller against the rules: one process-wide oslo.policy Enforcer.

``authorize`` raises :class:`~berth.common.exceptions.PolicyNotAuthorized` (403, naming
the rule); ``allows`` answers a yes/no (fields hidden from non-admins). The operator's
policy file (``[oslo_policy]policy_file``, looked up beside the config files) is read
when first needed and again within a second of its modification time changing, so an
override takes effect without a restart.

Speed: oslo.policy looks the policy file up on disk and inspects each check's signature
on every ``enforce`` (about 170 us a call here, and a container's show makes five). So
the files are looked at no more than once a second (:class:`_ThrottledEnforcer`) and
each decision is remembered for the same rules and the same credentials and target
(:class:`_Decisions`), forgotten when the rules change: a repeated check costs a dict
lookup.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from oslo_config import cfg
from oslo_policy import policy

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.policies import list_rules

#: Seconds between two looks at the policy files.
RELOAD_INTERVAL = 1.0
#: Decisions remembered; more distinct callers than this only cost a re-check.
MAX_DECISIONS = 8192


class _ThrottledEnforcer(policy.Enforcer):  # type: ignore[misc]
    """oslo.policy's Enforcer, looking at its files at most every RELOAD_INTERVAL."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self._next_load = 0.0
        super().__init__(conf)

    def load_rules(self, force_reload: bool = False) -> None:
        now = time.monotonic()
        if force_reload or now >= self._next_load:
            self._next_load = now + RELOAD_INTERVAL
            try:
                super().load_rules(force_reload)
            except cfg.NotInitializedError:
                # No configuration parsed (unit tests, tools): the defaults alone.
                for default in self.registered_rules.values():
                    if default.name not in self.rules:
                        self.rules[default.name] = default.check

    def rules_version(self) -> tuple[int, ...]:
        """Changes whenever a rule is re-read (oslo.policy parses a new check object)."""
        self.load_rules()
        return (id(self.rules), *map(id, self.rules.values()))


class _Decisions:
    """Remembered ``enforce`` answers, valid for one version of the rules."""

    def __init__(self, enforcer: _ThrottledEnforcer) -> None:
        self.enforcer = enforcer
        self._answers: dict[tuple[Any, ...], bool] = {}
        self._version: tuple[int, ...] = ()
        self._checked_at = 0.0

    def enforce(self, rule: str, target: dict[str, Any], creds: dict[str, Any]) -> bool:
        now = time.monotonic()
        if now >= self._checked_at:
            self._checked_at = now + RELOAD_INTERVAL
            version = self.enforcer.rules_version()
            if version != self._version:
                self._version = version
                self._answers = {}
        key = (rule, tuple(sorted(target.items())), creds["user_id"], creds["project_id"],
               tuple(creds["roles"]), creds["is_admin"], creds.get("user_domain_id"),
               creds.get("project_domain_id"))
        try:
            return self._answers[key]
        except (KeyError, TypeError):
            pass
        if rule not in self.enforcer.registered_rules:   # a typo must not pass or deny quietly
            raise policy.PolicyNotRegistered(rule)
        answer = bool(self.enforcer.enforce(rule, target, creds))
        if len(self._answers) >= MAX_DECISIONS:
            self._answers = {}
        try:
            self._answers[key] = answer
        except TypeError:       # an unhashable target value: not remembered
            pass
        return answer


_lock = threading.Lock()
_decisions: _Decisions | None = None


def init(conf: cfg.ConfigOpts) -> policy.Enforcer:
    """The process's enforcer, reading ``conf``'s ``[oslo_policy]`` (built once)."""
    global _decisions
    with _lock:
        if _decisions is None:
            enforcer = _ThrottledEnforcer(conf)
            enforcer.register_defaults(list_rules())
            _decisions = _Decisions(enforcer)
        return _decisions.enforcer


def reset() -> None:
    """Forget the enforcer (tests that change the configuration)."""
    global _decisions
    with _lock:
        _decisions = None


def get_enforcer() -> policy.Enforcer:
    """The ``oslo.policy.enforcer`` entry point (``oslopolicy-policy-generator`` and
    friends): berth's options parsed from the tools' own command line."""
    conf = cfg.ConfigOpts()
    conf([], project="berth", default_config_files=[])
    enforcer = policy.Enforcer(conf)
    enforcer.register_defaults(list_rules())
    return enforcer


def _decide() -> _Decisions:
    if _decisions is None:
        init(cfg.CONF)
    assert _decisions is not None
    return _decisions


def credentials(ctx: RequestContext) -> dict[str, Any]:
    """What rules may test about the caller (``role:``, ``project_id:``, ``is_admin:``...)."""
    return {"user_id": ctx.user_id, "project_id": ctx.project_id, "roles": ctx.roles,
            "is_admin": ctx.is_admin, "user_domain_id": ctx.user_domain_id,
            "project_domain_id": ctx.project_domain_id}


def _target(ctx: RequestContext, target: Any) -> dict[str, Any]:
    """The checked object's owner: a mapping, a row (``project_id``/``user_id``
    attributes) or, when None, the caller's own project."""
    if target is None:
        return {"project_id": ctx.project_id, "user_id": ctx.user_id}
    if isinstance(target, Mapping):
        return dict(target)
    return {"project_id": getattr(target, "project_id", None),
            "user_id": getattr(target, "user_id", None)}


def allows(ctx: RequestContext, rule: str, target: Any = None) -> bool:
    return _decide().enforce(rule, _target(ctx, target), credentials(ctx))


def authorize(ctx: RequestContext, rule: str, target: Any = None) -> None:
    """Raise PolicyNotAuthorized (403, naming ``rule``) unless the caller passes it."""
    if not allows(ctx, rule, target):
        raise exc.PolicyNotAuthorized(action=rule)


def is_admin(roles: list[str], project_id: str | None, user_id: str | None) -> bool:
    """Whether these credentials pass ``context_is_admin`` (an admin sees every project)."""
    creds = {"roles": roles, "project_id": project_id, "user_id": user_id,
             "is_admin": False}
    return _decide().enforce("context_is_admin", {}, creds)
