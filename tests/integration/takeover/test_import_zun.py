"""``berth db import-zun`` on a Zun 18 database of the test's own (MariaDB), into new
berth databases (SQLite and PostgreSQL), through the real command: what is carried and
how, what is refused (nothing written then), and a SIGKILL in the middle of the
import's write. Zun's database is checked unchanged after every run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from support.zun_database import checksums, url_of

from . import zun_rows
from .conftest import full_only

ROOT = Path(__file__).resolve().parents[3]


def berth_db(kind: str, tmp_path: Path, database_maker):  # type: ignore[no-untyped-def]
    if kind == "sqlite":
        from contextlib import nullcontext

        return nullcontext(f"sqlite:///{tmp_path / 'state' / 'berth.sqlite'}")
    return database_maker(kind)


def conf_for(tmp_path: Path, url: str, network_driver: str = "cni") -> Path:
    conf = tmp_path / "berth.conf"
    conf.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'state'}\n"
                    f"[database]\nconnection = {url}\n[network]\ndriver = {network_driver}\n")
    return conf


def import_zun(conf: Path, zun_url: str, *extra: str, wait: bool = True
               ) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    argv = [sys.executable, "-m", "berth.cmd.main", "--config-file", str(conf), "db",
            "import-zun", "--zun-connection", zun_url, *extra]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if not wait:
        return subprocess.Popen(argv, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    return subprocess.run(argv, cwd=ROOT, env=env, text=True, capture_output=True, timeout=300,
                          check=False)


def rows(url: str, query: str) -> list[dict]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [dict(r) for r in conn.execute(text(query)).mappings()]
    finally:
        engine.dispose()


def counts(url: str) -> dict[str, int]:
    from berth.takeover.plan import ORDER

    return {t: rows(url, f"SELECT count(*) AS n FROM {t}")[0]["n"] for t in ORDER}


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=full_only)])
def test_a_zun_deployment_is_carried_over(kind, zun_db, tmp_path, database_maker) -> None:
    d = zun_rows.fill(zun_db)
    before = checksums(zun_db)
    with berth_db(kind, tmp_path, database_maker) as url:
        conf = conf_for(tmp_path, url)
        dry = import_zun(conf, url_of(zun_db), "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert "container                  7" in dry.stdout
        if kind == "sqlite":
            assert not (tmp_path / "state" / "berth.sqlite").exists()   # a dry run writes nothing
        done = import_zun(conf, url_of(zun_db))
        assert done.returncode == 0, done.stderr
        assert checksums(zun_db) == before                      # Zun's database never written
        assert counts(url) == zun_rows.IMPORTED
        by_uuid = {r["uuid"]: r for r in rows(url, "SELECT * FROM container")}
        running = by_uuid[d.u("running")]
        assert (running["status"], running["name"], running["host"]) == (
            "Running", "takeover-running", zun_rows.HOST)
        as_json = (lambda v: json.loads(v) if isinstance(v, str) else v)
        assert as_json(running["cni_metadata"]) == {"networks": [
            {"network": zun_rows.NET, "ifname": "eth0", "fixed_ip": None,
             "port": zun_rows.PORT, "preserve_on_delete": False}], "pid": 4242}
        assert as_json(running["addresses"])[zun_rows.NET][0]["addr"] == "10.123.0.5"
        assert as_json(running["command"]) == ["sleep", "3600"]
        assert as_json(running["annotations"]) == {"k": "v"}
        assert by_uuid[d.u("busy")]["task_deadline"] is not None
        assert by_uuid[d.u("member")]["capsule_id"] == by_uuid[d.u("capsule")]["id"]
        # the registry's password, readable with berth's key
        from berth.db.registries import PasswordCipher, load_key

        reg = rows(url, "SELECT * FROM registry")[0]
        cipher = PasswordCipher(load_key(None, str(tmp_path / "state")))
        assert cipher.decrypt(reg["password"]) == "s3cret"
        limits = {r["resource"]: r["hard_limit"] for r in rows(url, "SELECT * FROM quotas")}
        assert limits == {"containers": 10, "memory": -1}
        allocs = rows(url, "SELECT consumer_id, resource_class, used FROM allocation")
        assert {(a["consumer_id"], a["resource_class"]): a["used"] for a in allocs} == {
            (d.u("running"), "VCPU"): 1, (d.u("running"), "MEMORY_MB"): 128,
            (d.u("stopped"), "VCPU"): 1, (d.u("stopped"), "MEMORY_MB"): 128,
            (d.u("busy"), "VCPU"): 1, (d.u("busy"), "MEMORY_MB"): 128,
            (d.u("capsule"), "VCPU"): 1, (d.u("capsule"), "MEMORY_MB"): 256}
        provider = rows(url, "SELECT uuid, name FROM resource_provider")[0]
        assert (provider["uuid"], provider["name"]) == (zun_rows.RP_UUID, zun_rows.HOST)
        net = rows(url, "SELECT * FROM network")[0]
        assert (net["uuid"], net["neutron_net_id"], net["subnet"]) == (
            d.u("network"), zun_rows.NET, f"n:{zun_rows.NET}")
        # the next row berth makes gets a new id (PostgreSQL's sequences moved past Zun's)
        engine = create_engine(url)
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO quotas (project_id, resource, hard_limit, created_at) "
                              "VALUES ('p2', 'cpu', 4, CURRENT_TIMESTAMP)"))
        engine.dispose()
        again = import_zun(conf, url_of(zun_db))
        assert again.returncode == 1 and "not empty" in again.stderr
        assert checksums(zun_db) == before
