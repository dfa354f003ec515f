"""docs/monitoring.md: its metrics table is the one the declarations make
(berth/metrics/catalog.py), every metric its text names is declared, and its commands
run as written on ``berth serve`` (JSON logs, /healthz, /readyz, /metrics)."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import docker
from support.berth_proc import free_port

from docs import metrics_table
from docs.guide import DOCS
from docs.runner import run_page

PAGE = DOCS / "monitoring.md"


def test_metrics_table_is_made_from_the_declarations() -> None:
    text = PAGE.read_text()
    expected = metrics_table.replace_in(text)
    if os.environ.get("BERTH_DOCS_WRITE") == "1" and expected != text:
        PAGE.write_text(expected)
        text = expected
    assert text == expected, ("docs/monitoring.md's metrics table is not what "
                              "berth/metrics/catalog.py declares: run "
                              "`BERTH_DOCS_WRITE=1 pytest tests/docs/test_monitoring.py`")


def test_every_metric_the_guide_names_is_declared() -> None:
    declared = {name for name, *_ in metrics_table.rows()}
    # a histogram is read through its _bucket, _count and _sum series
    series = declared | {f"{n}{s}" for n in declared for s in ("_bucket", "_count", "_sum")}
    named = set()
    for page in DOCS.glob("*.md"):
        named |= set(re.findall(r"\bberth_[a-z_]+", page.read_text()))
    named -= {"berth_docs"}          # not a metric: the multi-node test's names
    assert named - series == set()
    assert len(declared) >= 20


def test_monitoring_page_runs_as_written(tmp_path: Path, docker_engine: None) -> None:
    host = f"docs-{uuid.uuid4().hex[:8]}"
    subs = [("node1", host), ("/var/lib/berth", str(tmp_path / "state")),
            ("9517", str(free_port())), ("6784", str(free_port())),
            ("9036", str(free_port()))]
    env = {"OS_CNI_DAEMON__SWEEP_ORPHAN_VETHS": "false",
           "OS_NETWORK__LOCAL_SUBNET_POOL": "10.244.100.0/22"}
    try:
        seconds = run_page("monitoring.md", tmp_path, subs, env=env)
    finally:
        client = docker.from_env()
        for c in client.containers.list(all=True, ignore_removed=True,
                filters={"label": f"berth.host={host}"}):
            c.remove(force=True)
        client.close()
    print(f"monitoring.md ran in {seconds:.1f} s")
