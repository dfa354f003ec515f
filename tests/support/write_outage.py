"""A database outage as the agent's flows see it, for unit tests on SQLite: the row
writes (``containers.update_`` and ``update_with``) fail with the error a MariaDB that
went away raises, from the first write a predicate picks, for some seconds."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy.exc

from berth.db import containers
from berth.db.engine import Database


def gone() -> sqlalchemy.exc.OperationalError:
    """What SQLAlchemy raises for a database that went away."""
    return sqlalchemy.exc.OperationalError("UPDATE containers", {},
                                           Exception("(2006, 'server has gone away')"))


class Outage:
    """Writes of rows fail from the first one ``begins`` matches, for ``seconds``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch,
                 begins: Callable[[dict[str, Any]], bool], seconds: float) -> None:
        self.until: float | None = None
        self.failed = 0
        for name in ("update_", "update_with"):
            real = getattr(containers, name)
            monkeypatch.setattr(containers, name, self._wrap(real, begins, seconds))

    def _wrap(self, real: Callable[..., Any], begins: Callable[[dict[str, Any]], bool],
              seconds: float) -> Callable[..., Any]:
        def write(db: Database, uuid: str, values: Any, *args: Any, **kwargs: Any) -> Any:
            now = time.monotonic()
            if self.until is None and begins(dict(values)):
                self.until = now + seconds
            if self.until is not None and now < self.until:
                self.failed += 1
                raise gone()
            return real(db, uuid, values, *args, **kwargs)
        return write
