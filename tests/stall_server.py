"""A loopback TCP server that accepts connections and never answers: a hung model server.

Used in-process (``StallServer(...).start()`` runs its listening socket in a thread) and as
a process (``python tests/stall_server.py --port P``) that ManagedServer can start. It may
first answer ``fail_first`` connections with an HTTP 500 (a server that errs, then hangs).
It holds every other connection it accepts, reading nothing and writing nothing (or, with
``trickle``, it reads the request, sends the headers of a long reply and then one space every
0.2 s: a reply that never ends but never lets a read time out), until it is stopped or
``lifetime`` seconds have passed; then it closes them all and stops itself.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time

TRICKLE_EVERY_S = 0.2
FAILURE = json.dumps({"error": {"message": "scripted failure before the stall",
                                "type": "server_error", "code": 500}}).encode()


class StallServer:
    """Accepts and holds; ``accepted`` counts connections, ``failed`` those answered 500."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, lifetime: float = 60.0,
                 fail_first: int = 0, trickle: bool = False) -> None:
        self.sock = socket.create_server((host, port))
        self.sock.settimeout(0.05)
        self.port: int = self.sock.getsockname()[1]
        self.lifetime = lifetime
        self.fail_first = fail_first
        self.trickle = trickle
        self.accepted = 0
        self.failed = 0
        self._held: list[socket.socket] = []
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "StallServer":
        self._thread = threading.Thread(target=self.serve, name="stall-server", daemon=True)
        self._thread.start()
        return self

    def serve(self) -> None:
        """Accept until stopped or out of lifetime, then close everything."""
        ends = time.monotonic() + self.lifetime
        next_drip = 0.0
        try:
            while not self._stopping.is_set() and time.monotonic() < ends:
                if self.trickle and time.monotonic() >= next_drip:
                    next_drip = time.monotonic() + TRICKLE_EVERY_S
                    for conn in self._held:
                        _send(conn, b" ")
                try:
                    conn, _ = self.sock.accept()
                except TimeoutError:
                    continue
                except OSError:  # the listening socket was closed
                    break
                self.accepted += 1
                if self.failed < self.fail_first:
                    self.failed += 1
                    if _read_request(conn):
                        _send(conn, b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: "
                              b"application/json\r\nContent-Length: %d\r\nConnection: close"
                              b"\r\n\r\n%s" % (len(FAILURE), FAILURE))
                    conn.close()
                    continue
                if self.trickle and _read_request(conn):
                    _send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 1000000\r\n\r\n")
                self._held.append(conn)
        finally:
            for conn in self._held:
                conn.close()
            self.sock.close()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> "StallServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _read_request(conn: socket.socket) -> bool:
    """Read one HTTP request, headers and body; False if the client went away first."""
    conn.settimeout(5)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            body += chunk
    except OSError:
        return False
    return True


def _send(conn: socket.socket, data: bytes) -> None:
    try:
        conn.sendall(data)
    except OSError:  # the client gave up and closed: nothing to do
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--lifetime", type=float, default=120.0)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--trickle", action="store_true")
    args = parser.parse_args(argv)
    server = StallServer(args.host, args.port, args.lifetime, args.fail_first, args.trickle)
    print(f"stall_server: pid {os.getpid()} holding on {server.base_url}", flush=True)
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
