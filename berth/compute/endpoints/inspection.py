"""logs, top, stats, archives, commit."""

from __future__ import annotations

from berth.compute.endpoints import EndpointBase


class InspectionEndpoints(EndpointBase):
    METHODS: frozenset[str] = frozenset()
