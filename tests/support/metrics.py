"""Reading berth's Prometheus metrics in tests: the default registry in this process
(unit tests), or a running berth's /metrics (functional tests)."""

from __future__ import annotations

from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families


def sample(name: str, **labels: str) -> float:
    """The value of one series in this process; 0 when it has no sample yet."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


def scraped(text: str, name: str, **labels: str) -> float:
    """The value of one series in a /metrics answer; 0 when absent."""
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return 0.0


def scraped_sum(text: str, name: str, **labels: str) -> float:
    """The sum of every series of ``name`` whose labels include ``labels``."""
    return sum(float(s.value) for family in text_string_to_metric_families(text)
               for s in family.samples
               if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))
