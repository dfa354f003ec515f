"""oslo.messaging transport (``transport_url = rabbit://...``), for an API and agents on
several machines. oslo.messaging is imported only here, and only when configured: it
is heavy (eventlet, kombu) and ``berth serve`` does not need it.

oslo.messaging registers its own options (``transport_url`` among them) on the
ConfigOpts it is given; berth registers its own ``transport_url`` too, so this module
gives oslo.messaging a ConfigOpts of its own, read from the same config files (so
``[oslo_messaging_rabbit]`` settings apply), and passes the URL explicitly.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from oslo_config import cfg

from berth.common import exceptions as exc
from berth.rpc.base import Endpoint

LOG = logging.getLogger(__name__)

ALLOWED_REMOTE_EXMODS = ["berth.common.exceptions", "berth.runtime.base"]


class _Dispatch:
    """The oslo endpoint: exposes exactly the agent's RPC methods."""

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint

    def __getattr__(self, name: str) -> Any:
        if name in self._endpoint.RPC_METHODS:
            return getattr(self._endpoint, name)
        raise AttributeError(name)


class OsloTransport:
    def __init__(self, url: str, topic: str, config_files: Sequence[str] = ()) -> None:
        import oslo_messaging as messaging

        self._messaging = messaging
        self._conf = cfg.ConfigOpts()
        self._conf(args=[], project="berth", default_config_files=list(config_files))
        self._transport = messaging.get_rpc_transport(
            self._conf, url=url, allowed_remote_exmods=ALLOWED_REMOTE_EXMODS)
        self._topic = topic
        self._client = messaging.get_rpc_client(
            self._transport, messaging.Target(topic=topic))

    def cast(self, host: str, method: str, **kwargs: Any) -> None:
        context = kwargs.pop("context", None) or {}
        self._client.prepare(server=host).cast(context, method, **kwargs)

    def call(self, host: str, method: str, timeout: float, **kwargs: Any) -> Any:
        context = kwargs.pop("context", None) or {}
        try:
            return self._client.prepare(server=host, timeout=timeout).call(
                context, method, **kwargs)
        except self._messaging.MessagingTimeout:
            raise exc.RPCTimeout(host=host, method=method, timeout=timeout) from None
        except self._messaging.RemoteError as err:
            raise exc.RPCError(host=host, reason=f"{err.exc_type}: {err.value}") from err

    def serve(self, host: str, endpoint: Endpoint) -> Any:
        target = self._messaging.Target(topic=self._topic, server=host)
        return self._messaging.get_rpc_server(
            self._transport, target, [_Dispatch(endpoint)], executor="threading")

    def cleanup(self) -> None:
        self._transport.cleanup()
