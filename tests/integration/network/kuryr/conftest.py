"""The real kuryr-libnetwork 18 (``.ci/kuryr-ci.sh``) as the Docker network plugin of
the host's engine, on the project's Neutron (``.ci/neutron-ci.sh``, shared: never
stopped or restarted here).

Opt-in: ``BERTH_KURYR_TESTS=1`` (with ``BERTH_NEUTRON_TESTS=1``, which the Neutron
tests above need) runs them; they take about a minute and a half on the loaded test
machine (docs/testing.md). ``kuryr`` (session): kuryr-server answers; when it does not,
``kuryr-ci.sh start`` runs once (and ``kuryr-ci.sh stop`` at the end). A start that
fails FAILS the test. ``berth_kuryr``: a ``berth serve`` with ``[network]driver =
kuryr`` whose host is Neutron's (kuryr binds ports to that host name too).
Everything made in Neutron is named ``kuryr-...`` and deleted after each test.

Not at the same time as the Neutron suite above: both run berths of the host
``berth-neutron-ci`` (kuryr's and Neutron's agent's host name), and a berth starting up
takes the other's ports on that host for orphans (and its leftovers cleanup removes
every container of that host).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import docker
import httpx
import pytest
from integration.network.conftest import (
    USER_TOKEN,
    Networks,
    berth_conf,
    berth_on_neutron,
    script_start,
    script_status,
    script_stop,
)
from support.berth_proc import BerthProcess


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    if os.environ.get("BERTH_KURYR_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="kuryr-libnetwork tests: BERTH_NEUTRON_TESTS=1 "
                                   "BERTH_KURYR_TESTS=1 (docs/testing.md)")
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def kuryr(neutron: str) -> Iterator[str]:
    started = False
    if ": up" not in script_status("kuryr-ci.sh"):
        script_start("kuryr-ci.sh", "kuryr-libnetwork", timeout=900)
        started = True
    yield neutron
    if started:
        script_stop("kuryr-ci.sh", timeout=120)


def remove_leftovers(neutron_ids: list[str]) -> None:
    """What a failed test leaves: the Docker containers on its networks (only those:
    the Neutron suite's berths share the host name), then the Docker networks."""
    client = docker.from_env()
    try:
        for net_id in neutron_ids:
            for c in client.containers.list(all=True, ignore_removed=True,
                                             filters={"network": net_id}):
                c.remove(force=True)
            for net in client.networks.list(names=[net_id]):
                net.remove()
    finally:
        client.close()


@pytest.fixture(scope="module")
def berth_kuryr(kuryr: str) -> Iterator[BerthProcess]:
    with berth_on_neutron(berth_conf(kuryr, driver="kuryr")) as proc:
        yield proc


@pytest.fixture
def http(berth_kuryr: BerthProcess) -> Iterator[httpx.Client]:
    with berth_kuryr.http(token=USER_TOKEN) as client:
        yield client


class KuryrNetworks(Networks):
    """The Neutron suite's networks, named ``kuryr-<hex>``; their Docker containers and
    Docker networks go first, and the groups kuryr made go with berth's."""

    PREFIX = "kuryr"
    GROUPS = ("berth-", "kuryr-")

    def cleanup(self) -> None:
        remove_leftovers(self.ids)
        super().cleanup()


@pytest.fixture
def networks(neutron_raw: httpx.Client) -> Iterator[KuryrNetworks]:
    made = KuryrNetworks(neutron_raw)
    yield made
    made.cleanup()
