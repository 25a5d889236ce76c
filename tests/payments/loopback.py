"""The HTTP server every fake external service runs on: 127.0.0.1, a free port, one thread per request."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class LoopbackServer:
    """Serves `handler` with its class attribute `state` set to the given state object."""

    path_prefix = ""  # the API's base path (e.g. "/core/v5"), part of `base_url`

    def __init__(self, handler: type[BaseHTTPRequestHandler], state: Any) -> None:
        self.state = state
        bound = type("BoundHandler", (handler,), {"state": state})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), bound)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}{self.path_prefix}"

    def start(self) -> Self:
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.httpd.socket.fileno() == -1:
            return  # already stopped (a test that takes the service down)
        self.httpd.shutdown()
        self.httpd.server_close()
