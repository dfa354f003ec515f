"""A container's network bytes read from its namespace's /proc/<pid>/net/dev, for the
interfaces berth plugs itself (the engine counts none of them)."""

from __future__ import annotations

from pathlib import Path

from berth.runtime.docker.inspection import namespace_net_io

NET_DEV = """Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    9000      90    0    0    0     0          0         0     9000      90    0    0    0     0       0          0
  eth0:    1500      10    0    0    0     0          0         0      700       7    0    0    0     0       0          0
  eth1:      25       1    0    0    0     0          0         0       50       1    0    0    0     0       0          0
"""


def test_sums_every_interface_but_loopback(tmp_path: Path) -> None:
    (tmp_path / "42" / "net").mkdir(parents=True)
    (tmp_path / "42" / "net" / "dev").write_text(NET_DEV)
    assert namespace_net_io(42, proc=str(tmp_path)) == (1525, 750)


def test_none_when_the_process_is_not_here(tmp_path: Path) -> None:
    assert namespace_net_io(42, proc=str(tmp_path)) is None
    assert namespace_net_io(0, proc=str(tmp_path)) is None
