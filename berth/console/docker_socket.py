"""The console proxy's own line to the Docker engine, on asyncio.

The proxy needs the engine's *hijacked* stream (an HTTP request answered with
``101 UPGRADED``, after which the connection carries raw terminal bytes both ways), on
the proxy's event loop; the SDK is synchronous, so this module speaks the few HTTP
requests it needs itself:

* ``GET`` a JSON document (container or exec inspect), as HTTP/1.0 so that the engine
  delimits the body by closing (no chunking, though chunked bodies are decoded too);
* ``POST`` with ``Connection: Upgrade`` / ``Upgrade: tcp`` (attach, exec start), which
  hands back the open stream.

The engine is reached over its UNIX socket, or over TCP with TLS (client
certificate) when ``[docker]`` configures it; never over plain TCP, which would give
anyone on the network root on the node (Zun's proxy used ``tcp://<ip>:2375``).

Every connect and every answer is bounded by ``timeout``: an engine that does not
answer fails the console instead of holding it open.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import struct
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

_HEADER = struct.Struct(">BxxxL")
_MAX_HEAD = 64 * 1024
_MAX_BODY = 4 * 1024 * 1024


class BackendError(Exception):
    """The engine refused or did not answer; ``status`` is its HTTP status (0 when
    there was no answer)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class EngineAddress:
    """Where the engine listens: a UNIX socket path, or host and port with TLS."""

    unix_path: str | None = None
    host: str | None = None
    port: int | None = None
    tls: ssl.SSLContext | None = None
    version: str | None = None          # "1.41"; None = the engine's own (unversioned paths)

    def describe(self) -> str:
        return f"unix://{self.unix_path}" if self.unix_path else f"tcp+tls://{self.host}:{self.port}"


def engine_address(api_url: str, *, ca_file: str | None = None, cert_file: str | None = None,
                   key_file: str | None = None, insecure: bool = False,
                   version: str | None = None) -> EngineAddress:
    """The address for ``[docker] api_url``. A TCP URL needs ``ca_file``, ``cert_file``
    and ``key_file`` (and ``api_insecure = false``): ValueError otherwise."""
    parts = urlsplit(api_url)
    pinned = version if version and version != "auto" else None
    if parts.scheme in ("unix", "http+unix"):
        return EngineAddress(unix_path=parts.path or "/var/run/docker.sock", version=pinned)
    if parts.scheme in ("tcp", "https") and parts.hostname:
        if not (ca_file and cert_file and key_file) or insecure:
            raise ValueError(
                f"refusing to reach Docker at {api_url} over plain TCP: that port gives "
                f"anyone root on the node. Use the UNIX socket ([docker] api_url = "
                f"unix:///var/run/docker.sock) or set [docker] ca_file, cert_file, "
                f"key_file (and api_insecure = false) for TLS.")
        context = ssl.create_default_context(cafile=ca_file)
        context.load_cert_chain(cert_file, key_file)
        return EngineAddress(host=parts.hostname, port=parts.port or 2376, tls=context,
                             version=pinned)
    raise ValueError(f"[docker] api_url {api_url!r} is neither unix:// nor tcp://")


class Demuxer:
    """Turns Docker's multiplexed stream (8-byte header per frame: stream type, size)
    into the plain bytes of stdout and stderr, as they arrive; frames may be split
    anywhere across reads."""

    def __init__(self) -> None:
        self._head = bytearray()
        self._left = 0

    def feed(self, data: bytes) -> bytes:
        out = bytearray()
        view = memoryview(data)
        while view:
            if self._left == 0:
                take = _HEADER.size - len(self._head)
                self._head += view[:take]
                view = view[take:]
                if len(self._head) == _HEADER.size:
                    self._left = _HEADER.unpack(bytes(self._head))[1]
                    self._head.clear()
                continue
            chunk = view[:self._left]
            out += chunk
            self._left -= len(chunk)
            view = view[len(chunk):]
        return bytes(out)


@dataclass(slots=True)
class Hijacked:
    """An upgraded engine connection: read the container's output from ``reader``,
    write its input to ``writer``. ``close()`` ends it (safe twice)."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def close(self) -> None:
        if self.writer.is_closing():
            return
        self.writer.close()
        try:
            await asyncio.wait_for(self.writer.wait_closed(), 2)
        except (OSError, TimeoutError):
            pass


class DockerSocket:
    """HTTP to the engine at ``address``; each request on a new connection."""

    def __init__(self, address: EngineAddress, timeout: float = 10.0) -> None:
        self.address = address
        self.timeout = timeout

    def _path(self, path: str) -> str:
        return f"/v{self.address.version}{path}" if self.address.version else path

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        a = self.address
        try:
            async with asyncio.timeout(self.timeout):
                if a.unix_path:
                    return await asyncio.open_unix_connection(a.unix_path, limit=_MAX_HEAD)
                return await asyncio.open_connection(a.host, a.port, ssl=a.tls,
                                                     server_hostname=a.host, limit=_MAX_HEAD)
        except (OSError, TimeoutError, ssl.SSLError) as err:
            raise BackendError(f"cannot reach Docker at {a.describe()}: "
                               f"{err or type(err).__name__}") from err

    async def get_json(self, path: str) -> Any:
        """``GET path`` and its JSON answer; BackendError on any other status."""
        reader, writer = await self._connect()
        try:
            async with asyncio.timeout(self.timeout):
                writer.write(f"GET {self._path(path)} HTTP/1.0\r\nHost: docker\r\n"
                             f"User-Agent: berth-wsproxy\r\n\r\n".encode())
                await writer.drain()
                status, headers = await _read_head(reader)
                body = await _read_body(reader, headers)
        except (OSError, TimeoutError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError) as err:
            raise BackendError(f"Docker did not answer GET {path}: "
                               f"{err or type(err).__name__}") from err
        finally:
            writer.close()
        if status != 200:
            raise BackendError(_engine_message(body, status), status)
        try:
            return json.loads(body)
        except ValueError as err:
            raise BackendError(f"Docker answered GET {path} with invalid JSON") from err

    async def upgrade(self, path: str, body: dict[str, Any] | None = None) -> Hijacked:
        """``POST path`` asking to upgrade the connection to a raw stream; the open
        stream on success, BackendError (the connection closed) otherwise."""
        payload = json.dumps(body).encode() if body is not None else b""
        reader, writer = await self._connect()
        try:
            async with asyncio.timeout(self.timeout):
                head = (f"POST {self._path(path)} HTTP/1.1\r\nHost: docker\r\n"
                        f"User-Agent: berth-wsproxy\r\nConnection: Upgrade\r\n"
                        f"Upgrade: tcp\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(payload)}\r\n\r\n")
                writer.write(head.encode() + payload)
                await writer.drain()
                status, headers = await _read_head(reader)
                if status in (101, 200):
                    return Hijacked(reader, writer)
                text = await _read_body(reader, headers)
            raise BackendError(_engine_message(text, status), status)
        except (OSError, TimeoutError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError) as err:
            writer.close()
            raise BackendError(f"Docker did not answer POST {path}: "
                               f"{err or type(err).__name__}") from err
        except BaseException:   # refused, not HTTP, cancelled: nothing stays open
            writer.close()
            raise


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split(" ", 2)[1])
    except (IndexError, ValueError):
        raise BackendError(f"Docker answered something that is not HTTP: {lines[0]!r}"
                           ) from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return status, headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        out = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip() or b"0", 16)
            if size == 0 or len(out) + size > _MAX_BODY:
                return bytes(out)
            out += await reader.readexactly(size + 2)
            del out[-2:]
    if "content-length" in headers:
        return await reader.readexactly(min(int(headers["content-length"]), _MAX_BODY))
    out = bytearray()
    while len(out) < _MAX_BODY:
        chunk = await reader.read(_MAX_BODY - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def _engine_message(body: bytes, status: int) -> str:
    """The engine's ``{"message": ...}`` text, else the raw body, with the status."""
    try:
        text = str(json.loads(body).get("message") or "")
    except (ValueError, AttributeError):
        text = body.decode("utf-8", "replace").strip()
    return f"Docker answered {status}: {text or 'no explanation'}"
