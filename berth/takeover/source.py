"""Zun's database, read-only: who it is (Zun 18 at its Alembic head), and its rows.

The connection is made read-only before anything is read (MariaDB/MySQL: ``SET SESSION
TRANSACTION READ ONLY``; PostgreSQL: ``default_transaction_read_only``), and every
table is read in one repeatable-read transaction, so the rows are one consistent
picture even while Zun still runs. Nothing here ever writes to Zun's database: going
back to Zun is starting Zun again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

#: Zun 18's Alembic head: the only schema this import reads.
ZUN_HEAD = "3f2b36231bee"

#: Tables every Zun database at that head has (checked to tell Zun from anything else).
ZUN_MARKERS = ("container", "zun_service", "compute_node", "container_actions",
               "volume_mapping", "exec_instance", "registry")

#: The tables read, each a table group's input.
ZUN_TABLES = ("container", "exec_instance", "volume", "volume_mapping", "image", "registry",
              "quotas", "quota_classes", "quota_usages", "compute_node", "zun_service",
              "container_actions", "container_actions_events", "network", "pci_device",
              "resource_provider", "inventory", "allocation")


class SourceRefused(Exception):
    """The database named is not one this import reads (the message says why)."""


@dataclass
class ZunRows:
    """Every row of Zun's tables, as dicts, ordered by id (or uuid)."""

    tables: dict[str, list[dict[str, Any]]]

    def __getitem__(self, name: str) -> list[dict[str, Any]]:
        return self.tables.get(name, [])


def _hide_password(url: str) -> str:
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparsable URL>"


@contextmanager
def _read_only(url: str) -> Iterator[Connection]:
    try:
        engine = create_engine(url, isolation_level="REPEATABLE READ" if not
                               url.startswith("sqlite") else None)
    except (ArgumentError, NoSuchModuleError, ImportError) as err:
        raise SourceRefused(f"--zun-connection {_hide_password(url)} is not a database URL "
                            f"berth can open ({err}); give Zun's [database]connection, e.g. "
                            f"mysql+pymysql://zun:PASSWORD@HOST/zun") from err
    try:
        try:
            conn = engine.connect()
        except DBAPIError as err:
            raise SourceRefused(f"cannot connect to the Zun database "
                                f"{_hide_password(url)}: {err.orig}") from err
        with conn:
            dialect = conn.dialect.name
            if dialect in ("mysql", "mariadb"):
                conn.exec_driver_sql("SET SESSION TRANSACTION READ ONLY")
            elif dialect == "postgresql":
                conn.exec_driver_sql("SET SESSION default_transaction_read_only = on")
            conn.commit()
            yield conn
    finally:
        engine.dispose()


def _identify(conn: Connection, url: str) -> None:
    names = set(inspect(conn).get_table_names())
    missing = [t for t in ZUN_MARKERS if t not in names]
    where = _hide_password(url)
    if "alembic_version" not in names or missing:
        raise SourceRefused(
            f"{where} is not a Zun database: "
            + (f"it has no table {', '.join(missing)}" if missing else
               "it has no alembic_version table")
            + ". Give Zun's own [database]connection (zun.conf).")
    if "console_token" in names or "task_deadline" in {
            c["name"] for c in inspect(conn).get_columns("container")}:
        raise SourceRefused(f"{where} is a berth database, not Zun's: give Zun's own "
                            f"[database]connection (zun.conf) as --zun-connection")
    revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    if revision != ZUN_HEAD:
        raise SourceRefused(
            f"the Zun database {where} is at Alembic revision {revision or 'none'}, but this "
            f"import reads Zun 18's head {ZUN_HEAD}: run Zun 18's `zun-db-manage upgrade` on "
            f"it first (a newer Zun's schema is not known to this berth)")


def read(url: str) -> ZunRows:
    """Zun's rows, after checking it is Zun 18's database; SourceRefused otherwise."""
    with _read_only(url) as conn:
        _identify(conn, url)
        names = set(inspect(conn).get_table_names())
        tables: dict[str, list[dict[str, Any]]] = {}
        for name in ZUN_TABLES:
            if name not in names:
                continue
            key = "uuid" if name == "compute_node" else "id"
            result = conn.execute(text(f"SELECT * FROM {name} ORDER BY {key}"))
            tables[name] = [dict(r) for r in result.mappings()]
        conn.rollback()
    return ZunRows(tables)
