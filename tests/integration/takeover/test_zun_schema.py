"""``zun18_schema.sql`` (what the import tests load when Zun's venv is absent) is what
Zun 18's own ``zun-db-manage upgrade`` makes: table by table, column by column. Runs
where ``.ci/zun-ci.sh install`` has made Zun's venv (10 s)."""

from __future__ import annotations

import re

import pytest
from support.zun_database import sql, zun_database, zun_db_manage_available


def tables(name: str) -> dict[str, list[str]]:
    """Each table's CREATE statement as its sorted lines (MariaDB lists keys in the
    order they were made, which differs between migrating and loading a dump)."""
    out = {}
    for (table,) in sql(name, "SHOW TABLES"):
        create = sql(name, f"SHOW CREATE TABLE `{table}`")[0][1]
        out[table] = sorted(line.strip().rstrip(",") for line in
                            re.sub(r" AUTO_INCREMENT=\d+", "", create).splitlines())
    return out


@pytest.mark.skipif(not zun_db_manage_available(),
                    reason="Zun's venv is absent: `bash .ci/zun-ci.sh install` makes it")
def test_the_dumped_schema_is_zun_db_manage_s() -> None:
    with zun_database(real=True) as real, zun_database(real=False) as dumped:
        assert tables(real) == tables(dumped)
        assert sql(real, "SELECT version_num FROM alembic_version") == \
            sql(dumped, "SELECT version_num FROM alembic_version") == [("3f2b36231bee",)]
