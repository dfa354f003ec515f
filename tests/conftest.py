"""How the test command splits the suite into a parallel part and a serial part.

The test command (``scripts/test.sh``; docs/testing.md) runs it in two steps:

1. ``--part=parallel`` in two pytest-xdist workers: the tests under a prefix of
   ``PARALLEL`` that are not marked ``exclusive``;
2. ``--part=serial`` in one process: everything else. A test marked ``exclusive``
   takes a service every other test shares away (it stops RabbitMQ or the machine's
   PostgreSQL), so nothing may run beside it. A directory no prefix names (a new one)
   lands here too, until someone has checked that it may run beside the others and
   added it to ``PARALLEL`` with the scope its shared things need.

Without ``--part`` (``BERTH_TEST_WORKERS=0``, or paths given to the test command), every
collected test runs.

A worker takes one *scope* at a time (``scope_of``), whole and in order, so that what
the tests of a scope share (module fixtures such as a berth of their own, a session
fixture that sets a shared service up, a Neutron host) is never used from both workers
at once. ``PARALLEL`` maps a path prefix to its scope:

- ``"test"``: each test alone (pure unit tests);
- ``"module"``: a test module whole, with its module fixtures made once;
- ``"dir"``: the prefix's directory whole (its tests share session fixtures of their
  conftest, a service's users, or a host name);
- any other string: a named group; every prefix with that name runs on one worker
  (``"neutron"``: every berth on Neutron runs with the Neutron agent's host name, and
  two such berths side by side would take each other's containers for orphans).

The first matching prefix wins, so a more specific prefix comes first. Every berth a
test starts otherwise has its own host name, state directory, ports and subnets, and
the node engines of session fixtures have names per worker or per directory.

Scopes are handed out longest first (``weight``): the integration directories and the
docs and reliability tests, whose tests wait on heartbeats, outages and other services,
and the Schemathesis unit tests (minutes each), then the functional modules, then the
other unit tests; within a rank, the scope with more tests first. A long scope handed out last would leave the other worker idle at the end.

(xdist's own ``--dist loadgroup`` would read ``xdist_group`` marks, but it renames
node ids in a way pytest 9 no longer reads: the marks have no effect there.)
"""

from __future__ import annotations

from typing import Any

import pytest

#: (path prefix, scope), most specific first: see the module's docstring.
PARALLEL: tuple[tuple[str, str], ...] = (
    ("tests/unit/", "test"),
    # the CRI capsule tests share the one private containerd, its images and its pods'
    # cgroup parent
    ("tests/functional/compute/capsules/cri/", "cri"),
    ("tests/functional/", "module"),
    ("tests/docs/", "module"),
    ("tests/integration/network/", "neutron"),
    ("tests/integration/db/", "dir"),
    ("tests/integration/deploy/", "module"),
    # Glance's tests: a berth of their own, images and tags named per session
    ("tests/integration/image/", "dir"),
    # not tests/integration/fleet: its bursts hold up to 20 connections per API
    # process of the machine's PostgreSQL (100 in all), and beside another
    # deployment's they ran out of them ("remaining connection slots are reserved")
    ("tests/integration/keystone/", "dir"),
    ("tests/integration/placement/", "dir"),
    ("tests/integration/quota/", "dir"),
    ("tests/integration/rpc/", "dir"),
    # the takeover's: a Zun database (takeover_zun_<hex>) and a berth host per test
    ("tests/integration/takeover/", "dir"),
    ("tests/integration/volume/", "dir"),
    ("tests/reliability/", "dir"),
)
PARTS = ("parallel", "serial")
#: Hand-out rank of a scope by its path (higher first), see the docstring.
#: The Schemathesis runs over the OpenAPI document are unit tests that each take minutes
#: on a loaded machine: handed out with the integration directories, not last, where one
#: would keep a worker busy long after the other ran out of work.
RANKS = (("tests/unit/api/test_openapi_conformance.py", 2),
         ("tests/unit/api/test_openapi_fuzz.py", 2),
         ("tests/unit/", 0), ("tests/functional/", 1))


def _rule(path: str) -> tuple[str, str] | None:
    return next(((prefix, how) for prefix, how in PARALLEL if path.startswith(prefix)), None)


def part_of(nodeid: str, exclusive: bool) -> str:
    """``parallel`` or ``serial``: see the module's docstring."""
    if exclusive or _rule(nodeid.split("::", 1)[0]) is None:
        return "serial"
    return "parallel"


def scope_of(nodeid: str) -> str:
    """What one worker runs whole: see the module's docstring."""
    path = nodeid.split("::", 1)[0]
    rule = _rule(path)
    if rule is None:
        return path                     # run in workers all the same: a module whole
    prefix, how = rule
    if how == "test":
        return nodeid
    if how == "module":
        return path
    if how == "dir":
        return prefix
    return f"group:{how}"


def weight(scope: str, tests: int) -> tuple[int, int]:
    """The order scopes are handed out in, largest first."""
    path = scope.split("::", 1)[0]
    if scope == "group:cri":
        return (1, tests)
    rank = next((r for prefix, r in RANKS if path.startswith(prefix)), 2)
    return (rank, tests)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--part", choices=PARTS, default=None,
                     help="run only the tests of this part of the test command "
                          "(tests/conftest.py, docs/testing.md)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    part = config.getoption("--part")
    if part is None:
        return
    keep, drop = [], []
    for item in items:
        exclusive = item.get_closest_marker("exclusive") is not None
        (keep if part_of(item.nodeid, exclusive) == part else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class ScopeScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # the heaviest scope left goes first (xdist takes the queue's first)
            heaviest = max(self.workqueue,
                           key=lambda s: weight(s, len(self.workqueue[s])))
            self.workqueue.move_to_end(heaviest, last=False)
            super()._assign_work_unit(node)

    return ScopeScheduling(config, log)
