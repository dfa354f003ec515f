"""Initial tables: container, compute_node, zun_service, container_actions(_events).

Revision ID: 0001
Revises: 
Create Date: 2026-11-29 22:56:19.788039
"""
import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table('compute_node',
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('rp_uuid', sa.String(length=36), nullable=True),
    sa.Column('hostname', sa.String(length=255), nullable=False),
    sa.Column('numa_topology', sa.JSON(), nullable=True),
    sa.Column('mem_total', sa.Integer(), nullable=False),
    sa.Column('mem_free', sa.Integer(), nullable=False),
    sa.Column('mem_available', sa.Integer(), nullable=False),
    sa.Column('mem_used', sa.Integer(), nullable=False),
    sa.Column('total_containers', sa.Integer(), nullable=False),
    sa.Column('running_containers', sa.Integer(), nullable=False),
    sa.Column('paused_containers', sa.Integer(), nullable=False),
    sa.Column('stopped_containers', sa.Integer(), nullable=False),
    sa.Column('cpus', sa.Integer(), nullable=False),
    sa.Column('cpu_used', sa.Float(), nullable=False),
    sa.Column('architecture', sa.String(length=32), nullable=True),
    sa.Column('os_type', sa.String(length=32), nullable=True),
    sa.Column('os', sa.String(length=64), nullable=True),
    sa.Column('kernel_version', sa.String(length=128), nullable=True),
    sa.Column('labels', sa.JSON(), nullable=True),
    sa.Column('disk_total', sa.Integer(), nullable=False),
    sa.Column('disk_used', sa.Integer(), nullable=False),
    sa.Column('disk_quota_supported', sa.Boolean(), nullable=False),
    sa.Column('runtimes', sa.JSON(), nullable=True),
    sa.Column('enable_cpu_pinning', sa.Boolean(), nullable=False),
    sa.Column('pci_stats', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('uuid'),
    sa.UniqueConstraint('hostname', name='uniq_compute_node0hostname'),
    sa.UniqueConstraint('rp_uuid', name='uniq_compute_node0rp_uuid')
    )
    op.create_table('container',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('container_id', sa.String(length=255), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('user_id', sa.String(length=255), nullable=True),
    sa.Column('image', sa.String(length=255), nullable=True),
    sa.Column('image_driver', sa.String(length=255), nullable=True),
    sa.Column('image_pull_policy', sa.Text(), nullable=True),
    sa.Column('command', sa.JSON(), nullable=True),
    sa.Column('entrypoint', sa.JSON(), nullable=True),
    sa.Column('cpu', sa.Float(), nullable=True),
    sa.Column('cpu_policy', sa.String(length=255), nullable=True),
    sa.Column('cpuset', sa.JSON(), nullable=True),
    sa.Column('memory', sa.String(length=255), nullable=True),
    sa.Column('disk', sa.Integer(), nullable=True),
    sa.Column('status', sa.String(length=20), nullable=True),
    sa.Column('status_reason', sa.Text(), nullable=True),
    sa.Column('status_detail', sa.String(length=50), nullable=True),
    sa.Column('task_state', sa.String(length=20), nullable=True),
    sa.Column('environment', sa.JSON(), nullable=True),
    sa.Column('workdir', sa.String(length=255), nullable=True),
    sa.Column('ports', sa.JSON(), nullable=True),
    sa.Column('exposed_ports', sa.JSON(), nullable=True),
    sa.Column('hostname', sa.String(length=63), nullable=True),
    sa.Column('labels', sa.JSON(), nullable=True),
    sa.Column('annotations', sa.JSON(), nullable=True),
    sa.Column('addresses', sa.JSON(), nullable=True),
    sa.Column('security_groups', sa.JSON(), nullable=True),
    sa.Column('host', sa.String(length=255), nullable=True),
    sa.Column('restart_policy', sa.JSON(), nullable=True),
    sa.Column('interactive', sa.Boolean(), nullable=False),
    sa.Column('tty', sa.Boolean(), nullable=False),
    sa.Column('auto_remove', sa.Boolean(), nullable=False),
    sa.Column('auto_heal', sa.Boolean(), nullable=False),
    sa.Column('runtime', sa.String(length=32), nullable=True),
    sa.Column('privileged', sa.Boolean(), nullable=False),
    sa.Column('healthcheck', sa.JSON(), nullable=True),
    sa.Column('websocket_url', sa.String(length=255), nullable=True),
    sa.Column('websocket_token', sa.String(length=255), nullable=True),
    sa.Column('started_at', sa.DateTime(), nullable=True),
    sa.Column('registry_id', sa.Integer(), nullable=True),
    sa.Column('cni_metadata', sa.JSON(), nullable=True),
    sa.Column('capsule_id', sa.Integer(), nullable=True),
    sa.Column('container_type', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['capsule_id'], ['container.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('uuid', name='uniq_container0uuid')
    )
    with op.batch_alter_table('container', schema=None) as batch_op:
        batch_op.create_index('container_host_idx', ['host'], unique=False)
        batch_op.create_index('container_name_idx', ['name'], unique=False)
        batch_op.create_index('container_project_idx', ['project_id'], unique=False)

    op.create_table('zun_service',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('binary', sa.String(length=255), nullable=False),
    sa.Column('disabled', sa.Boolean(), nullable=False),
    sa.Column('disabled_reason', sa.String(length=255), nullable=True),
    sa.Column('last_seen_up', sa.DateTime(), nullable=True),
    sa.Column('forced_down', sa.Boolean(), nullable=False),
    sa.Column('report_count', sa.Integer(), nullable=False),
    sa.Column('availability_zone', sa.String(length=255), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('host', 'binary', name='uniq_zun_service0host0binary')
    )
    op.create_table('container_actions',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('action', sa.String(length=255), nullable=True),
    sa.Column('container_uuid', sa.String(length=36), nullable=False),
    sa.Column('request_id', sa.String(length=255), nullable=True),
    sa.Column('user_id', sa.String(length=255), nullable=True),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('start_time', sa.DateTime(), nullable=True),
    sa.Column('finish_time', sa.DateTime(), nullable=True),
    sa.Column('message', sa.String(length=255), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['container_uuid'], ['container.uuid'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('container_actions', schema=None) as batch_op:
        batch_op.create_index('container_actions_req_idx', ['container_uuid', 'request_id'], unique=False)
        batch_op.create_index('container_uuid_idx', ['container_uuid'], unique=False)

    op.create_table('container_actions_events',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('event', sa.String(length=255), nullable=True),
    sa.Column('action_id', sa.Integer(), nullable=False),
    sa.Column('start_time', sa.DateTime(), nullable=True),
    sa.Column('finish_time', sa.DateTime(), nullable=True),
    sa.Column('result', sa.String(length=255), nullable=True),
    sa.Column('traceback', sa.Text(), nullable=True),
    sa.Column('details', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['action_id'], ['container_actions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )



def downgrade() -> None:

    op.drop_table('container_actions_events')
    with op.batch_alter_table('container_actions', schema=None) as batch_op:
        batch_op.drop_index('container_uuid_idx')
        batch_op.drop_index('container_actions_req_idx')

    op.drop_table('container_actions')
    op.drop_table('zun_service')
    with op.batch_alter_table('container', schema=None) as batch_op:
        batch_op.drop_index('container_project_idx')
        batch_op.drop_index('container_name_idx')
        batch_op.drop_index('container_host_idx')

    op.drop_table('container')
    op.drop_table('compute_node')

