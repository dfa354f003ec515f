"""An unreachable database is a 503 in Zun's format saying so (R3 found 500s while
PostgreSQL was stopped): nothing the client sent was wrong, and it may retry."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

import sqlalchemy.exc
from fastapi.testclient import TestClient

from berth.api.app import create_app
from berth.api.state import ApiSettings, ApiState


class AwayDatabase:
    """Every way of reaching it fails as psycopg does when the server is stopped."""

    reads_on_loop = False

    @contextmanager
    def _away(self) -> Any:
        raise sqlalchemy.exc.OperationalError("SELECT 1", {},
                                              Exception("connection refused"))
        yield  # pragma: no cover

    reader = writer = connection = write_connection = _away


def test_a_request_while_the_database_is_away_is_a_503() -> None:
    state = ApiState(db=AwayDatabase(), compute=None, scheduler=None,  # type: ignore[arg-type]
                     settings=ApiSettings(), up_hosts=object())  # type: ignore[arg-type]
    resp = TestClient(create_app(state)).get(
        "/v1/containers", headers={"X-Auth-Token": "admin"})
    assert resp.status_code == 503
    (err,) = resp.json()["errors"]
    assert err["status"] == 503 and "database does not answer" in err["detail"]
