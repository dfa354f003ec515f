"""``python -m bench.fleet.api_host DIR berth-api's arguments``: ``berth-api`` as it
is (``berth.cmd.api.main``), with each worker counting its database statements by
caller (``statements.py``) and its casts and calls to the agents by method. A worker
writes its tally to ``DIR/api-<pid>.json`` as it starts, when it receives SIGUSR1 and
when it stops; the run signals the processes that wrote one (the workers, not their
supervisor) before and after the fill.

With ``BERTH_FLEET_PROFILE=PATH`` (as the agents' hosts: ``nodes.py``), each worker
profiles the CPU time of its threads from its start (yappi) and writes it to
``PATH.api-<pid>`` (a pstats file) with each tally: the last one after the fill."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

from bench.fleet.statements import RPC_PREFIX, StatementTally


def main(argv: list[str]) -> int:
    from berth.cmd import api

    out = Path(argv[0])
    tally = StatementTally.install()
    _count_rpc(tally)
    serve = api._serve

    def counted_serve(*args: Any) -> int:
        # In the worker (after the fork): its own file, written on SIGUSR1 and at the end.
        import os

        path = out / f"api-{os.getpid()}.json"
        profile = os.environ.get("BERTH_FLEET_PROFILE")
        if profile:
            import yappi
            yappi.set_clock_type("cpu")
            yappi.start()

        def dump(*_: Any) -> None:
            tally.dump(path)
            if profile:     # the workers may end without unwinding: saved at each dump
                yappi.get_func_stats().save(f"{profile}.api-{os.getpid()}", type="pstat")

        signal.signal(signal.SIGUSR1, dump)
        tally.dump(path)        # the run signals only the processes that wrote one
        try:
            return serve(*args)
        finally:
            dump()

    api._serve = counted_serve     # the supervisor's workers call it by this name
    return api.main(argv[1:])


def _count_rpc(tally: StatementTally) -> None:
    """Count each cast and call the API makes to an agent in ``tally``, under
    ``rpc cast <method>`` and ``rpc call <method>``."""
    from berth.rpc.client import ComputeAPI

    cast, call = ComputeAPI._cast, ComputeAPI._call

    def counted_cast(self: ComputeAPI, host: str, method: str, **kw: Any) -> None:
        tally.count(f"{RPC_PREFIX}cast {method}")
        cast(self, host, method, **kw)

    def counted_call(self: ComputeAPI, host: str, method: str, **kw: Any) -> Any:
        tally.count(f"{RPC_PREFIX}call {method}")
        return call(self, host, method, **kw)

    ComputeAPI._cast = counted_cast  # type: ignore[method-assign]
    ComputeAPI._call = counted_call  # type: ignore[method-assign]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
