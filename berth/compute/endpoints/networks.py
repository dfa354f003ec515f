"""network_attach, network_detach: calls that change the container, so they run on
its worker, in turn with the casts before them, while the RPC thread waits."""

from __future__ import annotations

from berth.common.context import RequestContext
from berth.compute.endpoints import EndpointBase, Wire, uuid_of
from berth.compute.flows import networks


class NetworkEndpoints(EndpointBase):
    METHODS = frozenset({"network_attach", "network_detach"})

    def network_attach(self, context: Wire, container: Wire, requested_network: Wire
                       ) -> None:
        uuid = uuid_of(container)
        self._in_turn(uuid, "network_attach", networks.attach_network, self._deps,
                      RequestContext.from_dict(context), uuid, dict(requested_network))

    def network_detach(self, context: Wire, container: Wire, network: str) -> None:
        uuid = uuid_of(container)
        self._in_turn(uuid, "network_detach", networks.detach_network, self._deps,
                      RequestContext.from_dict(context), uuid, str(network))
