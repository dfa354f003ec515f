"""reboot, pause, unpause, kill, rebuild, update, resize_container, security groups."""

from __future__ import annotations

from berth.compute.endpoints import EndpointBase


class ActionEndpoints(EndpointBase):
    METHODS: frozenset[str] = frozenset()
