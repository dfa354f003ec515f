"""volume and volume_mapping (Zun's records, plus a local volume's name and size and a
mapping's read_only).

Revision ID: 0007
Revises: 0006
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_TS = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "volume",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("project_id", sa.String(length=255), nullable=True),
        sa.Column("user_id", sa.String(length=255), nullable=True),
        sa.Column("cinder_volume_id", sa.String(length=36), nullable=True),
        sa.Column("volume_provider", sa.String(length=36), nullable=False),
        sa.Column("connection_info", sa.Text(), nullable=True),
        sa.Column("host", sa.String(length=255), nullable=True),
        sa.Column("auto_remove", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("contents", sa.Text(), nullable=True),
        sa.Column("size", sa.Integer(), nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid", name="uniq_volume0uuid"),
        sa.UniqueConstraint("volume_provider", "project_id", "name",
                            name="uniq_volume0provider0project0name"),
    )
    op.create_index("volume_host_idx", "volume", ["host"])
    op.create_table(
        "volume_mapping",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=True),
        sa.Column("user_id", sa.String(length=255), nullable=True),
        sa.Column("volume_id", sa.Integer(), nullable=False),
        sa.Column("container_path", sa.String(length=255), nullable=False),
        sa.Column("container_uuid", sa.String(length=36), nullable=False),
        sa.Column("read_only", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.ForeignKeyConstraint(["volume_id"], ["volume.id"], ondelete="CASCADE"),
        sa.UniqueConstraint("uuid", name="uniq_volume_mapping0uuid"),
    )
    op.create_index("volume_mapping_container_idx", "volume_mapping", ["container_uuid"])
    op.create_index("volume_mapping_volume_idx", "volume_mapping", ["volume_id"])


def downgrade() -> None:
    op.drop_index("volume_mapping_volume_idx", table_name="volume_mapping")
    op.drop_index("volume_mapping_container_idx", table_name="volume_mapping")
    op.drop_table("volume_mapping")
    op.drop_index("volume_host_idx", table_name="volume")
    op.drop_table("volume")
