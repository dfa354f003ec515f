"""The Placement provider this node's containers are allocated against, remembered
between creates: ``nodes.provider_uuid_of`` was one database read of every create
(bench P15), for a value that changes only when the node's inventory moves to a
shared provider (``periodic/inventory.py``).

A remembered value is only ever used to ask whether an allocation is already held;
when the answer is no, the caller reads the provider again (``reread``) before it
allocates, so a stale one costs a read and never an allocation on the wrong provider.
"""

from __future__ import annotations

import threading

from berth.db import nodes
from berth.db.engine import Database


class NodeProvider:
    """One agent's memo of its node's provider uuid. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: str | None = None

    def known(self, db: Database, host: str) -> tuple[str, bool]:
        """The provider, and whether it was remembered (True) or read now (False).
        ComputeNodeNotFound when the node has no row."""
        with self._lock:
            remembered = self._known
        if remembered is not None:
            return remembered, True
        return self.reread(db, host), False

    def reread(self, db: Database, host: str) -> str:
        """The provider read from the node's row now, and remembered."""
        provider = nodes.provider_uuid_of(db, host)
        with self._lock:
            self._known = provider
        return provider

    def forget(self) -> None:
        with self._lock:
            self._known = None
