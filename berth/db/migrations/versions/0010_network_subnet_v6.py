"""network.subnet_v6: a dual-stack local network's IPv6 subnet (its containers'
IPv6 addresses mirror their IPv4 ones: berth.network.base), unique as ``subnet`` is.

Revision ID: 0010
Revises: 0009
"""
import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("network") as batch:
        batch.add_column(sa.Column("subnet_v6", sa.String(43), nullable=True))
        batch.create_unique_constraint("uniq_network0subnet_v6", ["subnet_v6"])


def downgrade() -> None:
    with op.batch_alter_table("network") as batch:
        batch.drop_constraint("uniq_network0subnet_v6", type_="unique")
        batch.drop_column("subnet_v6")
