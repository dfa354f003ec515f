"""``zun_db``: a Zun 18 database of the test's own (``support.zun_database``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.zun_database import zun_database


@pytest.fixture
def zun_db() -> Iterator[str]:
    with zun_database() as name:
        yield name
