"""What ``berth db import-zun`` refuses, each with a clear message and nothing written
anywhere; and a SIGKILL during its write, after which it runs again to the same end."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from sqlalchemy import create_engine, text
from support.berth_proc import wait_for
from support.zun_database import checksums, sql, url_of

from . import zun_rows
from .conftest import full_only
from .test_import_zun import conf_for, counts, import_zun, rows


def nothing_written(tmp_path: Path) -> bool:
    return not (tmp_path / "state" / "berth.sqlite").exists()


def sqlite_conf(tmp_path: Path) -> Path:
    return conf_for(tmp_path, f"sqlite:///{tmp_path / 'state' / 'berth.sqlite'}")


def test_a_zun_database_at_another_head_is_refused_naming_it(zun_db, tmp_path) -> None:
    zun_rows.fill(zun_db)
    sql(zun_db, "UPDATE alembic_version SET version_num = 'f979327df44b'")
    before = checksums(zun_db)
    out = import_zun(sqlite_conf(tmp_path), url_of(zun_db))
    assert out.returncode == 1
    assert "Alembic revision f979327df44b" in out.stderr and "3f2b36231bee" in out.stderr
    assert nothing_written(tmp_path) and checksums(zun_db) == before


@full_only
def test_what_is_not_a_zun_database_is_refused(tmp_path) -> None:
    name = f"takeover_notzun_{int(time.time() * 1000) % 10**8}"
    sql(None, f"CREATE DATABASE `{name}`")
    try:
        sql(name, "CREATE TABLE container (id INT PRIMARY KEY)")
        out = import_zun(sqlite_conf(tmp_path), url_of(name))
        assert out.returncode == 1 and "is not a Zun database" in out.stderr
        assert "zun_service" in out.stderr and nothing_written(tmp_path)
    finally:
        sql(None, f"DROP DATABASE IF EXISTS `{name}`")
    # berth's own database is not Zun's either
    other = tmp_path / "other"
    other.mkdir()
    berth_url = f"sqlite:///{other / 'berth.sqlite'}"
    from berth.db import migrate

    migrate.upgrade(berth_url)
    out = import_zun(sqlite_conf(tmp_path), berth_url)
    assert out.returncode == 1 and "is a berth database, not Zun's" in out.stderr
    assert nothing_written(tmp_path)
    out = import_zun(sqlite_conf(tmp_path), "mysql+pymysql://root@127.0.0.1:1/none")
    assert out.returncode == 1 and "cannot connect to the Zun database" in out.stderr


@full_only
def test_rows_that_cannot_be_carried_stop_a_real_run_until_told(zun_db, tmp_path) -> None:
    d = zun_rows.fill(zun_db, bad_registry=True)
    conf = sqlite_conf(tmp_path)
    dry = import_zun(conf, url_of(zun_db), "--dry-run")
    assert dry.returncode == 0
    assert f"registry {d.u('registry-other-key')}: its password does not decrypt" in dry.stdout
    refused = import_zun(conf, url_of(zun_db))
    assert refused.returncode == 1 and "--leave-behind" in refused.stderr
    assert f"registry {d.u('registry-other-key')}" in refused.stderr
    assert nothing_written(tmp_path)
    done = import_zun(conf, url_of(zun_db), "--leave-behind")
    assert done.returncode == 0, done.stderr
    url = f"sqlite:///{tmp_path / 'state' / 'berth.sqlite'}"
    assert [r["uuid"] for r in rows(url, "SELECT uuid FROM registry")] == [d.u("registry")]
    assert counts(url)["container"] == 7


@full_only
def test_an_import_killed_while_writing_runs_again_to_the_same_end(
        zun_db, tmp_path, database_maker) -> None:
    """SIGKILL while the import's transaction has written the containers and waits on
    a lock held here on a later table (network): nothing stays; a second run ends as
    one uninterrupted run would."""
    zun_rows.fill(zun_db)
    with database_maker("postgresql") as url:
        from berth.db import migrate

        migrate.upgrade(url)
        conf = conf_for(tmp_path, url)
        engine = create_engine(url)
        with engine.connect() as holder:
            holder.execute(text("LOCK TABLE network IN SHARE MODE"))
            proc = import_zun(conf, url_of(zun_db), wait=False)
            try:
                def waiting() -> bool:
                    with engine.connect() as c:
                        return bool(c.execute(text(
                            "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                            "current_database() AND wait_event_type = 'Lock' AND query LIKE "
                            "'INSERT INTO network%'")).scalar())
                wait_for(waiting, timeout=120, interval=0.2, what="the import to wait on network")
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=30)
            finally:
                if proc.poll() is None:
                    proc.kill()
            holder.rollback()
        engine.dispose()
        wait_for(lambda: not rows(url, "SELECT pid FROM pg_stat_activity WHERE datname = "
                                       "current_database() AND pid <> pg_backend_pid()"),
                 timeout=30, what="the killed import's session to end")
        assert sum(counts(url).values()) == 0
        done = import_zun(conf, url_of(zun_db))
        assert done.returncode == 0, done.stderr
        assert counts(url) == zun_rows.IMPORTED
