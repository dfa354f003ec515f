"""The agent's client of the daemon's Neutron endpoints (``/neutron/addVif``,
``/neutron/delVif``): the same socket, answers and errors as ``DaemonClient``'s."""

from __future__ import annotations

import json

from berth.cni.client import DaemonClient
from berth.cni.contract import CniError, Code
from berth.network.neutron.ovs import NeutronVIF


class VifClient(DaemonClient):
    def add_vif(self, vif: NeutronVIF) -> None:
        """Plugged and ACTIVE; ``CniError`` otherwise (code 11 after a 504: the port did
        not become ACTIVE within the daemon's ``vif_active_timeout``)."""
        self._neutron("/neutron/addVif", vif.to_dict())

    def delete_vif(self, port_id: str, bridge: str | None = None,
                   container_id: str = "") -> None:
        """Unplugged; succeeds when there is nothing to unplug."""
        self._neutron("/neutron/delVif", {"port_id": port_id, "bridge": bridge,
                                          "container_id": container_id})

    def _neutron(self, path: str, payload: dict[str, object]) -> None:
        try:
            status, data = self._post(path, json.dumps(payload).encode())
        except (OSError, ValueError) as exc:
            reason = "did not answer in time" if isinstance(exc, TimeoutError) else str(exc)
            raise CniError(Code.TRY_AGAIN_LATER,
                           f"berth-cni-daemon at {self.host}:{self.port} is unreachable",
                           reason) from exc
        if status in (200, 204):
            return
        try:
            answer = json.loads(data) if data else {}
        except ValueError:
            answer = {}
        if isinstance(answer, dict) and isinstance(answer.get("code"), int):
            err = CniError(answer["code"], str(answer.get("msg", "")),
                           str(answer.get("details", "")))
        else:
            err = CniError(Code.DRIVER_FAILURE, f"berth-cni-daemon answered HTTP {status}",
                           data[:200].decode(errors="replace"))
        err.http_status = status  # type: ignore[attr-defined]
        raise err
