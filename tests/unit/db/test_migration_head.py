"""berth.db.migrate.HEAD lets processes check the schema without loading Alembic; it
must name the scripts' real head."""

from berth.db import migrate


def test_head_constant_is_the_scripts_head() -> None:
    assert migrate.HEAD == migrate.head_revision()


def test_current_revision_of_an_empty_database_is_none(tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'empty.sqlite'}"
    assert migrate.current_revision(url) is None
    assert not migrate.is_current(url)
    migrate.upgrade(url)
    assert migrate.current_revision(url) == migrate.HEAD
    assert migrate.is_current(url)
