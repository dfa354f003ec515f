"""TCP relays from inside the fleet's node namespaces to the host's loopback.

The shared PostgreSQL and RabbitMQ listen on the host's 127.0.0.1, which a process in
a node's network namespace cannot reach. For each namespace and port given, this
process opens a listening socket *inside* the namespace (a socket stays in the
namespace it was made in), on 127.0.0.1:PORT, and pipes each connection to the
host's 127.0.0.1:PORT. Runs until killed (fleet-ci.sh stop).

    python3 fleet_relay.py NETNS_PATH[,NETNS_PATH...] PORT[,PORT...]
"""

from __future__ import annotations

import ctypes
import os
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL("libc.so.6", use_errno=True)


def _setns(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {path}")
    finally:
        os.close(fd)


def listen_in(netns: str, port: int) -> socket.socket:
    own = "/proc/thread-self/ns/net"
    back = os.open(own, os.O_RDONLY)
    try:
        _setns(netns)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(64)
    finally:
        if _libc.setns(back, CLONE_NEWNET) != 0:
            os.abort()
        os.close(back)
    return sock


def pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(sock: socket.socket, port: int) -> None:
    while True:
        client, _ = sock.accept()
        try:
            upstream = socket.create_connection(("127.0.0.1", port), timeout=10)
            upstream.settimeout(None)
        except OSError:
            client.close()
            continue
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()


def main() -> None:
    namespaces, ports = sys.argv[1].split(","), [int(p) for p in sys.argv[2].split(",")]
    threads = [threading.Thread(target=serve, args=(listen_in(ns, port), port), daemon=True)
               for ns in namespaces for port in ports]
    for t in threads:
        t.start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
