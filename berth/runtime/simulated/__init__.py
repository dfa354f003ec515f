"""A simulated container engine, for benchmarks only (``[compute]runtime_driver =
simulated``): the one deliberate fake in berth.

It keeps containers in memory, answers every :class:`~berth.runtime.base.Runtime`
call the agent makes on a create and a state sync (inspect, list, the event stream
PLEG follows), and takes ``start_latency`` seconds to start a container, as a real
engine takes to start one. No process runs: nothing ever exits on its own. The
fleet benchmark (``bench/fleet``) hosts a thousand agents on it in one process, to
measure berth's control plane (API, scheduler, RPC, database) at scale; nothing
else uses it, and a node must never run it in production.
"""

from berth.runtime.simulated.engine import SimulatedRuntime

__all__ = ["SimulatedRuntime"]
