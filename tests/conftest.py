"""How the tests share pytest-xdist's workers.

The test command (``scripts/test.sh``) runs the suite in two steps (with
``BERTH_TEST_WORKERS=0``, in one process): first the unit and functional tests in two
workers side by side, then the rest (docs, integration, reliability) in one process. Those time heartbeats, outages and evacuations against
the shared services and stop and start some of them; run beside the functional tests
in a first try, eight failed (that try was also without the scopes below, so which of
the two caused each failure is not settled). The functional tests pass side by side.

A worker takes one *scope* at a time (``scope_of``), whole and in order:

- a functional test module, so that its module fixtures (often a berth of its own)
  are made once;
- the CRI capsule tests together: they share the one private containerd, its images
  and its pods' cgroup parent;
- the docs, integration and reliability tests together, should they be run in
  workers all the same;
- a unit test alone: either worker takes it.

The functional tests' node engines (``offline``, ``diskquota``) are per worker
(``support.workers.worker_suffix``). Every berth a test starts has its own host
name, state directory, ports and subnets, so two berths on the host's engine do not
see each other's containers or networks.

(xdist's own ``--dist loadgroup`` would read ``xdist_group`` marks, but it renames
node ids in a way pytest 9 no longer reads: the marks have no effect there.)
"""

from __future__ import annotations

from typing import Any

SERVICES = ("tests/docs/", "tests/integration/", "tests/reliability/")
CRI = "tests/functional/compute/capsules/cri/"


def scope_of(nodeid: str) -> str:
    """What one worker runs whole: see the module's docstring."""
    path = nodeid.split("::", 1)[0]
    if path.startswith(SERVICES):
        return "services"
    if path.startswith(CRI):
        return "cri"
    if path.startswith("tests/functional/"):
        return path
    return nodeid


def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class ScopeScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return ScopeScheduling(config, log)
