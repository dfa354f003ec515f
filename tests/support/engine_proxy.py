"""A unix-socket proxy in front of the real Docker engine that makes chosen requests
slow, for tests of what berth does when the engine is slow or stalls: the engine
itself cannot be made slow on demand for one kind of request, and SIGSTOP of the
shared dockerd would stall every other test's berth too.

``EngineProxy(rules).start()`` listens on ``proxy.url`` (give it to berth as
``[docker]api_url``) and forwards every byte to the real engine. A rule is
``(method, path_part, before, after)``: a request whose first line has ``method`` and
contains ``path_part`` is held ``before`` seconds before it reaches the engine, and
its response is held ``after`` seconds before it reaches berth (the engine has done
the work by then: a create that "times out" but happened). A rule with ``answer``
(a JSON text) is not sent to the engine at all: berth gets that text as a 200 answer,
for tests of an engine answer berth cannot read. ``proxy.rules`` may be changed while
it runs. HTTP/1.1 without pipelining (what the Docker SDK sends): each
request on a connection begins a new chunk from the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import threading
from collections import deque
from dataclasses import dataclass, field

ENGINE_SOCKET = "/var/run/docker.sock"
_METHODS = (b"GET ", b"POST ", b"PUT ", b"DELETE ", b"HEAD ")


@dataclass
class Rule:
    method: str
    path_part: str
    before: float = 0.0
    after: float = 0.0
    #: answer this JSON text (status 200) instead of asking the engine
    answer: str | None = None
    #: how many requests matched so far
    hits: int = 0


@dataclass
class EngineProxy:
    rules: list[Rule] = field(default_factory=list)
    engine_socket: str = ENGINE_SOCKET

    def __post_init__(self) -> None:
        self.path = os.path.join(tempfile.mkdtemp(prefix="berth-engine-proxy-"),
                                 "docker.sock")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="engine-proxy")
        self._server: asyncio.base_events.Server | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.path}"

    def start(self) -> EngineProxy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)
        return self

    def stop(self) -> None:
        """Close the socket and every connection through it. Safe twice."""
        if self._loop.is_closed():
            return

        async def close() -> None:
            if self._server is not None:
                self._server.close()
            current = asyncio.current_task()
            pending = [t for t in asyncio.all_tasks() if t is not current]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def _match(self, first_line: bytes) -> Rule | None:
        text = first_line.decode("latin-1")
        for rule in self.rules:
            if text.startswith(rule.method + " ") and rule.path_part in text:
                rule.hits += 1
                return rule
        return None

    async def _listen(self) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path=self.path)

    async def _serve(self, client_r: asyncio.StreamReader,
                     client_w: asyncio.StreamWriter) -> None:
        try:
            engine_r, engine_w = await asyncio.open_unix_connection(self.engine_socket)
        except OSError:
            client_w.close()
            return
        held: deque[float] = deque()      # response delays of the requests in flight
        await asyncio.gather(self._requests(client_r, engine_w, held, client_w),
                             self._responses(engine_r, client_w, held),
                             return_exceptions=True)

    async def _requests(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        held: deque[float], client: asyncio.StreamWriter) -> None:
        dropping = 0          # body bytes still to come of a request answered here
        try:
            while chunk := await reader.read(65536):
                if dropping:
                    dropping -= min(dropping, len(chunk))
                    continue
                if chunk.startswith(_METHODS):
                    rule = self._match(chunk.split(b"\r\n", 1)[0])
                    if rule is not None and rule.answer is not None:
                        # HTTP/1.1 without pipelining: no engine answer is pending.
                        dropping = _body_left(chunk)
                        body = rule.answer.encode()
                        client.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json"
                                     b"\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                        await client.drain()
                        continue
                    held.append(rule.after if rule else 0.0)
                    if rule is not None and rule.before:
                        await asyncio.sleep(rule.before)
                writer.write(chunk)
                await writer.drain()
        finally:
            with contextlib.suppress(RuntimeError):
                writer.close()

    async def _responses(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         held: deque[float]) -> None:
        try:
            while chunk := await reader.read(65536):
                if chunk.startswith(b"HTTP/1.") and held:
                    delay = held.popleft()
                    if delay:
                        await asyncio.sleep(delay)
                writer.write(chunk)
                await writer.drain()
        finally:
            with contextlib.suppress(RuntimeError):
                writer.close()


def _body_left(chunk: bytes) -> int:
    """How many bytes of the body of the request that ``chunk`` begins are not in it
    (by its Content-Length; the Docker SDK never sends a chunked request body)."""
    head, _, body = chunk.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return max(0, int(value.strip()) - len(body))
    return 0
