"""In-process transport for ``berth serve``: the API and the agent share a process, so
a cast is a direct call into the agent's endpoint (which queues the work and returns)
and a call runs on a small pool so that its timeout holds.

Arguments go through a JSON round trip, so code that works here also works over
RabbitMQ, where everything is serialised.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import logging
import threading
from typing import Any

from berth.common import exceptions as exc
from berth.rpc.base import Endpoint

LOG = logging.getLogger(__name__)


class _Server:
    def __init__(self, transport: InProcessTransport, host: str, endpoint: Endpoint) -> None:
        self._transport, self._host, self._endpoint = transport, host, endpoint

    def start(self) -> None:
        self._transport._register(self._host, self._endpoint)

    def stop(self) -> None:
        self._transport._unregister(self._host, self._endpoint)


class InProcessTransport:
    def __init__(self, call_workers: int = 32) -> None:
        self._endpoints: dict[str, Endpoint] = {}
        self._lock = threading.Lock()
        self._calls = cf.ThreadPoolExecutor(call_workers, thread_name_prefix="rpc-call")

    def _register(self, host: str, endpoint: Endpoint) -> None:
        with self._lock:
            self._endpoints[host] = endpoint

    def _unregister(self, host: str, endpoint: Endpoint) -> None:
        with self._lock:
            if self._endpoints.get(host) is endpoint:
                del self._endpoints[host]

    def _target(self, host: str, method: str) -> Any:
        with self._lock:
            endpoint = self._endpoints.get(host)
        if endpoint is None:
            raise exc.RPCError(host=host, reason="no compute agent with that name runs in this "
                                                "process (berth serve runs exactly one)")
        if method not in endpoint.RPC_METHODS:
            raise exc.RPCError(host=host, reason=f"unknown method {method}")
        return getattr(endpoint, method)

    @staticmethod
    def _wire(kwargs: dict[str, Any]) -> dict[str, Any]:
        return json.loads(json.dumps(kwargs))

    def cast(self, host: str, method: str, **kwargs: Any) -> None:
        fn = self._target(host, method)
        payload = self._wire(kwargs)
        context = payload.pop("context", None)
        fn(context, **payload)

    def call(self, host: str, method: str, timeout: float, **kwargs: Any) -> Any:
        fn = self._target(host, method)
        payload = self._wire(kwargs)
        context = payload.pop("context", None)
        future = self._calls.submit(fn, context, **payload)
        try:
            result = future.result(timeout=timeout)
        except cf.TimeoutError:
            raise exc.RPCTimeout(host=host, method=method, timeout=timeout) from None
        return json.loads(json.dumps(result))

    def check(self) -> None:
        """Ready once an agent serves in this process (``berth serve``: after its
        start-up recovery)."""
        with self._lock:
            if self._endpoints:
                return
        raise exc.RPCError("No compute agent serves in this process yet (it is starting, "
                           "or it has stopped).")

    def serve(self, host: str, endpoint: Endpoint) -> _Server:
        return _Server(self, host, endpoint)

    def cleanup(self) -> None:
        self._calls.shutdown(wait=False, cancel_futures=True)
