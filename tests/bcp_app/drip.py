"""A slow-drip HTTP peer on 127.0.0.1: accepts, reads the request, then sends its answer one byte a second."""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


class DripServer:
    def __init__(self, *, interval: float = 1.0, answer: bytes = ANSWER) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.interval, self.answer = interval, answer
        self.connected = threading.Event()
        self.stop = threading.Event()
        self.connections = 0
        self.sent = 0  # bytes of the answer that left, over all connections
        self.cut = threading.Event()  # set when a client hung up before the whole answer was sent
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def url(self, path: str = "/perfil.json") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> DripServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() alone does not
        self.sock.close()
        self.thread.join(timeout=5)

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            self.connected.set()
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            for index in range(len(self.answer)):
                if self.stop.wait(self.interval):
                    return
                try:
                    conn.sendall(self.answer[index : index + 1])
                except OSError:
                    self.cut.set()  # the client gave up (its deadline); a send after its close fails
                    return
                self.sent += 1
