"""A TCP relay on loopback that can be cut: a service "goes down" for one berth while
the real one keeps running for everybody else (the shared Keystone is never stopped).

``TcpRelay(target_port).start()`` listens on ``relay.port`` and copies bytes both ways;
``cut()`` closes every connection and refuses new ones (connection refused), until
``restore()``.
"""

from __future__ import annotations

import socket
import threading

from support.berth_proc import free_port


class TcpRelay:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.port = free_port()
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def start(self) -> TcpRelay:
        listener = socket.create_server(("127.0.0.1", self.port))
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), name="tcp-relay",
                         daemon=True).start()
        return self

    def cut(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            conns, self._open = self._open, set()
        if listener is not None:
            # shutdown wakes the thread blocked in accept(); close alone would leave the
            # socket listening until then (and the port taken).
            _close(listener)
        for conn in conns:
            _close(conn)

    def restore(self) -> None:
        if self._listener is None:
            self.start()

    stop = cut

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._open.update((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            _close(src)
            _close(dst)
            with self._lock:
                self._open.discard(src)
                self._open.discard(dst)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
