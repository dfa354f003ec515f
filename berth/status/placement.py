"""OpenStack Placement (``[placement]driver = openstack``) answers berth's requests
with its credentials, as every agent needs it to report inventory and every create
to allocate."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Protocol

from oslo_upgradecheck.upgradecheck import Code, Result


class _Providers(Protocol):
    def get_provider(self, uuid: str) -> object: ...


def check_placement(driver: str, connect: Callable[[], _Providers]) -> Result:
    """``connect``: the configured client (its errors, such as missing credentials,
    are reported). It is asked for a provider that exists nowhere: a 404 is the
    answer of a Placement that works and accepts berth."""
    if driver != "openstack":
        return Result(Code.SUCCESS, "[placement]driver = embedded: inventory and "
                                    "allocations live in berth's database.")
    try:
        connect().get_provider(str(uuid.uuid4()))
    except Exception as err:  # noqa: BLE001 - whatever fails is the answer
        return Result(Code.FAILURE, f"OpenStack Placement does not answer berth: "
                                    f"{str(err).rstrip('.')}. Agents cannot report their "
                                    f"nodes nor creates allocate until it does.")
    return Result(Code.SUCCESS, "OpenStack Placement answers berth's requests.")
