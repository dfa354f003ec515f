"""docs/single-node.md, run as written: ``berth serve`` on this machine's Docker engine,
driven with the OpenStack client."""

from __future__ import annotations

import uuid
from pathlib import Path

import docker
from support.berth_proc import TEST_IMAGE, free_port

from docs.runner import run_page


def test_single_node_page_runs_as_written(tmp_path: Path, docker_engine: None) -> None:
    host = f"docs-{uuid.uuid4().hex[:8]}"
    subs = [("node1", host), ("/var/lib/berth", str(tmp_path / "state")),
            ("9517", str(free_port())), ("6784", str(free_port())),
            ("9036", str(free_port())),
            # the image the test machines hold (the README's set-up builds local/busybox)
            ("local/busybox", TEST_IMAGE.split(":")[0])]
    env = {"OS_CNI_DAEMON__SWEEP_ORPHAN_VETHS": "false",
           "OS_NETWORK__LOCAL_SUBNET_POOL": "10.244.96.0/22"}
    try:
        seconds = run_page("single-node.md", tmp_path, subs, env=env)
    finally:
        client = docker.from_env()
        for c in client.containers.list(all=True, ignore_removed=True,
                filters={"label": f"berth.host={host}"}):
            c.remove(force=True)
        client.close()
    print(f"single-node.md ran in {seconds:.1f} s")
