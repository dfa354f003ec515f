"""network: berth's local networks (Zun's record, plus a subnet, a bridge and the
project's default-network marker).

Revision ID: 0006
Revises: 0005
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_TS = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "network",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("neutron_net_id", sa.String(length=255), nullable=True),
        sa.Column("network_id", sa.String(length=255), nullable=True),
        sa.Column("host", sa.String(length=255), nullable=True),
        sa.Column("project_id", sa.String(length=255), nullable=True),
        sa.Column("user_id", sa.String(length=255), nullable=True),
        sa.Column("subnet", sa.String(length=43), nullable=False),
        sa.Column("gateway", sa.String(length=39), nullable=False),
        sa.Column("bridge", sa.String(length=15), nullable=False),
        sa.Column("shared", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("default_of", sa.String(length=255), nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid", name="uniq_network0uuid"),
        sa.UniqueConstraint("subnet", name="uniq_network0subnet"),
        sa.UniqueConstraint("default_of", name="uniq_network0default_of"),
        sa.UniqueConstraint("neutron_net_id", "host", name="uniq_network0neutron_net_id0host"),
    )
    op.create_index("network_project_idx", "network", ["project_id"])


def downgrade() -> None:
    op.drop_index("network_project_idx", table_name="network")
    op.drop_table("network")
