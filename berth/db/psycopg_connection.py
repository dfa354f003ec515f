"""psycopg's connection, keeping the statements it prepared through a ROLLBACK.

psycopg runs a statement prepared from its fifth execution on a connection
(``prepare_threshold``), and PostgreSQL then plans it once for all after five more
executions (a generic plan). psycopg's ``rollback()`` of a transaction also forgets
every statement the connection had prepared, and has the server drop them
(``DEALLOCATE ALL``), in case the transaction dropped or altered what they refer to.
PostgreSQL keeps a session's prepared statements through a ROLLBACK, and berth's
transactions change no schema (its migrations run on connections of their own).

What the forgetting cost: in the fleet bench (P15) at 1,000 nodes, an API worker's
connection rolled back about every 65 statements (a node found filled, or no longer
the best, under its lock, before anything was written), so that most of the API's
statements ran unprepared or on a plan of their own: PostgreSQL spent 30 % of its
time on the run's statements planning them.

A transaction in error (a statement failed in it: a statement psycopg was preparing
may be one) rolls back psycopg's way, as does a rollback in pipeline mode, of a
two-phase transaction or inside psycopg's own ``transaction()`` block (berth's
rollbacks are none of these: SQLAlchemy's, of a transaction it began).
"""

from __future__ import annotations

from typing import Any

from psycopg import Connection, pq
from psycopg.abc import PQGen

_INTRANS = pq.TransactionStatus.INTRANS


class KeepsPreparedConnection(Connection[Any]):
    """A psycopg connection whose rollback of a transaction without error keeps the
    statements prepared on it (``Database`` makes its PostgreSQL connections so)."""

    def _rollback_gen(self) -> PQGen[None]:
        if (self.pgconn.transaction_status != _INTRANS or self._num_transactions
                or self._tpc or self._pipeline):
            return (yield from super()._rollback_gen())
        yield from self._exec_command(b"ROLLBACK")
