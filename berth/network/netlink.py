"""The pieces of pyroute2 berth talks netlink with, imported without pyroute2's package
``__init__``, which loads all of the library (``berth.common.imports``): every berth
module that uses pyroute2 imports it from here."""

from berth.common.imports import shallow_package

shallow_package("pyroute2")
# pyroute2's netlink socket imports ``unittest.mock`` (for its mock mode): without
# unittest's ``__init__`` (test cases, loader, runner, its command line) that is 3
# modules instead of 13, 0.7 MiB less in ``berth serve``.
shallow_package("unittest")

# After the package is registered: these load their own modules only.
from pyroute2.iproute import IPRoute
from pyroute2.netlink.exceptions import NetlinkError
from pyroute2.netlink.rtnl import ndmsg
from pyroute2.netlink.rtnl.ifaddrmsg import IFA_F_NODAD

__all__ = ["IFA_F_NODAD", "IPRoute", "NetlinkError", "ndmsg"]
