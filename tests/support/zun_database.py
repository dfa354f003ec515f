"""A Zun 18 database of a test's own in the shared MariaDB: uniquely named
(``takeover_zun_<hex>``), made by Zun's own ``zun-db-manage upgrade`` when Zun's venv is
there (``.ci/zun-ci.sh install``), else from ``zun18_schema.sql``, the dump of exactly
what that command made (``tests/integration/takeover/test_zun_schema.py`` checks the two
agree whenever the venv is there); then filled with rows in Zun's own shapes (JSON as
text, registry passwords encrypted the way Zun encrypts them)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import tempfile
import uuid as uuidlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pymysql

MARIADB = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}
ZUN_VENV = Path(os.environ.get("BERTH_CI_STATE", "/var/tmp/berth-ci")) / "zun" / "venv"
SCHEMA = Path(__file__).resolve().parents[1] / "integration" / "takeover" / "zun18_schema.sql"
ZUN_DEFAULT_KEY = "notgood but just long enough i t"


def url_of(name: str) -> str:
    return f"mysql+pymysql://root@127.0.0.1:3306/{name}?charset=utf8mb4"


def sql(name: str | None, statements: str | list[str]) -> list[tuple[Any, ...]]:
    conn = pymysql.connect(autocommit=True, database=name, **MARIADB)  # type: ignore[arg-type]
    try:
        cur = conn.cursor()
        rows: list[tuple[Any, ...]] = []
        for stmt in [statements] if isinstance(statements, str) else statements:
            cur.execute(stmt)
            rows = list(cur.fetchall())
        return rows
    finally:
        conn.close()


def zun_db_manage_available() -> bool:
    return (ZUN_VENV / "bin" / "zun-db-manage").exists()


def make_schema(name: str, real: bool) -> None:
    if real:
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as conf:
            conf.write(f"[database]\nconnection = mysql+pymysql://root@127.0.0.1:3306/{name}\n")
            conf.flush()
            subprocess.run([str(ZUN_VENV / "bin" / "zun-db-manage"), "--config-file", conf.name,
                            "upgrade"], check=True, capture_output=True, timeout=300)
        return
    text = SCHEMA.read_text()
    sql(name, [s for s in (p.strip() for p in text.split(";\n")) if s])


@contextmanager
def zun_database(real: bool | None = None) -> Iterator[str]:
    """A new Zun 18 database (empty tables); yields its name; dropped afterwards."""
    name = f"takeover_zun_{uuidlib.uuid4().hex[:10]}"
    sql(None, f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    try:
        make_schema(name, zun_db_manage_available() if real is None else real)
        yield name
    finally:
        sql(None, f"DROP DATABASE IF EXISTS `{name}`")


def zun_encrypt(password: str, key: str = ZUN_DEFAULT_KEY) -> str:
    """A password as Zun stores it (Fernet, the key's first 32 characters base64'd)."""
    from cryptography.fernet import Fernet

    return Fernet(base64.b64encode(key[:32].encode())).encrypt(password.encode()).decode()


def insert(db: str, table: str, **values: Any) -> None:
    cols = ", ".join(f"`{k}`" for k in values)
    marks = ", ".join(["%s"] * len(values))
    conn = pymysql.connect(autocommit=True, database=db, **MARIADB)  # type: ignore[arg-type]
    try:
        conn.cursor().execute(f"INSERT INTO `{table}` ({cols}) VALUES ({marks})",
                              [json.dumps(v) if isinstance(v, (dict, list)) else v
                               for v in values.values()])
    finally:
        conn.close()


def checksums(name: str) -> dict[str, Any]:
    tables = [r[0] for r in sql(name, "SHOW TABLES")]
    rows = sql(name, f"CHECKSUM TABLE {', '.join(f'`{t}`' for t in tables)} EXTENDED")
    return {r[0]: r[1] for r in rows}
