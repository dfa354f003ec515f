"""``[network]``'s subnet pools are checked when the API starts: a pool that cannot
give a network its subnets is refused then, saying which option, not at the first
network a user asks for."""

from __future__ import annotations

import pytest
from oslo_config import cfg
from support import conf as support_conf

from berth.cmd import wiring


def conf_with(**network: object) -> cfg.ConfigOpts:
    return support_conf.conf_with("network", **network)


def test_good_pools_pass_and_give_the_first_network_its_64() -> None:
    pool = wiring.check_subnet_pools(conf_with(local_subnet_pool_v6="fd00:b47::/48"))
    assert str(pool.subnet6(pool.subnets()[0])) == "fd00:b47::/64"
    assert wiring.check_subnet_pools(conf_with()).subnet6(pool.subnets()[0]) is None


@pytest.mark.parametrize("v6, why", [("fd00:b47::1/48", "local_subnet_pool_v6"),
                                     ("fd00::/96", "narrower than the /64"),
                                     ("10.0.0.0/8", "local_subnet_pool_v6")])
def test_a_bad_ipv6_pool_is_refused_at_start_up(v6: str, why: str) -> None:
    with pytest.raises(SystemExit, match=why):
        wiring.check_subnet_pools(conf_with(local_subnet_pool_v6=v6))
    wiring.check_subnet_pools(conf_with(local_subnet_pool_v6=v6, driver="docker"))  # unused
