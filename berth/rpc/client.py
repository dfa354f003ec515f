"""ComputeAPI: the API's handle on the compute agents, with Zun's method names.

Every per-container method first checks that the container's host has a live agent
(ContainerHostNotUp, a 409, otherwise): Zun skipped this for most casts, which were
then silently lost. Every cast and call is timed (``berth_rpc_client_duration_seconds``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.views import container_payload
from berth.db.models import Container
from berth.metrics.catalog import timed_rpc
from berth.network.metadata import RequestedNetwork
from berth.rpc.base import Transport


class ComputeAPI:
    def __init__(self, transport: Transport, host_is_up: Callable[[str], bool],
                 call_timeout: float = 60) -> None:
        self._transport = transport
        self._host_is_up = host_is_up
        self._timeout = call_timeout

    def _host(self, container: Container) -> str:
        if not container.host:
            raise exc.Conflict(
                f"Container {container.uuid} is not placed on any host yet "
                f"(status {container.status}); no compute agent can act on it.")
        if not self._host_is_up(container.host):
            raise exc.ContainerHostNotUp(container=container.uuid, host=container.host)
        return container.host

    def cast(self, ctx: RequestContext, container: Container, method: str, **kw: Any) -> None:
        """Cast ``method`` to the container's host with ``container`` and ``kw``
        (after the host-up check)."""
        self._cast(self._host(container), method, context=ctx.to_dict(),
                   container=container_payload(container), **kw)

    def call(self, ctx: RequestContext, container: Container, method: str, **kw: Any) -> Any:
        """Call ``method`` on the container's host and return its answer."""
        return self._call(self._host(container), method, context=ctx.to_dict(),
                          container=container_payload(container), **kw)

    def _cast(self, host: str, method: str, **kw: Any) -> None:
        with timed_rpc(method, "cast"):
            self._transport.cast(host, method, **kw)

    def _call(self, host: str, method: str, **kw: Any) -> Any:
        with timed_rpc(method, "call"):
            return self._transport.call(host, method, self._timeout, **kw)

    def check_host(self, container: Container) -> None:
        self._host(container)

    # casts
    def container_create(self, ctx: RequestContext, container: Container, *, limits: dict,
                         requested_networks: list[RequestedNetwork],
                         requested_volumes: dict, run: bool,
                         pci_requests: list | None = None) -> None:
        self.cast(ctx, container, "container_create", limits=limits,
                   requested_networks=requested_networks, requested_volumes=requested_volumes,
                   run=run, pci_requests=pci_requests)

    def container_delete(self, ctx: RequestContext, container: Container, force: bool) -> None:
        self.cast(ctx, container, "container_delete", force=force)

    def container_start(self, ctx: RequestContext, container: Container) -> None:
        self.cast(ctx, container, "container_start")

    def container_stop(self, ctx: RequestContext, container: Container, timeout: int | None
                       ) -> None:
        self.cast(ctx, container, "container_stop", timeout=timeout)

    # calls
    def network_attach(self, ctx: RequestContext, container: Container,
                       requested_network: RequestedNetwork) -> None:
        self.call(ctx, container, "network_attach", requested_network=requested_network)

    def network_detach(self, ctx: RequestContext, container: Container, network: str) -> None:
        self.call(ctx, container, "network_detach", network=network)

    def container_show(self, ctx: RequestContext, container: Container) -> dict[str, Any]:
        return self.call(ctx, container, "container_show")

    def image_search(self, ctx: RequestContext, host: str, image: str, image_driver_name: str,
                     exact_match: bool, registry: dict | None = None) -> list[dict[str, Any]]:
        if not self._host_is_up(host):
            raise exc.NoValidHost(f"The compute agent of host {host} is down.")
        return self._call(host, "image_search", context=ctx.to_dict(), image=image,
                          image_driver_name=image_driver_name, exact_match=exact_match,
                          registry=registry)

    def cast_host(self, ctx: RequestContext, host: str, method: str, **kw: Any) -> None:
        """Cast a method that names no container (image_pull, image_delete) to ``host``."""
        if not self._host_is_up(host):
            raise exc.Conflict(f"The compute agent of host {host} is down; try again when "
                               f"it is back.")
        self._cast(host, method, context=ctx.to_dict(), **kw)

    def call_host(self, ctx: RequestContext, host: str, method: str, **kw: Any) -> Any:
        """Call a method that names no container on ``host``."""
        if not self._host_is_up(host):
            raise exc.Conflict(f"The compute agent of host {host} is down; try again when "
                               f"it is back.")
        return self._call(host, method, context=ctx.to_dict(), **kw)
