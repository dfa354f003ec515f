"""container.dns_config: a capsule's DNS options (its template's spec.dnsConfig), for
its sandbox (Docker's dns options, or the CRI pod's DNSConfig).

Revision ID: 0009
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("container") as batch:
        batch.add_column(sa.Column("dns_config", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("container") as batch:
        batch.drop_column("dns_config")
