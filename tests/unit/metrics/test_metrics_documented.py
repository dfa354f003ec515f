"""docs/monitoring.md's metrics table and berth/metrics/catalog.py name the same metrics."""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client import REGISTRY

import berth.metrics.catalog  # noqa: F401 - declares the metrics

PAGE = Path(__file__).resolve().parents[3] / "docs" / "monitoring.md"


def test_every_declared_metric_is_in_the_monitoring_table_and_no_other() -> None:
    declared = {family.name + ("_total" if family.type == "counter" else "")
                for family in REGISTRY.collect() if family.name.startswith("berth_")}
    documented = set(re.findall(r"^\| `(berth_[a-z_]+)`", PAGE.read_text(), re.MULTILINE))
    assert declared == documented
    assert len(declared) >= 20
