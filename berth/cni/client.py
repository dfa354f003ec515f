"""The HTTP client of ``berth-cni-daemon``: used by the plugin, and by the compute
agent when it plugs a container itself (same body, same answers). The agent's calls::

    client = DaemonClient(CONF.cni_daemon url)
    vif = client.add(spec, container.uuid, f"/proc/{pid}/ns/net", "eth0", fixed_ip=...)
    client.delete(spec, container.uuid, "eth0", netns)      # idempotent

The daemon answers ``200`` with a CNI result for an add, ``204`` for a delete or a
check, and otherwise a status with a CNI error object as body (``server`` lists them).
Every failure reaches the caller as ``CniError``: an unreachable or silent daemon is
code 11 (try again later), as is a 504 (the interface did not come up in time).

``InProcessClient`` is the compute agent's client of a daemon running in its own
process (``berth serve``): the same bodies and answers, handed to the daemon's
``answer`` without a socket, a worker hand-off and HTTP parsing (a plug is on the path
of every create; bench P1).

The request is one HTTP/1.0 exchange written on a plain socket rather than through
``http.client``: a runtime starts the plugin for every container, and importing
``http.client`` (which loads ``email`` and ``ssl``) was 40 of its 150 ms of start-up.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import urllib.parse
from typing import Any, Protocol

from berth.cni.contract import (
    CURRENT_VERSION,
    CniError,
    CniRequest,
    Code,
    Command,
    build_request,
    vif_from_result,
)
from berth.network.base import VIF, AttachmentKey, NetworkSpec
from berth.network.policy import Policy

PATHS = {"ADD": "/addNetwork", "DEL": "/delNetwork", "CHECK": "/checkNetwork"}


class DaemonClient:
    def __init__(self, url: str, timeout: float = 120.0) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError(f"daemon URL {url!r} must be http://host:port")
        self.host, self.port = parsed.hostname, parsed.port or 9036
        self.timeout = timeout

    def add(self, spec: NetworkSpec, container_id: str, netns: str, ifname: str = "eth0",
            fixed_ip: ipaddress.IPv4Address | None = None, mac: str | None = None,
            policy: Policy | None = None) -> VIF:
        """Plug the namespace into ``spec``'s network, reachable as ``policy`` says;
        ``CniError`` on failure (code 11: retry later; the daemon undid its half of the
        work)."""
        request = build_request(Command.ADD, spec, container_id, ifname, netns, fixed_ip, mac,
                                policy=policy)
        result = self.call(request)
        if result is None:
            raise CniError(Code.DECODE_FAILURE, "berth-cni-daemon answered an ADD with nothing")
        return vif_from_result(AttachmentKey(spec.name, container_id, ifname), result)

    def reserve(self, spec: NetworkSpec, container_id: str, ifname: str = "eth0",
                fixed_ip: ipaddress.IPv4Address | None = None,
                policy: Policy | None = None) -> None:
        """Ahead of the ``add`` of a namespace that does not exist yet: its address
        taken and its rules laid (``CniService.reserve``); ``delete`` drops it."""
        request = build_request(Command.ADD, spec, container_id, ifname, None, fixed_ip,
                                policy=policy, netns_required=False)
        self._exchange("/reserveNetwork", json.dumps(request.to_wire()).encode(),
                       request.version)

    def delete(self, spec: NetworkSpec, container_id: str, ifname: str = "eth0",
               netns: str | None = None) -> None:
        """Unplug; succeeds when there is nothing to unplug."""
        self.call(build_request(Command.DEL, spec, container_id, ifname, netns))

    def check(self, spec: NetworkSpec, container_id: str, netns: str,
              ifname: str = "eth0") -> None:
        """``CniError`` (code 102) unless the attachment is as it was made."""
        self.call(build_request(Command.CHECK, spec, container_id, ifname, netns))

    def set_policy(self, container_id: str, policy: Policy | None) -> int:
        """Every attachment of the container takes ``policy`` now; how many changed."""
        body = json.dumps({"container_id": container_id,
                           "policy": policy.to_dict() if policy else None}).encode()
        answer = self._exchange("/setPolicy", body, CURRENT_VERSION)
        return int(answer.get("changed", 0)) if isinstance(answer, dict) else 0

    def call(self, request: CniRequest) -> dict[str, Any] | None:
        """The daemon's result for ADD; None for DEL and CHECK; ``CniError`` on failure."""
        body = json.dumps(request.to_wire()).encode()
        return self._exchange(PATHS[str(request.command)], body, request.version)

    def _exchange(self, path: str, body: bytes, version: str) -> dict[str, Any] | None:
        try:
            status, data = self._post(path, body)
        except (OSError, ValueError) as exc:
            reason = "did not answer in time" if isinstance(exc, TimeoutError) else str(exc)
            raise CniError(Code.TRY_AGAIN_LATER,
                           f"berth-cni-daemon at {self.host}:{self.port} is unreachable",
                           reason, version=version) from exc
        if status == 204:
            return None
        try:
            answer = json.loads(data) if data else {}
        except ValueError:
            answer = {}
        if status == 200 and isinstance(answer, dict):
            return answer
        if isinstance(answer, dict) and isinstance(answer.get("code"), int):
            raise CniError(answer["code"], str(answer.get("msg", "")),
                           str(answer.get("details", "")), version=version)
        raise CniError(Code.TRY_AGAIN_LATER if status >= 500 else Code.DRIVER_FAILURE,
                       f"berth-cni-daemon answered HTTP {status}",
                       data[:200].decode(errors="replace"), version=version)

    def _post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """(status, body) of one POST; the daemon closes the connection after an
        HTTP/1.0 request, so the answer is everything up to EOF."""
        head = (f"POST {path} HTTP/1.0\r\nHost: {self.host}:{self.port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
        with socket.create_connection((self.host, self.port), timeout=self.timeout) as sock:
            sock.sendall(head.encode() + body)
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        raw = b"".join(chunks)
        status_line, _, rest = raw.partition(b"\r\n")
        parts = status_line.split()
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            raise ValueError(f"not an HTTP answer: {status_line[:80]!r}")
        _, _, payload = rest.partition(b"\r\n\r\n")
        return int(parts[1]), payload


class Answering(Protocol):
    """What ``InProcessClient`` calls: ``berth.cni.server.DaemonHTTPServer.answer``."""

    def answer(self, path: str, body: Any) -> tuple[int, Any]: ...


class InProcessClient(DaemonClient):
    """``DaemonClient`` of a daemon in this process: each request's JSON goes to the
    daemon's ``answer`` directly and comes back as the HTTP answer would, so failures
    reach the caller as the same ``CniError`` codes."""

    def __init__(self, daemon: Answering, url: str) -> None:
        super().__init__(url)
        self.daemon = daemon

    def _post(self, path: str, body: bytes) -> tuple[int, bytes]:
        status, payload = self.daemon.answer(path, json.loads(body))
        return int(status), b"" if payload is None else json.dumps(payload).encode()
