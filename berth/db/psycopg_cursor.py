"""psycopg's cursor, with ``description`` built once per statement instead of once
per execution.

psycopg builds ``cursor.description`` anew on every access: a ``Column`` for each
column of the result, each decoding its name and looking its type up. SQLAlchemy
reads it once for every statement that returns rows, and berth's statements return
whole rows (a container's has 49 columns, an ``UPDATE ... RETURNING`` included): in
the fleet bench's profile of the agents (P15) that was 7 % of their CPU, about 200
``Column`` objects per container created. The columns of a statement's result are the
same at every execution (names, types, sizes come from the statement), so they are
kept, per statement text and result, and handed out as a new list each time. A text
whose result types follow its parameters' (``SELECT %s AS x``, given an int then a
str) keeps the types of its first execution in ``description``: the names are the
same, and the values are read by their own types (psycopg's loaders work from the
result, not from ``description``); berth's statements are SQLAlchemy's, typed.
"""

from __future__ import annotations

import threading
from typing import Any

from psycopg import Column, Cursor

#: Statements whose description is kept at most; past it, the kept ones are dropped
#: (SQLAlchemy's statements are a bounded set; text built by hand need not be).
MAX_KEPT = 2000

_kept: dict[tuple[str | bytes, int, int], tuple[Column, ...]] = {}
_lock = threading.Lock()


class DescribedOnceCursor(Cursor[Any]):
    """A client-side cursor whose ``description`` is built at a statement's first
    execution and reused at the next (``Database`` makes psycopg's connections with
    it: the ``cursor_factory`` connect argument)."""

    __slots__ = ()

    @property
    def description(self) -> list[Column] | None:
        result = self.pgresult
        # The statement as the caller gave it (``_query``, as sent, is cleared once
        # psycopg runs the statement prepared, from its fifth execution).
        query = self._last_query
        if result is None or query is None or not result.nfields:
            return super().description
        key = (query if isinstance(query, str | bytes) else repr(query), self._iresult,
               result.nfields)
        columns = _kept.get(key)
        if columns is None:
            built = super().description
            if built is None:
                return None
            columns = tuple(built)
            with _lock:
                if len(_kept) >= MAX_KEPT:
                    _kept.clear()
                _kept[key] = columns
        return list(columns)
