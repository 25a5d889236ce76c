"""A small threaded HTTP server on 127.0.0.1 (random port) for the carrier fakes: routes by method and path."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Reply = tuple[int, Any] | tuple[int, Any, str]


def s10(serial: int, prefix: str = "AB") -> str:
    """A tracking code with a valid UPU S10 check digit (AB123456785BR)."""
    digits = [int(d) for d in f"{serial:08d}"]
    rest = sum(d * w for d, w in zip(digits, (8, 6, 4, 2, 3, 5, 9, 7), strict=True)) % 11
    check = 5 if rest == 0 else 0 if rest == 1 else 11 - rest
    return f"{prefix}{serial:08d}{check}BR"


class Request:
    def __init__(self, method: str, path: str, query: dict[str, list[str]], headers: Any, raw: bytes) -> None:
        self.method, self.path, self.query, self.headers, self.raw = method, path, query, headers, raw

    def json(self) -> Any:
        return json.loads(self.raw) if self.raw else None


def _handler(route: Callable[[Request], Reply], state: Any) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _go(self, method: str) -> None:
            url = urlsplit(self.path)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            request = Request(method, url.path, parse_qs(url.query), self.headers, raw)
            with state.lock:
                state.requests.append((method, url.path))
                delay = state.delay
            if delay:
                time.sleep(delay)
            with state.lock:
                reply = route(request)
                hang = state.hang_after.pop(url.path, 0) if state.hang_after else 0
            if hang:  # the work is done, the answer never arrives within the caller's deadline
                time.sleep(hang)
            status, body, *rest = reply
            content_type = rest[0] if rest else "application/json"
            raw_out = body if isinstance(body, bytes) else json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(raw_out)))
                self.end_headers()
                self.wfile.write(raw_out)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self) -> None:
            self._go("GET")

        def do_POST(self) -> None:
            self._go("POST")

        def do_DELETE(self) -> None:
            self._go("DELETE")

    return Handler


@contextmanager
def serve(route: Callable[[Request], Reply], state: Any) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(route, state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
