"""Every scenario the differential tests run, by name."""

from __future__ import annotations

from collections.abc import Callable

from compat import scenarios, scenarios_actions, scenarios_resources, scenarios_zunclient
from compat.scenarios import Side, Steps

SCENARIOS: dict[str, Callable[[Side], Steps]] = {
    "lifecycle": scenarios.lifecycle,
    "bad_input": scenarios.bad_input,
    "microversions": scenarios.microversions,
    "actions": scenarios_actions.actions,
    "interactive": scenarios_actions.interactive,
    "quotas": scenarios_resources.quotas,
    "registries": scenarios_resources.registries,
    "cluster": scenarios_resources.cluster,
    "capsules": scenarios_resources.capsules,
    "zunclient": scenarios_zunclient.zunclient,
}
