"""The seed's state sync that reads every row, on Zun and on berth.

Each database gets 50 container rows of another host beside the rows of the service's
own, copied from one real row of its own (so every column is one the service wrote).
Then MariaDB's general log records what the service sends while its periodic state
sync runs (``statement_log.GeneralLog``), and every SELECT on the ``container`` table it
sent is run again to count the rows it returns. zun-compute's sync asks for every
container of every project and host (``objects.Container.list(ctx)``, seed: "SELECT …
FROM container with no host filter"), so each run reads the other host's 50 rows too.
berth's reads this host's rows only (design.md, item 1), and none of the other host's.

Zun's database is Zun's own (``zun_ci``); berth runs as ``berth serve`` on a fresh
MariaDB database of the test's own, its sync every 5 s.
"""

from __future__ import annotations

import time
import uuid as uuidlib
from collections.abc import Iterator

import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

from compat.statement_log import GeneralLog, Read, connect
from compat.zun_services import (
    DEFECTS_OPT_IN,
    LOGS,
    LogTail,
    force_delete,
    run_on_zun_network,
    settle,
)

pytestmark = DEFECTS_OPT_IN

FOREIGN = 50
ELSEWHERE = "zundefects-elsewhere"
ZUN_DATABASE = "zun_ci"
SYNC_STARTS = "Start syncing container states"


def copy_rows(database: str, uuid: str, count: int) -> set[str]:
    """``count`` copies of row ``uuid`` recorded on host ``ELSEWHERE``; their uuids."""
    made: set[str] = set()
    with connect(database) as conn, conn.cursor() as cur:
        cur.execute("SELECT * FROM container WHERE uuid = %s", (uuid,))
        row = dict(cur.fetchone())
        row.pop("id")
        for i in range(count):
            new = dict(row, uuid=str(uuidlib.uuid4()), host=ELSEWHERE,
                       name=f"elsewhere-{i}-{uuidlib.uuid4().hex[:6]}",
                       container_id=uuidlib.uuid4().hex * 2)
            columns = ", ".join(f"`{c}`" for c in new)
            cur.execute(f"INSERT INTO container ({columns}) VALUES "
                        f"({', '.join(['%s'] * len(new))})", list(new.values()))
            made.add(new["uuid"])
    return made


def drop_rows(database: str, uuids: set[str]) -> None:
    if uuids:
        with connect(database) as conn, conn.cursor() as cur:
            cur.execute("DELETE FROM container WHERE uuid IN %s", (tuple(uuids),))


def tally(reads: list[Read], foreign: set[str]) -> tuple[int, int, int]:
    """(SELECTs on container, rows they returned, rows of the other host among them)."""
    return (len(reads), sum(len(r.rows) for r in reads),
            sum(r.count(foreign) for r in reads))


def test_zun_s_state_sync_reads_every_host_s_rows(zun: httpx.Client) -> None:
    uuid = run_on_zun_network(zun, "sync")
    foreign: set[str] = set()
    try:
        settle(zun, uuid, ("Running",))
        foreign = copy_rows(ZUN_DATABASE, uuid, FOREIGN)
        log = LogTail(LOGS / "zun-compute.log")
        with GeneralLog() as general:
            wait_for(lambda: SYNC_STARTS in log.text(), 150, interval=1,
                     what="zun-compute's next state sync")
            time.sleep(5)           # its queries follow the log line
        reads = general.reads(ZUN_DATABASE, "container")
        statements, rows, theirs = tally(reads, foreign)
        full = [r for r in reads if r.count(foreign) == FOREIGN]
        print(f"\n[zun] one state sync, {FOREIGN} rows of another host in the table: "
              f"{statements} SELECTs on container returned {rows} rows, {theirs} of them "
              f"the other host's; the full read: {full[0].sql[-160:] if full else None!r}")
        assert full, "zun-compute's sync should read the other host's rows"
        sql = full[0].sql.upper()
        assert "HOST" not in (sql.split("WHERE", 1)[1] if "WHERE" in sql else "")
    finally:
        drop_rows(ZUN_DATABASE, foreign)
        force_delete(zun, uuid)


@pytest.fixture(scope="module")
def berth_on_mariadb() -> Iterator[tuple[BerthProcess, str]]:
    from integration.conftest import fresh_database

    with fresh_database("mariadb") as url:
        database = url.rsplit("/", 1)[1].split("?", 1)[0]
        proc = BerthProcess(f"[DEFAULT]\ndebug = true\nsync_container_state_interval = 5\n"
                            f"[database]\nconnection = {url}\n").start(timeout=180)
        try:
            yield proc, database
        finally:
            proc.stop()


def test_berth_s_state_sync_reads_this_host_s_rows_only(
        berth_on_mariadb: tuple[BerthProcess, str]) -> None:
    proc, database = berth_on_mariadb
    http = proc.http()
    r = http.post("/v1/containers", params={"run": "true"}, json={
        "image": TEST_IMAGE, "command": ["sleep", "3600"], "image_pull_policy": "ifnotpresent"})
    assert r.status_code == 202, r.text
    uuid = r.json()["uuid"]
    foreign: set[str] = set()
    try:
        settle(http, uuid, ("Running",), 120)
        foreign = copy_rows(database, uuid, FOREIGN)
        with GeneralLog() as general:
            mark = len(proc.log_text())
            wait_for(lambda: proc.log_text()[mark:].count("rows read") >= 2, 60, interval=0.5,
                     what="two of berth's state syncs")
        reads = general.reads(database, "container")
        statements, rows, theirs = tally(reads, foreign)
        print(f"\n[berth] two state syncs, {FOREIGN} rows of another host in the table: "
              f"{statements} SELECTs on container returned {rows} rows, {theirs} of them "
              f"the other host's")
        assert reads, "berth's sync should have read its rows"
        assert theirs == 0
        assert all(len(r.rows) <= 1 for r in reads)    # this host holds one container
    finally:
        drop_rows(database, foreign)
        http.delete(f"/v1/containers/{uuid}", params={"force": "true"})
        http.close()
