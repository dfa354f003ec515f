"""exec_instance.tty_size: the terminal size asked for a console that lives on a CRI
runtime's streaming server (the console proxy holds that stream and sends the size on
its resize channel; the agent, which gets the resize call, writes it here).

Revision ID: 0008
Revises: 0007
"""
import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("exec_instance") as batch:
        batch.add_column(sa.Column("tty_size", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("exec_instance") as batch:
        batch.drop_column("tty_size")
