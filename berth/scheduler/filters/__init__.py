"""One filter per module. ``by_name`` maps ``[scheduler]enabled_filters`` names to
filter objects."""

from __future__ import annotations

from berth.scheduler.base import Filter
from berth.scheduler.filters.availability_zone_filter import AvailabilityZoneFilter
from berth.scheduler.filters.compute_filter import ComputeFilter
from berth.scheduler.filters.label_filter import LabelFilter
from berth.scheduler.filters.resource_filter import ResourceFilter
from berth.scheduler.filters.runtime_filter import RuntimeFilter

ALL: dict[str, type] = {
    "AvailabilityZoneFilter": AvailabilityZoneFilter,
    "ComputeFilter": ComputeFilter,
    "RuntimeFilter": RuntimeFilter,
    "ResourceFilter": ResourceFilter,
    "LabelFilter": LabelFilter,
}


def by_name(names: list[str], default_schedule_zone: str | None = None) -> list[Filter]:
    out: list[Filter] = []
    for name in names:
        cls = ALL.get(name)
        if cls is None:
            raise ValueError(f"unknown scheduler filter {name!r}; known: {sorted(ALL)}")
        out.append(cls(default_schedule_zone) if cls is AvailabilityZoneFilter else cls())
    return out
