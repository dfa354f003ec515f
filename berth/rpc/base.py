"""The transport interface.

Topic ``[compute]/topic`` (``zun-compute``), server = the agent's host name. Method
names and keyword argument names are the contract (rpc-compute.md §2); the request
context travels as the keyword ``context`` (a plain dict). Payloads must be plain
JSON-able data: both transports enforce it.
"""

from __future__ import annotations

from typing import Any, Protocol


class Server(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


class Endpoint(Protocol):
    """What an RPC server dispatches to: ``getattr(endpoint, method)(context, **kwargs)``
    for each name in ``RPC_METHODS``."""

    RPC_METHODS: frozenset[str]


class Transport(Protocol):
    def cast(self, host: str, method: str, **kwargs: Any) -> None:
        """Fire and forget: returns once the message is handed over (in-process: once
        the agent has queued the work). At most once."""

    def call(self, host: str, method: str, timeout: float, **kwargs: Any) -> Any:
        """Request and answer. Raises the agent's BerthError as is, RPCTimeout when no
        answer comes within ``timeout`` seconds, RPCError when the agent is unknown."""

    def check(self) -> None:
        """Return when the transport can carry messages now (for /readyz); RPCError
        saying why otherwise. Cheap: no message is sent."""

    def serve(self, host: str, endpoint: Endpoint) -> Server:
        """An RPC server for ``host`` that dispatches to ``endpoint``."""

    def cleanup(self) -> None: ...
