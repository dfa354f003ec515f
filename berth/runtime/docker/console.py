"""DockerRuntime operations: exec (create/run/resize) and TTY resize.

A mixin of :class:`~berth.runtime.docker.driver.DockerRuntime`: it uses
``self._api()`` (the shared low-level APIClient) inside ``translate_errors()``.

The interactive side of a console (attach, starting an interactive exec and relaying
its bytes) is not here: the WebSocket proxy (``berth.console``) speaks to the engine's
socket itself, because it needs the hijacked stream on an asyncio loop.
"""

from __future__ import annotations

import logging
import socket
import struct
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from berth.runtime.base import ExecResult
from berth.runtime.docker.errors import translate_errors

if TYPE_CHECKING:
    import docker

LOG = logging.getLogger(__name__)

_HEADER = struct.Struct(">BxxxL")   # stream type (0 stdin, 1 stdout, 2 stderr), size
_CHUNK = 65536
#: Typing Ctrl-] in an interactive console detaches from it (the process goes on).
DETACH_KEYS = "ctrl-]"
#: How long to wait, after the output ended, for the engine to record the exit code.
_EXIT_GRACE = 2.0


class ConsoleMixin:
    if TYPE_CHECKING:
        def _api(self) -> docker.APIClient: ...

    def exec_create(self, container_id: str, command: Sequence[str], *,
                    interactive: bool = False) -> str:
        """``docker exec`` create: stdout and stderr attached, stdin and a TTY only when
        ``interactive`` (then Ctrl-] detaches). RuntimeConflict when the container is not
        running."""
        with translate_errors():
            answer = self._api().exec_create(
                container_id, list(command), stdout=True, stderr=True,
                stdin=interactive, tty=interactive,
                detach_keys=DETACH_KEYS if interactive else None)
        exec_id = str(answer["Id"])
        LOG.info("created exec %s in Docker container %s (interactive=%s)", exec_id[:12],
                 container_id[:12], interactive)
        return exec_id

    def exec_run(self, exec_id: str, *, timeout: float) -> ExecResult:
        """Start ``exec_id`` attached and read its whole output within ``timeout`` seconds
        (TimeoutError otherwise; the process is left running, detached)."""
        deadline = time.monotonic() + timeout
        with translate_errors():
            api = self._api()
            tty = bool((api.exec_inspect(exec_id).get("ProcessConfig") or {}).get("tty"))
            sock = api.exec_start(exec_id, tty=tty, socket=True)
        try:
            raw = _read_until_eof(sock, deadline)
        finally:
            _close(sock)
        output = raw if tty else demultiplex(raw)
        return ExecResult(output=output.decode("utf-8", "replace"),
                          exit_code=self._exec_exit_code(exec_id))

    def _exec_exit_code(self, exec_id: str) -> int | None:
        """The exit code once the engine has recorded the exec's end (the output can end
        a moment before); None if it still runs after a short grace."""
        give_up = time.monotonic() + _EXIT_GRACE
        while True:
            with translate_errors():
                info: dict[str, Any] = self._api().exec_inspect(exec_id)
            if not info.get("Running") or time.monotonic() > give_up:
                code = info.get("ExitCode")
                return None if info.get("Running") or code is None else int(code)
            time.sleep(0.02)

    def exec_resize(self, exec_id: str, height: int, width: int) -> None:
        """``POST /exec/{id}/resize``; RuntimeNotFound when the engine has no such exec."""
        with translate_errors():
            self._api().exec_resize(exec_id, height=int(height), width=int(width))

    def resize(self, container_id: str, height: int, width: int) -> None:
        """``POST /containers/{id}/resize`` (the main process's TTY)."""
        with translate_errors():
            self._api().resize(container_id, int(height), int(width))


def demultiplex(data: bytes) -> bytes:
    """The payloads of Docker's multiplexed stream (8-byte frame headers), stdout and
    stderr merged in the order the engine sent them. A truncated last frame keeps what
    arrived."""
    out = bytearray()
    pos = 0
    while pos + _HEADER.size <= len(data):
        _kind, size = _HEADER.unpack_from(data, pos)
        pos += _HEADER.size
        out += data[pos:pos + size]
        pos += size
    return bytes(out)


def _raw(sock: Any) -> socket.socket:
    """The socket under the SDK's answer (a ``SocketIO`` over a UNIX socket, or a TLS
    socket), so that a timeout can be set on it."""
    return getattr(sock, "_sock", sock)


def _read_until_eof(sock: Any, deadline: float) -> bytes:
    """Everything ``sock`` yields until EOF; TimeoutError once ``deadline`` passes."""
    raw = _raw(sock)
    chunks: list[bytes] = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the command did not end in time")
        raw.settimeout(remaining)
        try:
            data = sock.recv(_CHUNK) if hasattr(sock, "recv") else sock.read(_CHUNK)
        except TimeoutError:  # socket.timeout is TimeoutError
            raise TimeoutError("the command did not end in time") from None
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def _close(sock: Any) -> None:
    for target in (sock, _raw(sock)):
        try:
            target.close()
        except OSError:
            pass
