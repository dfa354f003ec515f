"""etc/policy.yaml.sample is what ``oslopolicy-sample-generator --namespace berth``
writes today, and pyproject.toml declares the entry points the oslo.policy tools use."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from oslo_policy import generator

from berth.policies import list_rules

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "etc" / "policy.yaml.sample"
REGENERATE = "oslopolicy-sample-generator --config-file etc/oslo-policy-generator/berth-policy.conf"


def test_entry_points_name_berths_rules_and_enforcer() -> None:
    points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert points["oslo.policy.policies"]["berth"] == "berth.policies:list_rules"
    assert points["oslo.policy.enforcer"]["berth"] == "berth.policies.enforcer:get_enforcer"


def test_sample_is_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The rules from this tree, not from whatever berth is installed.
    monkeypatch.setattr(generator, "get_policies_dict",
                        lambda namespaces: {"berth": list_rules()})
    out = tmp_path / "policy.yaml"
    generator._generate_sample(["berth"], str(out))
    assert out.read_text() == SAMPLE.read_text(), f"stale sample: run {REGENERATE}"
