"""The kept netlink sessions of the process's own namespace (``netns.HostSessions``),
on real sockets."""

from __future__ import annotations

import os

import pytest
from pyroute2.netlink.exceptions import NetlinkError

from berth.network.netns import HostSessions


def _closed(ipr: object) -> bool:
    return bool(ipr.asyncore.status["closed"])  # type: ignore[attr-defined]


def test_a_session_is_kept_for_the_next_request() -> None:
    sessions = HostSessions()
    with sessions.session() as first:
        assert first.link_lookup(ifname="lo") == [1]
    with sessions.session() as again:
        assert again is first and again.link_lookup(ifname="lo") == [1]
    sessions.close()
    assert _closed(first)


def test_the_kernels_refusal_keeps_the_session_another_error_closes_it() -> None:
    sessions = HostSessions()
    with pytest.raises(NetlinkError), sessions.session() as refused:
        refused.link("del", ifname="berth-absent0")     # ENODEV: the socket is sound
    with sessions.session() as same:
        assert same is refused
    with pytest.raises(RuntimeError), sessions.session() as cut:
        raise RuntimeError("cut short")
    assert _closed(cut)
    with sessions.session() as fresh:
        assert fresh is not cut and fresh.link_lookup(ifname="lo") == [1]
    sessions.close()


def test_at_most_so_many_idle_and_each_in_one_block_at_a_time() -> None:
    sessions = HostSessions(idle_at_most=2)
    with sessions.session() as a, sessions.session() as b, sessions.session() as c:
        assert len({id(a), id(b), id(c)}) == 3
    assert [_closed(x) for x in (a, b, c)].count(True) == 1
    with sessions.session() as d, sessions.session() as e:
        assert {id(d), id(e)} <= {id(a), id(b), id(c)}
    sessions.close()
    assert all(_closed(x) for x in (a, b, c))


def test_a_forked_child_starts_with_no_session() -> None:
    sessions = HostSessions()
    with sessions.session() as parents:
        pass
    pid = os.fork()
    if pid == 0:     # the child: its own session, not the parent's socket
        ok = False
        try:
            with sessions.session() as childs:
                ok = childs is not parents and childs.link_lookup(ifname="lo") == [1]
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with sessions.session() as again:
        assert again is parents and again.link_lookup(ifname="lo") == [1]
    sessions.close()
