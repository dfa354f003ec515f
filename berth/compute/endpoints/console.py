"""exec, exec resize, attach, TTY resize."""

from __future__ import annotations

from berth.compute.endpoints import EndpointBase


class ConsoleEndpoints(EndpointBase):
    METHODS: frozenset[str] = frozenset()
