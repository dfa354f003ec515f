"""berth and the real Zun answer the same client requests alike: each scenario of
``scenarios.SCENARIOS`` runs against both, and every step's answer is compared by shape
(``differ``). A difference not listed in ``differences.LISTED`` fails the test; the run's
tally (scenarios, requests, differences) is printed and written to
``$BERTH_CI_STATE/zun/compat-report.txt``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from compat import differences
from compat.catalogue import SCENARIOS
from compat.differ import Tally, compare
from compat.scenarios import Side
from compat.zun_client import ZUN_IMAGE

TALLY = Tally()
REPORT = Path(os.environ.get("BERTH_CI_STATE", "/var/tmp/berth-ci")) / "zun" / "compat-report.txt"


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    yield
    text = TALLY.report()
    print("\n" + text)
    if REPORT.parent.is_dir():
        REPORT.write_text(text + "\n")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_berth_answers_as_zun_does(scenario: str, berth: httpx.Client,
                                   zun: httpx.Client) -> None:
    sides = (Side("berth", berth, ZUN_IMAGE), Side("zun", zun, ZUN_IMAGE,
                                                   hosts=("berth-neutron-ci",), close_each=True))
    try:
        ours, theirs = (SCENARIOS[scenario](side) for side in sides)
    finally:
        for side in sides:
            side.cleanup()
    TALLY.scenarios += 1
    TALLY.requests += sides[1].requests
    assert [s for s, _ in ours] == [s for s, _ in theirs]
    unlisted = []
    for (step, a), (_, b) in zip(ours, theirs, strict=True):
        for diff in compare(a.shape(sides[0].hosts), b.shape(sides[1].hosts)):
            why = differences.reason(scenario, step, diff)
            entry = f"{scenario}/{step}/{diff}"
            (TALLY.listed if why else TALLY.unlisted).append(entry)
            if not why:
                unlisted.append(entry)
    assert unlisted == [], "differences not listed in tests/compat/differences.py:\n" + \
        "\n".join(unlisted)
