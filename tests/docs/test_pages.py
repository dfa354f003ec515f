"""The guide's pages as a whole: each parses (no shell block that nothing runs), the
blocks left unrun are exactly the known ones, each page is reachable from the index
and the index from the README, and each runnable page has a test that runs it."""

from __future__ import annotations

import re
from pathlib import Path

from docs.guide import DOCS, parse

ROOT = DOCS.parent
#: (page, why) of every block the tests do not run, as the page words it.
NOT_RUN = {
    ("single-node.md", ("installing takes minutes; the test runs the berth its own venv "
                       "installed from this tree")),
    ("single-node.md", ("the test machines have no systemd; tests/unit/test_systemd_units.py "
                       "checks the unit with systemd-analyze")),
    ("multi-node.md", ("the test machines' Placement runs without Keystone (noauth2), which "
                      "accepts only the token above")),
    ("multi-node.md", ("the test machines' Cinder runs without Keystone "
                      "(noauth_include_project_id) and cannot validate the Keystone tokens "
                      "berth passes on; tests/integration/volume runs this driver against it "
                      "with berth in noauth")),
    ("multi-node.md", ("the test machines' Neutron runs without Keystone (noauth); "
                      "tests/integration/network runs this driver against it with berth in noauth")),
    ("multi-node.md", ("the test machines have no systemd; tests/unit/test_systemd_units.py "
                      "checks the units with systemd-analyze")),
    ("multi-node.md", "the test machines have no systemd"),
    ("multi-node.md", ("the page's run starts no fleet of namespaced nodes with their own CNI "
                      "daemons; tests/functional/network/overlay runs real CNI daemons in "
                      "node namespaces with this setting")),
    ("multi-node.md", ("the deployment above runs without TLS; "
                      "tests/functional/api/test_api_over_https.py and "
                      "tests/functional/console/test_console_tls.py run these settings with a "
                      "CA they make")),
    ("multi-node.md", ("the test machines run no Nova; "
                      "tests/integration/placement/test_openstack_placement.py runs this "
                      "setting against the real Placement with a provider made as Nova makes it")),
    ("migrating-from-zun.md", ("the test machines have no systemd; .ci/zun-ci.sh stops the "
                              "CI's Zun the same way, by its pids")),
    ("migrating-from-zun.md", ("the test machines have no systemd; "
                              "tests/integration/takeover/test_adoption.py starts berth on an "
                              "imported database and checks an adopted container")),
    ("upgrade.md", ("the test machines have no systemd; tests/docs/test_multi_node.py runs "
                   "the same commands by hand")),
    ("configuration.md", ("it rewrites a committed file; tests/unit/conf/test_sample_config.py "
                         "fails while the file differs from what this makes")),
    ("identity-and-policy.md", ("it rewrites a committed file; "
                               "tests/unit/policies/test_policy_sample.py fails while the file "
                               "differs from what this makes")),
    ("web-console.md", ("it rewrites the committed bundle; "
                       "tests/functional/dashboard/test_dashboard_bundle.py runs it on a copy "
                       "of the tree")),
    ("benchmarks.md", ("the benchmarks take minutes and load the machine; tests/unit/bench and "
                      "tests/functional/bench check their image handling")),
    ("benchmarks.md", ("a fleet run takes from minutes to an hour; "
                      "tests/integration/fleet/test_simulated_fleet.py runs its short version")),
    ("testing.md", ("it takes tens of minutes; the test command runs the short version of "
                   "each scenario")),
    ("testing.md", ("it needs the real Zun and Neutron and takes about fifteen minutes; "
                   "without BERTH_ZUN_URL and BERTH_ZUN_DEFECTS the test command collects "
                   "and skips these tests")),
    ("benchmarks.md", ("it needs the real Zun (zun-ci.sh start) and takes about ten minutes; "
                      "without BERTH_ZUN_URL Z1 and Z3 print NOT RUN")),
}
#: Pages with commands, and the test module that runs each.
RUN_BY = {"single-node.md": "test_single_node.py", "multi-node.md": "test_multi_node.py",
          "upgrade.md": "test_upgrade.py", "monitoring.md": "test_monitoring.py",
          "migrating-from-zun.md": "test_migrating_from_zun.py",
          "networking.md": "test_networking.py"}


def test_the_blocks_not_run_are_the_known_ones() -> None:
    found = {(path.name, block.why) for path in DOCS.glob("*.md")
             for block in parse(path).not_run}
    assert found == NOT_RUN


def test_every_page_with_commands_has_its_test() -> None:
    with_steps = {path.name for path in DOCS.glob("*.md") if parse(path).steps}
    assert with_steps == set(RUN_BY)
    here = Path(__file__).parent
    for page, module in RUN_BY.items():
        assert f'run_page("{page}"' in (here / module).read_text(), module


def test_every_page_is_linked_from_the_index_and_the_index_from_the_readme() -> None:
    index = (DOCS / "index.md").read_text()
    for path in DOCS.glob("*.md"):
        if path.name != "index.md":
            assert f"({path.name})" in index, path.name
    assert "(docs/index.md)" in (ROOT / "README.md").read_text()


def test_relative_links_between_pages_resolve() -> None:
    for path in DOCS.glob("*.md"):
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", path.read_text()):
            assert (path.parent / target).exists(), f"{path.name} links to {target}"
