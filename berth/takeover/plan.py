"""What an import would write: rows per berth table, and the Zun rows it cannot carry.

Every table group module fills one ``Plan``; the target writes ``Plan.rows`` in the
order the tables are listed (parents before children), and ``run`` prints the counts
and ``Plan.uncarried``.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import JSON, Boolean, Table

from berth.db.base import Base

#: berth's tables in the order they are written (a row's parents first).
ORDER = ("registry", "container", "exec_instance", "volume", "volume_mapping", "image",
         "quotas", "quota_classes", "compute_node", "zun_service", "container_actions",
         "container_actions_events", "network", "resource_provider", "allocation")


@dataclass(frozen=True)
class Uncarried:
    """A Zun row berth cannot take, and why (``ident``: its uuid, or its id)."""

    table: str
    ident: str
    reason: str

    def __str__(self) -> str:
        return f"{self.table} {self.ident}: {self.reason}"


@dataclass
class Plan:
    rows: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {name: [] for name in ORDER})
    uncarried: list[Uncarried] = field(default_factory=list)
    #: Things the operator should know that do not stop the import.
    notes: list[str] = field(default_factory=list)

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.rows[table].append(row)

    def refuse(self, table: str, ident: Any, reason: str) -> None:
        self.uncarried.append(Uncarried(table, str(ident), reason))

    def counts(self) -> dict[str, int]:
        return {name: len(rows) for name, rows in self.rows.items()}


def table(name: str) -> Table:
    return Base.metadata.tables[name]


def _json(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        value = value.decode()
    if isinstance(value, str):
        return json.loads(value) if value.strip() else None
    return value


def carry(zun_row: dict[str, Any], name: str, **overrides: Any) -> dict[str, Any]:
    """berth's row of table ``name`` from Zun's row: the columns both have, JSON text
    parsed where berth keeps JSON, MariaDB's tinyint made a bool where berth keeps one;
    ``overrides`` last. A JSON column whose text does not parse raises ValueError (the
    caller turns it into an uncarried row)."""
    out: dict[str, Any] = {}
    for col in table(name).columns:
        if col.name not in zun_row:
            continue
        value = zun_row[col.name]
        if value is not None and isinstance(col.type, JSON):
            try:
                value = _json(value)
            except ValueError as err:
                raise ValueError(f"column {col.name} holds text that is not JSON ({err})") from err
        elif value is not None and isinstance(col.type, Boolean):
            value = bool(value)
        out[col.name] = value
    out.update(overrides)
    if "created_at" in table(name).c and out.get("created_at") is None:
        out["created_at"] = now()          # berth's column is NOT NULL; Zun's may be empty
    return out


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)
