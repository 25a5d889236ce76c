"""Shared fixtures and helpers of the MCP tests: a live uvicorn running `config.asgi:application` in a
thread of the test process (so it sees the pytest database and committed data), the official `mcp`
client, raw JSON-RPC over httpx, and small catalog factories. Unit tests of the transport glue that
need no server live here too.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from bcp_app.transports.mcp.server import error_status
from tests.bcp_app.live import LiveServer as BaseLiveServer

PROFILE = "https://agente.example/.well-known/bcp"
V = "2026-07-28"


def _capability(name: str, extends: str | None = None) -> list[dict[str, str]]:
    short = name.rsplit(".", 1)[-1]
    entry = {
        "version": V,
        "spec": f"https://bcp.dev.br/draft/specification/{short}",
        "schema": f"https://bcp.dev.br/draft/schemas/shopping/{short}.json",
    }
    if extends:
        entry["extends"] = extends
    return [entry]


def platform_profile() -> dict[str, Any]:
    """A platform profile (validates against profile.json#/$defs/platform_schema) asking for everything."""
    checkout = "br.dev.bcp.shopping.checkout"
    return {
        "ucp": {
            "version": V,
            "services": {
                "br.dev.bcp.shopping": [
                    {
                        "version": V,
                        "transport": "mcp",
                        "spec": "https://bcp.dev.br/draft/specification/overview",
                        "schema": "https://bcp.dev.br/draft/services/shopping/mcp.openrpc.json",
                    }
                ]
            },
            "capabilities": {
                checkout: _capability(checkout),
                "br.dev.bcp.shopping.fulfillment": _capability("br.dev.bcp.shopping.fulfillment", checkout),
                "br.dev.bcp.shopping.order": _capability("br.dev.bcp.shopping.order"),
                "br.dev.bcp.shopping.catalog.search": _capability("br.dev.bcp.shopping.catalog.search"),
                "br.dev.bcp.shopping.catalog.lookup": _capability("br.dev.bcp.shopping.catalog.lookup"),
            },
            "payment_handlers": {},
        }
    }


class _ProfileHandler(BaseHTTPRequestHandler):
    documents: dict[str, bytes] = {}

    def do_GET(self) -> None:
        body = self.documents.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "public, max-age=300")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def profile_host() -> Iterator[str]:
    """A fake agent platform on 127.0.0.1 serving profiles (the network boundary, never our code)."""
    _ProfileHandler.documents = {
        "/.well-known/bcp": json.dumps(platform_profile()).encode(),
        "/other/.well-known/bcp": json.dumps(platform_profile()).encode(),
        "/old/.well-known/bcp": json.dumps(
            {**platform_profile(), "ucp": {**platform_profile()["ucp"], "version": "2025-01-01"}}
        ).encode(),
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ProfileHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@dataclass(frozen=True)
class Agent:
    profile_url: str
    api_key: str
    platform_id: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    def meta(self, key: str | None = None) -> dict[str, Any]:
        return bcp_meta(key=key, profile=self.profile_url)


@pytest.fixture
def agent(profile_host: str, settings: Any, transactional_db: None) -> Agent:
    """A registered platform with an API key whose profile is served by `profile_host`."""
    from bcp_app.service.platforms import platform_create

    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    created = platform_create(name="Agente Teste", profile_url=f"{profile_host}/.well-known/bcp")
    return Agent(created.platform.profile_url, created.api_key, created.platform.public_id)


class LiveServer(BaseLiveServer):
    """The whole ASGI application (Django, MCP, A2A) with its lifespan on, via `tests.bcp_app.live`."""

    def __init__(self) -> None:
        from config.asgi import build_application

        super().__init__(build_application(), lifespan="on")
        self.users = 0

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/bcp/mcp"


_shared: list[LiveServer] = []


@pytest.fixture(scope="session")
def live_mcp(django_db_setup: None, django_db_blocker: Any) -> Iterator[LiveServer]:
    """One uvicorn for the session; tests using it take `transactional_db` so it sees their rows.

    Test modules re-export this fixture, which gives each module its own session fixture
    definition, so the server itself is shared here and stopped by the last one to finish.
    """
    if not _shared:
        with django_db_blocker.unblock():
            server = LiveServer()
            server.start()
        _shared.append(server)
    server = _shared[0]
    server.users += 1
    yield server
    server.users -= 1
    if server.users == 0:
        _shared.clear()
        server.stop()


# --- clients ----------------------------------------------------------------------------------------


def run(coro_fn: Any, *args: Any) -> Any:
    return anyio.run(coro_fn, *args)


def mcp_client(url: str, *, headers: dict[str, str] | None = None, mode: str = "auto") -> Client:
    http_client = httpx2.AsyncClient(headers=headers or {}, timeout=30)
    return Client(streamable_http_client(url, http_client=http_client), mode=mode, cache=None)


def call(
    url: str, name: str, arguments: dict[str, Any], *, headers: dict[str, str] | None = None, mode: str = "auto"
) -> Any:
    """`tools/call` through the official client; returns the CallToolResult or raises MCPError."""

    async def go() -> Any:
        async with mcp_client(url, headers=headers, mode=mode) as client:
            try:
                return await client.call_tool(name, arguments)
            except MCPError as exc:  # returned, so it does not leave wrapped in the client's task group
                return exc

    outcome = run(go)
    if isinstance(outcome, MCPError):
        raise outcome
    return outcome


def call_error(url: str, name: str, arguments: dict[str, Any], **kwargs: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        call(url, name, arguments, **kwargs)
    return caught.value


def raw_post(url: str, body: bytes | dict[str, Any], *, headers: dict[str, str] | None = None) -> httpx.Response:
    """A bare JSON-RPC POST as a 2025-11-25 client would send it after initialize (stateless server)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    base = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    return httpx.post(url, content=data, headers={**base, **(headers or {})}, timeout=30)


def tools_call(name: str, arguments: Any, request_id: int = 1) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def bcp_meta(*, key: str | None = None, profile: str = PROFILE) -> dict[str, Any]:
    meta: dict[str, Any] = {"ucp-agent": {"profile": profile}}
    if key is not None:
        meta["idempotency-key"] = key
    return meta


# --- catalog factories --------------------------------------------------------------------------------


def make_product(
    *,
    title: str = "Café especial 500 g",
    slug: str = "cafe-especial-500g",
    category_slug: str = "cafes",
    variants: tuple[tuple[str, int, int], ...] = (("SKU-CAFE-500G", 4290, 10),),
    brand: str = "Torra Boa",
) -> Any:
    from shop.models import Category, Product, Variant

    category, _ = Category.objects.get_or_create(slug=category_slug, defaults={"name": category_slug.title()})
    product = Product.objects.create(
        title=title, slug=slug, description=f"{title}, descrição.", brand=brand, category=category
    )
    for position, (sku, price, stock) in enumerate(variants):
        Variant.objects.create(product=product, sku=sku, title=sku, price=price, stock=stock, position=position)
    return product


# --- unit tests of the status mapping (no server needed) -------------------------------------------------


def test_error_status_maps_bcp_data_code_to_http_status_bcp_err_04() -> None:
    # given JSON-RPC error bodies as the SDK writes them
    profile = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x","data":{"code":"profile_unreachable"}}}'
    limited = (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x","data":{"code":"rate_limited","retry_after":7}}}'
    )
    unknown = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}'
    # when / then
    assert error_status(profile) == (424, {})
    assert error_status(limited) == (429, {"retry-after": "7"})
    assert error_status(unknown) == (404, {})
    assert error_status(b'{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch"}}') == (None, {})
    assert error_status(b'{"jsonrpc":"2.0","id":1,"result":{}}') is None
    assert error_status(b"not json") is None


def test_deprecated_typed_tool_is_marked_in_its_description() -> None:
    # given seed 002's rule: a breaking change gets a new name and the old tool is marked obsolete
    from dataclasses import replace

    from bcp_app.service.catalogue import TYPED_TOOLS

    listing = next(tool for tool in TYPED_TOOLS if tool.name == "catalogue.list")
    # when
    old = replace(listing, deprecated="use catalogue.list_v2; removida após 2027-03-01")
    # then
    assert listing.full_description == listing.description
    assert old.full_description.startswith("[OBSOLETA: use catalogue.list_v2; removida após 2027-03-01] ")
