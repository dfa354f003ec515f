"""The row-cost benchmark (bench P15R, ``python -m bench.fleet.row_costs``) runs its
four pairs on its own PostgreSQL database, drops it, and gives a figure for each.
The figures themselves are the bench's, never checked here."""

from __future__ import annotations

import psycopg
import pytest

from bench.fleet import row_costs
from bench.fleet.services import PG_ADMIN_URL

pytestmark = pytest.mark.integration


def _scratch_databases() -> set[str]:
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        return {name for (name,) in conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'berth_rowcost_%'")}


def test_each_pair_is_measured_on_a_database_of_its_own(rabbit_services: None,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    before = _scratch_databases()
    assert row_costs.main(["--ops", "10", "--rounds", "1"]) == 0
    printed = capsys.readouterr().out
    for name in ("update", "read", "describe", "json"):
        assert f"P15R {name}: " in printed
    assert _scratch_databases() == before
