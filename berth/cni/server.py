"""The daemon's HTTP endpoints (stdlib ``http.server``, requests on a bounded pool).

``POST /addNetwork``, ``/delNetwork``, ``/checkNetwork`` take a forwarded plugin
invocation (``CniRequest.to_wire``); ``POST /reserveNetwork`` (berth's own) takes an
ADD without ``netns`` and answers 204 once its address and rules are laid
(``CniService.reserve``); ``POST /setPolicy`` (berth's own, for the compute
agent) takes ``{"container_id": ..., "policy": {"groups": [...], "ports": [...]} | null}``
and answers 200 ``{"changed": <attachments>}``; ``GET /healthz`` answers 200 once the
daemon has recovered its registry. Answers:

=========  ============================================  ===========================
status     when                                          CNI code in the body
=========  ============================================  ===========================
200        add done; body is the CNI result              —
204        delete, check or reservation done                         —
400        configuration or environment invalid          1, 4, 6, 7
404        the namespace does not exist                  3
409        no address free, fixed IP taken or invalid,   100, 101, 102
           CHECK found the attachment changed
500        the host refused (netlink, iptables)          103
504        the interface did not come up within          11 (try again later)
           ``[cni_daemon] vif_active_timeout``
=========  ============================================  ===========================

(Zun answers 500 for the last case: its retry library's error escapes the handler.)
"""

from __future__ import annotations

import json
import logging
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from berth.cni.contract import CURRENT_VERSION, CniError, CniRequest, Code, Command, add_result
from berth.cni.service import CniService
from berth.common import log
from berth.common.threads import ElasticThreadPool
from berth.network.base import (
    AddressError,
    AddressExhausted,
    AttachmentMismatch,
    NetnsNotFound,
    NetworkDriverError,
    VIFNotReady,
)
from berth.network.neutron.ovs import NeutronVIF
from berth.network.neutron.vifs import NeutronVifService
from berth.network.policy import InvalidPolicy, Policy

LOG = logging.getLogger(__name__)

MAX_BODY = 1 << 20


def error_answer(exc: BaseException, version: str = CURRENT_VERSION) -> tuple[int, CniError]:
    """The HTTP status and CNI error for a failure of the service."""
    if isinstance(exc, CniError):
        return HTTPStatus.BAD_REQUEST, exc
    if isinstance(exc, NetnsNotFound):
        return HTTPStatus.NOT_FOUND, CniError(Code.UNKNOWN_CONTAINER, str(exc), version=version)
    if isinstance(exc, AddressExhausted):
        return HTTPStatus.CONFLICT, CniError(Code.ADDRESS_EXHAUSTED, str(exc), version=version)
    if isinstance(exc, AddressError):
        return HTTPStatus.CONFLICT, CniError(Code.ADDRESS_UNAVAILABLE, str(exc), version=version)
    if isinstance(exc, AttachmentMismatch):
        return HTTPStatus.CONFLICT, CniError(Code.ATTACHMENT_MISMATCH, str(exc), version=version)
    if isinstance(exc, VIFNotReady):
        return HTTPStatus.GATEWAY_TIMEOUT, CniError(Code.TRY_AGAIN_LATER, str(exc),
                                                    version=version)
    if isinstance(exc, NetworkDriverError):
        return HTTPStatus.INTERNAL_SERVER_ERROR, CniError(Code.DRIVER_FAILURE, str(exc),
                                                          version=version)
    return HTTPStatus.INTERNAL_SERVER_ERROR, CniError(
        Code.DRIVER_FAILURE, "berth-cni-daemon failed unexpectedly", repr(exc), version=version)


class _Handler(BaseHTTPRequestHandler):
    server: DaemonHTTPServer
    protocol_version = "HTTP/1.1"
    timeout = 30  # a client that stalls mid-request loses its worker after this

    def do_GET(self) -> None:  # http.server names its hooks so
        if self.path == "/healthz":
            ready = self.server.ready.is_set()
            self._send(HTTPStatus.OK if ready else HTTPStatus.SERVICE_UNAVAILABLE,
                       {"ready": ready})
        else:
            self._send(HTTPStatus.NOT_FOUND, {"msg": f"no such path {self.path}"})

    def do_POST(self) -> None:
        if not self.server.serves(self.path):
            self._send(HTTPStatus.NOT_FOUND, {"msg": f"no such path {self.path}"})
            return
        try:
            body = self._read_body()
        except CniError as exc:
            self._send(*_failure(self.path, exc))
            return
        self._send(*self.server.answer(self.path, body))

    def _read_body(self) -> Any:
        """The request's JSON body; ``CniError`` (code 6) when it is missing, too large
        or not JSON."""
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY:
            raise CniError(Code.DECODE_FAILURE, f"request body of {length} bytes")
        try:
            return json.loads(self.rfile.read(length))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CniError(Code.DECODE_FAILURE, "request body is not JSON", str(exc)) from exc

    def _send(self, status: int, payload: Any) -> None:
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        LOG.debug("%s %s", self.address_string(), format % args)


#: The POST paths of the CNI endpoints, and the service's method each calls.
ACTIONS = {"/addNetwork": "add", "/delNetwork": "delete", "/checkNetwork": "check",
           "/reserveNetwork": "reserve", "/setPolicy": "set_policy"}
NEUTRON_PATHS = ("/neutron/addVif", "/neutron/delVif")


def _failure(path: str, exc: BaseException, version: str = CURRENT_VERSION
             ) -> tuple[int, Any]:
    """The answer to a failed request, logged (an error when it is the daemon's)."""
    status, err = error_answer(exc, version)
    if status >= 500:
        LOG.error("%s failed: %s", path, err.msg, exc_info=not isinstance(
            exc, (NetworkDriverError, CniError)))
    else:
        LOG.info("%s refused (%d): %s", path, status, err.msg)
    return status, err.to_json()


class DaemonHTTPServer(HTTPServer):
    """An HTTP server whose requests run on at most ``workers`` threads. ``answer``
    is what it does with a request's body, callable without HTTP by a client in the
    same process (``berth.cni.client.InProcessClient``)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, service: CniService, host: str, port: int, workers: int,
                 neutron: NeutronVifService | None = None) -> None:
        self.service = service
        self.neutron = neutron
        self.ready = threading.Event()
        self.pool = ElasticThreadPool(workers, thread_name_prefix="cni-worker")
        super().__init__((host, port), _Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def serves(self, path: str) -> bool:
        return path in ACTIONS or path in NEUTRON_PATHS

    def answer(self, path: str, body: Any) -> tuple[int, Any]:
        """(HTTP status, JSON payload or None) for a POST of ``body`` (decoded JSON) to
        ``path``; every failure is answered, never raised."""
        if path in NEUTRON_PATHS:
            return self._neutron(path, body)
        action = ACTIONS.get(path)
        if action is None:
            return HTTPStatus.NOT_FOUND, {"msg": f"no such path {path}"}
        version = CURRENT_VERSION
        try:
            if action == "set_policy":
                return self._set_policy(body)
            request = CniRequest.from_wire(body, netns_required=action != "reserve")
            if action == "reserve" and request.command is not Command.ADD:
                raise CniError(Code.INVALID_ENVIRONMENT, "reserveNetwork takes an ADD")
            version = request.version
            with log.container_context(request.container_id):
                if action == "add":
                    return HTTPStatus.OK, add_result(self.service.add(request), version)
                getattr(self.service, action)(request)
            return HTTPStatus.NO_CONTENT, None
        except Exception as exc:  # noqa: BLE001 - every failure is answered, never dropped
            return _failure(path, exc, version)

    def _set_policy(self, body: Any) -> tuple[int, Any]:
        container_id = body.get("container_id") if isinstance(body, dict) else None
        if not isinstance(container_id, str) or not container_id:
            raise CniError(Code.INVALID_ENVIRONMENT, "setPolicy needs a container_id")
        try:
            raw = body.get("policy")
            policy = None if raw is None else Policy.from_dict(raw)
        except InvalidPolicy as exc:
            raise CniError(Code.INVALID_NETWORK_CONFIG, f"policy: {exc}") from exc
        with log.container_context(container_id):
            changed = self.service.set_policy(container_id, policy)
        return HTTPStatus.OK, {"changed": changed}

    def _neutron(self, path: str, body: Any) -> tuple[int, Any]:
        """``POST /neutron/addVif`` (a ``NeutronVIF``) and ``/neutron/delVif``
        (``port_id``, ``bridge``): the cni driver's Neutron ports, answered as the CNI
        endpoints answer (504 when the port does not become ACTIVE in time)."""
        service = self.neutron
        try:
            if service is None:
                raise CniError(Code.INVALID_NETWORK_CONFIG, "this daemon runs no Neutron "
                               "VIF backend: set [network]driver = cni")
            if not isinstance(body, dict):
                raise CniError(Code.DECODE_FAILURE, "request body is not a JSON object")
            with log.container_context(str(body.get("container_id") or "")):
                if path == "/neutron/addVif":
                    try:
                        vif = NeutronVIF.from_dict(body)
                    except (KeyError, TypeError, ValueError) as exc:
                        raise CniError(Code.DECODE_FAILURE, f"not a VIF: {exc}") from exc
                    return HTTPStatus.OK, service.add(vif).to_dict()
                service.delete(str(body["port_id"]), body.get("bridge"))
                return HTTPStatus.NO_CONTENT, None
        except Exception as exc:  # noqa: BLE001 - every failure is answered, never dropped
            status, err = error_answer(exc)
            log_at = LOG.error if status >= 500 else LOG.info
            log_at("%s failed (%d): %s", path, status, err.msg)
            return status, err.to_json()

    def process_request(self, request: Any, client_address: Any) -> None:
        self.pool.submit(self._process, request, client_address)

    def _process(self, request: socket.socket, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except ConnectionError as exc:  # the client went away (a plugin killed, a timeout)
            LOG.debug("connection from %s ended: %s", client_address, exc)
        except Exception:  # one broken connection must not end the worker
            LOG.exception("request from %s failed", client_address)
        finally:
            self.shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        self.pool.shutdown(wait=False)
