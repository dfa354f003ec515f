"""The test command's split of the suite (tests/conftest.py): which part a test is in,
and which tests one worker runs whole."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parents[1]


def _split() -> ModuleType:
    spec = importlib.util.spec_from_file_location("suite_split", TESTS / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


split = _split()


def test_an_exclusive_test_and_an_unnamed_directory_are_in_the_serial_part() -> None:
    assert split.part_of("tests/unit/api/test_body.py::test_x", exclusive=False) == "parallel"
    assert split.part_of("tests/integration/deploy/test_broker_outage.py::test_x",
                         exclusive=True) == "serial"
    assert split.part_of("tests/integration/newthing/test_a.py::test_x",
                         exclusive=False) == "serial"
    assert split.part_of("tests/newdir/test_a.py::test_x", exclusive=False) == "serial"


def test_scopes_keep_what_their_tests_share_on_one_worker() -> None:
    scope = split.scope_of
    assert scope("tests/unit/a/test_b.py::test_c") == "tests/unit/a/test_b.py::test_c"
    assert scope("tests/functional/api/test_b.py::test_c[1]") == "tests/functional/api/test_b.py"
    assert scope("tests/functional/compute/capsules/cri/test_a.py::t") == \
        scope("tests/functional/compute/capsules/cri/test_b.py::t") == "group:cri"
    assert scope("tests/integration/network/test_a.py::t") == \
        scope("tests/integration/network/test_b.py::t") == "group:neutron"
    assert scope("tests/integration/keystone/test_a.py::t") == \
        scope("tests/integration/keystone/test_b.py::t") == "tests/integration/keystone/"
    assert scope("tests/integration/deploy/test_a.py::t") == "tests/integration/deploy/test_a.py"


def test_longer_scopes_are_handed_out_first() -> None:
    weight = split.weight
    assert weight("group:neutron", 11) > weight("tests/functional/api/test_a.py", 40) > \
        weight("tests/unit/a/test_b.py::test_c", 1)
    assert weight("tests/integration/keystone/", 26) > weight("tests/integration/rpc/", 2)
    # a Schemathesis run takes minutes: never among the last unit tests handed out
    assert weight("tests/unit/api/test_openapi_fuzz.py::test_x[GET /v1]", 1) > \
        weight("tests/functional/api/test_a.py", 40) > \
        weight("tests/unit/api/test_body.py::test_x", 1)


def test_every_prefix_names_a_directory_of_the_suite() -> None:
    root = TESTS.parent
    missing = [p for p, _ in split.PARALLEL if not (root / p).is_dir()]
    assert missing == []
