"""Fixtures for BCP core tests: a local fake agent platform (profile + webhook receiver) on 127.0.0.1.

The platform is faked at its network boundary only: a real HTTP server on a free port that serves
profile documents and records what the shop POSTs to it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from bcp_app.protocol.keys import public_jwk

VERSION = "2026-07-28"
PLATFORM_KID = "plataforma-2026"


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


# The shop's card handler as a platform lists it (a checkout offers only handlers its platform lists).
CARD_HANDLERS = {
    "com.google.pay": [
        {
            "id": "card",
            "version": VERSION,
            "spec": "https://pay.google.com/spec",
            "schema": "https://pay.google.com/schema.json",
            "available_instruments": [{"type": "card"}],
            "config": {},
        }
    ]
}


@dataclass
class FakePlatform:
    port: int = 0
    routes: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)
    post_statuses: list[int] = field(default_factory=list)  # consumed in order; 200 when empty
    received: list[Received] = field(default_factory=list)
    hits: dict[str, int] = field(default_factory=dict)
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def serve_json(self, path: str, document: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> str:
        raw = document if isinstance(document, bytes) else json.dumps(document).encode()
        self.routes[path] = (status, {"Content-Type": "application/json", **(headers or {})}, raw)
        return self.url(path)

    def profile(
        self,
        *,
        capabilities: dict[str, list[dict[str, Any]]] | None = None,
        version: str = VERSION,
        webhook_path: str = "/webhooks/bcp/pedidos",
        handlers: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A valid platform profile (platform_schema) that negotiates everything we offer."""
        spec, schema = "https://bcp.dev.br/draft/specification", "https://bcp.dev.br/draft/schemas"
        if capabilities is None:
            capabilities = {
                "br.dev.bcp.shopping.checkout": [
                    {
                        "version": VERSION,
                        "spec": f"{spec}/shopping/checkout",
                        "schema": f"{schema}/shopping/checkout.json",
                    }
                ],
                "br.dev.bcp.shopping.fulfillment": [
                    {
                        "version": VERSION,
                        "spec": f"{spec}/fulfillment",
                        "schema": f"{schema}/shopping/fulfillment.json",
                        "extends": "br.dev.bcp.shopping.checkout",
                    }
                ],
                "br.dev.bcp.shopping.discount": [
                    {
                        "version": VERSION,
                        "spec": f"{spec}/discount",
                        "schema": f"{schema}/shopping/discount.json",
                        "extends": "br.dev.bcp.shopping.checkout",
                    }
                ],
                "br.dev.bcp.shopping.order": [
                    {
                        "version": VERSION,
                        "spec": f"{spec}/order",
                        "schema": f"{schema}/shopping/order.json",
                        "config": {"webhook_url": self.url(webhook_path)},
                    }
                ],
                "br.dev.bcp.shopping.catalog.search": [
                    {
                        "version": VERSION,
                        "spec": f"{spec}/catalog/search",
                        "schema": f"{schema}/shopping/catalog_search.json",
                    }
                ],
                "br.dev.bcp.shopping.catalog.lookup": [
                    {
                        "version": VERSION,
                        "spec": f"{spec}/catalog/lookup",
                        "schema": f"{schema}/shopping/catalog_lookup.json",
                    }
                ],
            }
        if handlers is None:
            handlers = {
                "br.dev.bcp.pix": [
                    {
                        "id": "pix",
                        "version": VERSION,
                        "spec": f"{spec}/payment/pix",
                        "schema": f"{schema}/payment/pix.json",
                        "available_instruments": [{"type": "pix"}],
                        "config": {"presentation": ["br_code", "qr_image"]},
                    }
                ]
            }
        return {
            "ucp": {
                "version": version,
                "services": {
                    "br.dev.bcp.shopping": [
                        {
                            "version": VERSION,
                            "spec": f"{spec}/overview",
                            "transport": "rest",
                            "schema": "https://bcp.dev.br/draft/services/shopping/rest.openapi.json",
                        }
                    ]
                },
                "capabilities": capabilities,
                "payment_handlers": handlers,
            },
            "keys": [public_jwk(self.key.public_key(), kid=PLATFORM_KID)],
        }

    def with_card(self) -> dict[str, Any]:
        """Pix plus the shop's card handler (`com.google.pay`), for platforms that complete by card: a
        checkout only offers handlers its platform lists (BCP §11.1, BCP-PAY-03)."""
        pix = self.profile()["ucp"]["payment_handlers"]
        return {**pix, **CARD_HANDLERS}

    def publish(self, path: str = "/perfil.json", **kwargs: Any) -> str:
        return self.serve_json(path, self.profile(**kwargs), headers={"Cache-Control": "public, max-age=300"})


def _handler(platform: FakePlatform) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real platforms (every answer has a Content-Length)

        def log_message(self, *args: Any) -> None:
            pass

        def _record(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            platform.received.append(
                Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            platform.hits[self.path] = platform.hits.get(self.path, 0) + 1
            return body

        def do_GET(self) -> None:
            self._record()
            status, headers, raw = platform.routes.get(self.path, (404, {"Content-Type": "text/plain"}, b"nope"))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if "Content-Length" not in headers:
                self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:
            self._record()
            status = platform.post_statuses.pop(0) if platform.post_statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    return Handler


@pytest.fixture
def fake_platform() -> Iterator[FakePlatform]:
    platform = FakePlatform()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(platform))
    platform.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield platform
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def bcp_settings(settings: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Allow-list the loopback fake platform, use a throwaway signing key and an https public URL."""
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    key_file = tmp_path_factory.getbasetemp() / "bcp_signing_key.pem"
    if not key_file.exists():  # pytest runs with DEBUG off, where the shop refuses to generate one
        key = ec.generate_private_key(ec.SECP256R1())
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    settings.BCP_SIGNING_KEY_FILE = str(key_file)
    settings.BCP_PUBLIC_URL = "https://loja.example.com.br"
    return settings


@pytest.fixture
def rest_shop(settings: Any, bcp_settings: Any) -> None:
    """REST tests that pay: the sandbox PSP settling in-process (no webhook URL) and the coffee catalog."""
    from tests.bcp_app.rest_helpers import catalog

    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()


def agent(profile_url: str, **extra: str) -> dict[str, str]:
    """Request headers of a BCP agent (for Django's test client `headers=`)."""
    return {"BCP-Agent": f'profile="{profile_url}"', **extra}
