"""docs/upgrade.md, run as written on a database an older berth made: its schema at
the first migration (0001), which is what `berth db upgrade` meets on an old
deployment."""

from __future__ import annotations

import uuid
from pathlib import Path

from support.berth_proc import free_port

from berth.db import migrate
from docs.runner import run_page


def test_upgrade_page_runs_as_written(tmp_path: Path, docker_engine: None) -> None:
    state = tmp_path / "state"
    state.mkdir()
    migrate.upgrade(f"sqlite:///{state / 'berth.sqlite'}", "0001")
    subs = [("node1", f"docs-{uuid.uuid4().hex[:8]}"), ("/var/lib/berth", str(state)),
            ("9517", str(free_port())), ("6784", str(free_port())),
            ("9036", str(free_port()))]
    env = {"OS_CNI_DAEMON__SWEEP_ORPHAN_VETHS": "false",
           "OS_NETWORK__LOCAL_SUBNET_POOL": "10.244.104.0/22"}
    seconds = run_page("upgrade.md", tmp_path, subs, env=env)
    print(f"upgrade.md ran in {seconds:.1f} s")
