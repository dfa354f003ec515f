"""Embedded Placement: resource providers, inventory, allocations, traits, aggregates.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 23:12:49.618524
"""
import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('resource_provider',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', name='uniq_resource_provider0name'),
    sa.UniqueConstraint('uuid', name='uniq_resource_provider0uuid')
    )
    op.create_table('allocation',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('consumer_id', sa.String(length=36), nullable=False),
    sa.Column('resource_class', sa.String(length=255), nullable=False),
    sa.Column('used', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('user_id', sa.String(length=255), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['resource_provider_id'], ['resource_provider.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('consumer_id', 'resource_provider_id', 'resource_class', name='uniq_allocation0consumer0provider0class')
    )
    with op.batch_alter_table('allocation', schema=None) as batch_op:
        batch_op.create_index('allocation_consumer_idx', ['consumer_id'], unique=False)
        batch_op.create_index('allocation_provider_class_idx', ['resource_provider_id', 'resource_class'], unique=False)

    op.create_table('inventory',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('resource_class', sa.String(length=255), nullable=False),
    sa.Column('total', sa.Integer(), nullable=False),
    sa.Column('reserved', sa.Integer(), nullable=False),
    sa.Column('min_unit', sa.Integer(), nullable=False),
    sa.Column('max_unit', sa.Integer(), nullable=False),
    sa.Column('step_size', sa.Integer(), nullable=False),
    sa.Column('allocation_ratio', sa.Float(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['resource_provider_id'], ['resource_provider.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('resource_provider_id', 'resource_class', name='uniq_inventory0provider0class')
    )
    op.create_table('resource_provider_aggregate',
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('aggregate_uuid', sa.String(length=36), nullable=False),
    sa.ForeignKeyConstraint(['resource_provider_id'], ['resource_provider.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('resource_provider_id', 'aggregate_uuid')
    )
    op.create_table('resource_provider_trait',
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('trait', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['resource_provider_id'], ['resource_provider.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('resource_provider_id', 'trait')
    )


def downgrade() -> None:
    op.drop_table('resource_provider_trait')
    op.drop_table('resource_provider_aggregate')
    op.drop_table('inventory')
    with op.batch_alter_table('allocation', schema=None) as batch_op:
        batch_op.drop_index('allocation_provider_class_idx')
        batch_op.drop_index('allocation_consumer_idx')

    op.drop_table('allocation')
    op.drop_table('resource_provider')
