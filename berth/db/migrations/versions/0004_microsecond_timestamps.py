"""Timestamps with microseconds on MySQL/MariaDB (DATETIME(6)); a no-op elsewhere.

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def _datetime_columns(fsp: int | None):  # type: ignore[no-untyped-def]
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    for table in inspector.get_table_names():
        if table == "alembic_version":
            continue
        for column in inspector.get_columns(table):
            ctype = column["type"]
            if isinstance(ctype, mysql.DATETIME) and (getattr(ctype, "fsp", None) or None) == fsp:
                yield table, column


def upgrade() -> None:
    if op.get_bind().dialect.name not in ("mysql", "mariadb"):
        return
    for table, column in list(_datetime_columns(None)):
        op.alter_column(table, column["name"], existing_type=column["type"],
                        type_=mysql.DATETIME(fsp=6), existing_nullable=column["nullable"])


def downgrade() -> None:
    if op.get_bind().dialect.name not in ("mysql", "mariadb"):
        return
    for table, column in list(_datetime_columns(6)):
        op.alter_column(table, column["name"], existing_type=column["type"],
                        type_=mysql.DATETIME(), existing_nullable=column["nullable"])
