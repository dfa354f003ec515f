"""docs/networking.md, run as written: a spanning network on a fleet of two namespaced
nodes (``.ci/ci-services.sh fleet-start 2``), a server on one node reached from a
container of the other and from both nodes' hosts, then everything removed.

Opt-in like the other fleet tests (``BERTH_FLEET_TESTS=1``): starting the fleet takes
one to two minutes on the test machine. The fleet is this run's own
(``BERTH_FLEET_NAME=docs<random>``: its own nodes, namespaces, underlay, database and
vhost), so the CI's fleet or another engineer's may run beside it; it is stopped at
the end even when the page fails half-way."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from docs.guide import DOCS
from docs.runner import run_page

ROOT = DOCS.parent
SCRIPT = ROOT / ".ci" / "ci-services.sh"


@pytest.mark.skipif(os.environ.get("BERTH_FLEET_TESTS") != "1",
                    reason="opt-in with the fleet's tests (BERTH_FLEET_TESTS=1): starts a "
                           "fleet of two namespaced nodes, one to two minutes")
def test_networking_page_runs_a_spanning_network_as_written(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.fail("the page's fleet needs root: run the test as root")
    name = f"docs{uuid.uuid4().hex[:4]}"
    env = {"BERTH_FLEET_NAME": name}
    subs = [(".ci/ci-services.sh", str(SCRIPT)), ("ovlf", name)]
    try:
        seconds = run_page("networking.md", tmp_path, subs, env=env, timeout=600)
        print(f"networking.md ran in {seconds:.1f} s")
    finally:
        subprocess.run(["bash", str(SCRIPT), "fleet-stop"], env=dict(os.environ, **env),
                       capture_output=True, timeout=300, check=False)
