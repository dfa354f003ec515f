"""Alembic environment: berth runs migrations from code (berth.db.migrate)."""

from alembic import context
from sqlalchemy import create_engine, pool

from berth.db import placement_models  # noqa: F401  (embedded Placement tables)
from berth.db.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("berth's Alembic configuration has no sqlalchemy.url: run "
                           "migrations through 'berth db upgrade'")
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run_migrations_online()
