"""A create Zun failed unsets the row's host but leaves the Docker container it made
(Zun's ``_fail_container(unset_host=True)``): ``berth db import-zun`` carries the row
and says, naming it, that its Docker container stays on a node berth cannot know and
is to be removed by hand. The real command on a Zun 18 database of the test's own."""

from __future__ import annotations

from pathlib import Path

from support.zun_database import url_of

from . import zun_rows
from .test_import_zun import conf_for, import_zun, rows


def test_a_failed_create_without_a_host_is_carried_with_a_note_naming_it(zun_db, tmp_path
                                                                          ) -> None:
    d = zun_rows.Deployment()
    zun_rows._container(zun_db, d, "capsule", 1, "Error", container_type=1, host=None,
                        container_id="5" * 64, status_reason="Docker internal error: 409")
    zun_rows._container(zun_db, d, "never-made", 2, "Error", host=None, container_id=None)
    url = f"sqlite:///{Path(tmp_path) / 'state' / 'berth.sqlite'}"
    done = import_zun(conf_for(tmp_path, url), url_of(zun_db))
    assert done.returncode == 0, done.stderr
    assert (f"note: container {d.u('capsule')}: Zun failed its create and unset its host, "
            f"leaving Docker container 555555555555 (zun-{d.u('capsule')})") in done.stdout
    assert f"remove zun-{d.u('capsule')} on that node by hand" in done.stdout
    assert d.u("never-made") not in done.stdout       # nothing of it left anywhere
    carried = {r["uuid"]: r for r in rows(url, "SELECT uuid, host, status FROM container")}
    assert carried[d.u("capsule")]["status"] == "Error" and carried[d.u("capsule")]["host"] is None
    assert set(carried) == {d.u("capsule"), d.u("never-made")}
