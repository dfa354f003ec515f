"""The proxy's HTTP line to the engine, against small UNIX-socket servers that answer
as the engine does, or wrongly, or not at all."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from berth.console.docker_socket import BackendError, DockerSocket, EngineAddress

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def run_against(tmp_path: Path, handler: Handler, client: Callable[[DockerSocket], Awaitable[object]],
                timeout: float = 2.0) -> object:
    path = str(tmp_path / "engine.sock")

    async def main() -> object:
        server = await asyncio.start_unix_server(handler, path)
        try:
            return await client(DockerSocket(EngineAddress(unix_path=path, version="1.41"),
                                             timeout=timeout))
        finally:
            server.close()

    return asyncio.run(main())


async def _request_head(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


def test_get_json_reads_a_chunked_answer_and_uses_the_pinned_version(tmp_path: Path) -> None:
    seen: list[bytes] = []

    async def engine(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await _request_head(reader))
        body = json.dumps({"State": {"Running": True}}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     + f"{len(body[:5]):x}\r\n".encode() + body[:5] + b"\r\n"
                     + f"{len(body[5:]):x}\r\n".encode() + body[5:] + b"\r\n0\r\n\r\n")
        await writer.drain()
        writer.close()

    answer = run_against(tmp_path, engine, lambda d: d.get_json("/containers/abc/json"))
    assert answer == {"State": {"Running": True}}
    assert seen[0].startswith(b"GET /v1.41/containers/abc/json HTTP/1.0\r\n")


def test_upgrade_hands_back_the_stream(tmp_path: Path) -> None:
    async def engine(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await _request_head(reader)
        assert b"Upgrade: tcp" in head and b"Connection: Upgrade" in head
        await reader.readexactly(int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]))
        writer.write(b"HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream"
                     b"\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\nhello")
        await writer.drain()
        writer.write((await reader.readexactly(4)).upper())
        await writer.drain()
        writer.close()

    async def client(docker: DockerSocket) -> bytes:
        stream = await docker.upgrade("/exec/e1/start", {"Detach": False, "Tty": True})
        stream.writer.write(b"ping")
        data = b""
        while len(data) < 9:
            data += await stream.reader.read(100)
        await stream.close()
        await stream.close()             # safe twice
        return data

    assert run_against(tmp_path, engine, client) == b"helloPING"


def test_a_refused_upgrade_carries_the_engine_message(tmp_path: Path) -> None:
    async def engine(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request_head(reader)
        body = b'{"message":"Container abc is not running"}'
        writer.write(b"HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        await writer.drain()

    with pytest.raises(BackendError, match="409: Container abc is not running") as caught:
        run_against(tmp_path, engine, lambda d: d.upgrade("/containers/abc/attach"))
    assert caught.value.status == 409


def test_an_engine_that_does_not_answer_fails_in_time(tmp_path: Path) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    for call in (lambda d: d.upgrade("/containers/abc/attach"),
                 lambda d: d.get_json("/containers/abc/json")):
        with pytest.raises(BackendError, match="did not answer"):
            run_against(tmp_path, silent, call, timeout=0.3)


def test_an_engine_that_is_not_there_is_a_backend_error(tmp_path: Path) -> None:
    docker = DockerSocket(EngineAddress(unix_path=str(tmp_path / "none.sock")), timeout=1)
    with pytest.raises(BackendError, match="cannot reach Docker"):
        asyncio.run(docker.get_json("/_ping"))


def test_something_that_is_not_http_is_a_backend_error(tmp_path: Path) -> None:
    async def engine(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request_head(reader)
        writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
        await writer.drain()

    with pytest.raises(BackendError, match="not HTTP"):
        run_against(tmp_path, engine, lambda d: d.get_json("/containers/abc/json"))
