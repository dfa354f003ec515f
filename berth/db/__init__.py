"""berth's records: SQLAlchemy 2 models (``models``), the engine and sessions
(``engine``), the queries every other package uses (``api``), and Alembic migrations
(``migrations/``). SQLite (WAL) is the embedded default; the same code runs on
PostgreSQL and MariaDB, so nothing here uses SQLite-only SQL.
"""
