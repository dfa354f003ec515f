"""The HTTP client of ``berth-cni-daemon``: used by the plugin, and by the compute
agent when it plugs a container itself (same body, same answers).

The daemon answers ``200`` with a CNI result for an add, ``204`` for a delete or a
check, and otherwise a status with a CNI error object as body (``server`` lists them).
Every failure reaches the caller as ``CniError``: an unreachable or silent daemon is
code 11 (try again later), as is a 504 (the interface did not come up in time).
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.parse
from typing import Any

from berth.cni.contract import CniError, CniRequest, Code

PATHS = {"ADD": "/addNetwork", "DEL": "/delNetwork", "CHECK": "/checkNetwork"}


class DaemonClient:
    def __init__(self, url: str, timeout: float = 120.0) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError(f"daemon URL {url!r} must be http://host:port")
        self.host, self.port = parsed.hostname, parsed.port or 9036
        self.timeout = timeout

    def call(self, request: CniRequest) -> dict[str, Any] | None:
        """The daemon's result for ADD; None for DEL and CHECK; ``CniError`` on failure."""
        body = json.dumps(request.to_wire()).encode()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request("POST", PATHS[str(request.command)], body=body,
                         headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            status, data = response.status, response.read()
        except (OSError, http.client.HTTPException) as exc:
            reason = "did not answer in time" if isinstance(exc, socket.timeout) else str(exc)
            raise CniError(Code.TRY_AGAIN_LATER,
                           f"berth-cni-daemon at {self.host}:{self.port} is unreachable",
                           reason, version=request.version) from exc
        finally:
            conn.close()
        if status == 204:
            return None
        try:
            answer = json.loads(data) if data else {}
        except json.JSONDecodeError:
            answer = {}
        if status == 200 and isinstance(answer, dict):
            return answer
        if isinstance(answer, dict) and isinstance(answer.get("code"), int):
            raise CniError(answer["code"], str(answer.get("msg", "")),
                           str(answer.get("details", "")), version=request.version)
        raise CniError(Code.TRY_AGAIN_LATER if status >= 500 else Code.DRIVER_FAILURE,
                       f"berth-cni-daemon answered HTTP {status}",
                       data[:200].decode(errors="replace"), version=request.version)
