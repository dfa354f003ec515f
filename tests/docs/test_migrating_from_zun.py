"""docs/migrating-from-zun.md's takeover, run as written on a Zun 18 database of the
test's own (MariaDB; ``support.zun_database``) filled with a small deployment's rows:
the dry run, then the import into a new berth database."""

from __future__ import annotations

from pathlib import Path

from integration.takeover import zun_rows
from support.zun_database import url_of, zun_database

from docs.runner import run_page


def test_the_takeover_runs_as_written(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with zun_database() as db:
        zun_rows.fill(db)
        subs = [("mysql+pymysql://zun:ZUN_DBPASS@controller/zun", url_of(db)),
                ("/var/lib/berth", str(state))]
        seconds = run_page("migrating-from-zun.md", tmp_path, subs)
    assert (state / "berth.sqlite").exists()
    print(f"migrating-from-zun.md ran in {seconds:.1f} s")
