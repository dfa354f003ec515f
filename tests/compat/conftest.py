"""The compatibility tests: the real OpenStack Zun 18 (``.ci/zun-ci.sh``) beside berth.

Every test here needs the real Zun and is skipped, with the reason, when
``BERTH_ZUN_URL`` is not set. ``zun`` (session) is an httpx client on Zun's API with a
Keystone token; ``berth`` (module) is a ``berth serve`` of the test's own (noauth:
the token ``admin:<project>``, an admin as the Zun side is).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from support.berth_proc import BerthProcess

from compat.zun_client import VERSION, ZUN_SKIP, zun_session


@pytest.fixture(scope="session")
def zun() -> Iterator[httpx.Client]:
    client = zun_session()
    if client is None:
        pytest.skip(ZUN_SKIP)
    yield client
    client.close()


@pytest.fixture(scope="module")
def berth() -> Iterator[httpx.Client]:
    proc = BerthProcess("[quota]\ncontainers = -1\nmemory = -1\ncpu = -1\ndisk = -1\n").start()
    client = httpx.Client(base_url=proc.url, timeout=120, headers={
        "X-Auth-Token": f"admin:{uuid.uuid4().hex}", "OpenStack-API-Version": VERSION})
    yield client
    client.close()
    proc.stop()
