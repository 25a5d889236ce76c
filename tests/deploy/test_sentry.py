"""Error reporting: sentry-sdk is initialised only when SENTRY_DSN is set, and then reports to it."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.deploy.dockerfile import ROOT

PROBE = (
    "import django; django.setup(); import sentry_sdk; "
    "print(sentry_sdk.get_client().is_active()); "
    "sentry_sdk.capture_message('sonda de erro'); sentry_sdk.flush(timeout=10)"
)


@pytest.fixture
def ingest() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """A local stand-in for Sentry's ingest endpoint that records what it is sent."""
    received: list[tuple[str, bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            received.append((self.path, body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://publickey@127.0.0.1:{server.server_port}/42", received
    server.shutdown()
    server.server_close()


def run_probe(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "SENTRY_DSN"}
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_sentry_is_off_without_a_dsn() -> None:
    assert run_probe() == "False"


def test_sentry_reports_to_the_configured_dsn(ingest: tuple[str, list[tuple[str, bytes]]]) -> None:
    dsn, received = ingest
    assert run_probe(SENTRY_DSN=dsn) == "True"
    assert [path for path, _ in received] == ["/api/42/envelope/"]
    assert b"sonda de erro" in received[0][1]
