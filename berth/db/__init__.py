"""berth's records: SQLAlchemy 2 models (``models``; the embedded Placement's tables in
``placement_models``), the engine and sessions (``engine``), one module of queries per
table (``containers``, ``capsules``, ``actions``, ``networks``, ``volumes``, ``nodes``,
``images``, ``quotas``, ``registries``; ``rows`` and ``paging`` for what they share),
and Alembic migrations (``migrations/``, applied by ``migrate``). SQLite (WAL) is the
embedded default; the same code runs on PostgreSQL and MariaDB, so nothing here uses
SQLite-only SQL.
"""
