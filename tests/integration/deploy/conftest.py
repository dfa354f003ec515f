"""What the deploy tests on a MariaDB server of their own share: the server (one per
module: the tests kill it and start it again) and a deployment on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.private_mariadb import PrivateMariaDB


@pytest.fixture(scope="module")
def mariadb() -> Iterator[PrivateMariaDB]:
    server = PrivateMariaDB().install()
    yield server
    server.close()


@pytest.fixture(scope="module")
def mariadb_deployment(deployment_factory: Callable[[str], Any],
                       mariadb: PrivateMariaDB) -> Callable[[str], Any]:
    """``start(agent_conf)``: the schema made on ``mariadb``, then agent ``a`` (with
    ``agent_conf`` added to its config) and berth-api started; the deployment is
    closed after the module (``deployment_factory``)."""

    def start(agent_conf: str) -> Any:
        d = deployment_factory(mariadb.url)
        assert d.berth("db", "upgrade").returncode == 0
        d.start_agent("a", extra_conf=agent_conf)
        d.start_api()
        return d

    return start
