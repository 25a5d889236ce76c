"""A mail server on 127.0.0.1 (the SMTP boundary), for tests and benches that send through Django's SMTP backend.

Just enough SMTP (RFC 5321) for smtplib: EHLO, MAIL, RCPT, DATA, RSET, NOOP, QUIT. It counts connections and
messages, and can drop every open connection at once, as a server does with idle clients.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any


class FakeSMTP(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.connections = 0
        self.messages: list[bytes] = []
        self.open: set[socket.socket] = set()
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def mailers(self) -> dict[str, Any]:
        """`settings.MAILERS` sending here with the production backend."""
        return {
            "default": {
                "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
                "OPTIONS": {"host": "127.0.0.1", "port": self.port, "timeout": 10},
            }
        }

    def drop_all(self) -> None:
        """Close every client connection (the server's idle timeout)."""
        with self.lock:
            for sock in list(self.open):
                with suppress(OSError):  # already closed by the client
                    sock.shutdown(socket.SHUT_RDWR)


class _Handler(socketserver.StreamRequestHandler):
    server: FakeSMTP

    def handle(self) -> None:
        with self.server.lock:
            self.server.connections += 1
            self.server.open.add(self.connection)
        try:
            self._talk()
        finally:
            with self.server.lock:
                self.server.open.discard(self.connection)

    def _talk(self) -> None:
        self.wfile.write(b"220 fake ESMTP\r\n")
        while line := self.rfile.readline():
            verb = line[:4].upper()
            if verb == b"EHLO":
                self.wfile.write(b"250-fake\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n")
            elif verb == b"DATA":
                self.wfile.write(b"354 go on\r\n")
                data = b""
                while (chunk := self.rfile.readline()) not in (b".\r\n", b""):
                    data += chunk
                with self.server.lock:
                    self.server.messages.append(data)
                self.wfile.write(b"250 queued\r\n")
            elif verb == b"QUIT":
                self.wfile.write(b"221 bye\r\n")
                return
            else:
                self.wfile.write(b"250 ok\r\n")


@contextmanager
def fake_smtp() -> Iterator[FakeSMTP]:
    server = FakeSMTP()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
