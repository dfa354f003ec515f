"""The operator's policy file is read again when it changes, without a restart, and a
remembered decision never outlives the rules it was made with."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from oslo_config import cfg

from berth.common.context import RequestContext
from berth.policies import enforcer

MEMBER = RequestContext(user_id="m", project_id="p1", roles=["member"])


@pytest.fixture
def policy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text("{}\n")
    conf = cfg.ConfigOpts()
    conf([], project="berth", default_config_files=[])
    from oslo_policy import opts

    opts.set_defaults(conf, policy_file=str(path))
    enforcer.reset()
    enforcer.init(conf)
    monkeypatch.setattr(enforcer, "RELOAD_INTERVAL", 0.0)
    yield path
    enforcer.reset()


def _rewrite(path: Path, rules: dict[str, str]) -> None:
    path.write_text(json.dumps(rules))
    stat = path.stat()     # a new modification time, whatever the clock's resolution
    os.utime(path, (stat.st_atime, stat.st_mtime + 5))


def test_an_override_applies_on_the_next_check_and_is_lifted_the_same_way(
        policy_file: Path) -> None:
    assert enforcer.allows(MEMBER, "container:get_all")
    _rewrite(policy_file, {"container:get_all": "role:admin"})
    assert not enforcer.allows(MEMBER, "container:get_all")
    assert enforcer.allows(MEMBER, "container:get_one")      # the others keep their default
    _rewrite(policy_file, {})
    assert enforcer.allows(MEMBER, "container:get_all")


def test_an_unknown_rule_is_an_error_not_a_silent_yes(policy_file: Path) -> None:
    from oslo_policy import policy

    with pytest.raises(policy.PolicyNotRegistered):
        enforcer.allows(MEMBER, "container:no_such_rule")
