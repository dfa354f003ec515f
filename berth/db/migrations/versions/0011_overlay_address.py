"""overlay_address: the addresses of local networks that span nodes, one row per
attachment, unique per network (the network-wide IPAM), with the node and underlay
address that hold it (what the other nodes' VXLAN tables are written from) and the
attachment's policy (what their security-group rules count).

Revision ID: 0011
Revises: 0010
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_TS = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "overlay_address",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("network_uuid", sa.String(36), nullable=False),
        sa.Column("address", sa.String(39), nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("mac", sa.String(17), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("tunnel_ip", sa.String(39), nullable=False),
        sa.Column("policy", sa.JSON(), nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=True),
        sa.UniqueConstraint("network_uuid", "address",
                            name="uniq_overlay_address0network0address"),
        sa.UniqueConstraint("network_uuid", "owner", name="uniq_overlay_address0network0owner"),
    )
    op.create_index("overlay_address_host_idx", "overlay_address", ["host"])


def downgrade() -> None:
    op.drop_index("overlay_address_host_idx", table_name="overlay_address")
    op.drop_table("overlay_address")
