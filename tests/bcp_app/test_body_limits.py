"""Hostile bodies on every transport (issue 13 §4, §6): deep nesting, broken UTF-8 and oversize bodies.

Before: `[[[[…]]]]` ×100k gave a 500 (RecursionError) in profile parsing and REST cancel, A2A answered
-32603 leaking "maximum recursion depth" / "'utf-8' codec can't decode", and A2A accepted any size.
Now REST, MCP and A2A refuse bodies over the one cap (Django's DATA_UPLOAD_MAX_MEMORY_SIZE) and nested
deeper than MAX_DEPTH before parsing, with messages that name no internals. BCP-ERR-05/06.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
from django.test import Client

from kernel.json_limits import MAX_DEPTH, JsonLimitError, loads_bounded, nesting_depth
from kernel.ops.asgi_guard import NOT_PARSED, guarded, parsed_body
from shop.models import Checkout
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog
from tests.bcp_app.test_a2a_helpers import (
    SEED_HEADERS,
    LiveServer,
    live_fixture,  # noqa: F401 (fixture "live")
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)

DEEP = b"[" * 100_000 + b"]" * 100_000
INTERNALS = ("recursion", "codec", "Traceback", "utf-8' codec")
MCP_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}


def test_nesting_depth_ignores_brackets_inside_strings() -> None:
    assert nesting_depth(b'{"a": "[[[[", "b": [1, {"c": "\\"]]"}]}') == 3
    assert nesting_depth(DEEP) == 100_000
    assert nesting_depth(b"42") == 0
    with pytest.raises(JsonLimitError) as deep:
        loads_bounded(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), max_bytes=10_000)
    assert (deep.value.kind, str(deep.value)) == ("too_deep", f"JSON nested deeper than {MAX_DEPTH} levels")
    assert loads_bounded(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, max_bytes=10_000) is not None


def assert_no_internals(text: str) -> None:
    assert not any(word in text for word in INTERNALS), text


# --- REST and profile parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,2.5,null]}}', None), (b"", NOT_PARSED)],
    ids=["json", "empty"],
)
def test_the_guard_hands_the_body_it_parsed_to_the_app_once(raw: bytes, expected: Any) -> None:
    """Issue 34: the router's guard parses a body once for its checks and hands that JSON on in the scope
    (`parsed_body`), so MCP and A2A do not parse the same bytes again; only for exactly those bytes, and once."""
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        body = (await receive())["body"]
        seen.append(parsed_body({**scope}, b" " + body))  # other bytes: not the guard's
        seen.append(parsed_body(scope, body))
        seen.append(parsed_body(scope, body))  # handed out once

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: Any) -> None:
        raise AssertionError(message)  # the app answers nothing here; the guard must not either

    scope = {"type": "http", "method": "POST", "path": "/bcp/mcp", "scheme": "https", "headers": []}
    asyncio.run(guarded(app, scope, receive, send))
    wanted = json.loads(raw) if expected is None else expected
    assert seen[0] is NOT_PARSED and seen[2] is NOT_PARSED
    assert seen[1] == wanted if expected is None else seen[1] is NOT_PARSED


@pytest.fixture
def headers(fake_platform: FakePlatform, bcp_settings: Any) -> dict[str, str]:
    catalog()
    return agent(fake_platform.publish())


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/checkout-sessions", "/checkout-sessions/chk_x/cancel", "/catalog/search"])
def test_deeply_nested_rest_bodies_are_400(client: Client, headers: dict[str, str], path: str) -> None:
    response = call(client, "post", path, {**headers, "Idempotency-Key": str(uuid.uuid4())}, DEEP)
    assert response.status_code == 400, response.content
    assert response.json() == {"code": "invalid_request", "content": "O corpo não é JSON válido (UTF-8)."}
    assert Checkout.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_not_json_bcp_err_05(client: Client, headers: dict[str, str], constant: bytes) -> None:
    """Python's json reads them by default; RFC 8259 has no such values, so the body is bad JSON (agent QA walk:
    REST answered 201 to a body holding one)."""
    body = b'{"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "x": ' + constant + b"}"
    response = call(client, "post", "/checkout-sessions", {**headers, "Idempotency-Key": str(uuid.uuid4())}, body)
    assert response.status_code == 400, response.content
    assert response.json() == {"code": "invalid_request", "content": "O corpo não é JSON válido (UTF-8)."}
    assert Checkout.objects.count() == 0


@pytest.mark.django_db
def test_deeply_nested_profile_is_profile_malformed(
    client: Client, fake_platform: FakePlatform, bcp_settings: Any
) -> None:
    catalog()
    url = fake_platform.serve_json("/fundo.json", DEEP)
    response = call(client, "post", "/catalog/search", agent(url), {"query": "café"})
    assert response.status_code == 422, response.content
    assert response.json() == {"code": "profile_malformed", "content": "O perfil da plataforma aninhado demais."}


# --- MCP and A2A through the ASGI router --------------------------------------------------------------------


def a2a_post(server: LiveServer, raw: bytes) -> httpx.Response:
    return httpx.post(server.a2a_url, content=raw, headers=SEED_HEADERS, timeout=60)


def mcp_post(server: LiveServer, raw: bytes) -> httpx.Response:
    return httpx.post(f"{server.base_url}/bcp/mcp", content=raw, headers=MCP_HEADERS, timeout=60)


@pytest.mark.postgres
@pytest.mark.e2e
@pytest.mark.parametrize("post", [a2a_post, mcp_post], ids=["a2a", "mcp"])
@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        (DEEP, -32600, f"Invalid Request: JSON aninhado demais (máximo {MAX_DEPTH} níveis)."),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}', -32700, "Parse error: o corpo não é JSON UTF-8 válido."),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method":',
            -32700,
            "Parse error: o corpo não é JSON válido (linha 1, coluna 38).",
        ),
        (
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "SendMessage",
                    "params": {"message": {"parts": [{"data": {"x": json.loads(b"[" * 200 + b"]" * 200)}}]}},
                }
            ).encode(),
            -32600,
            f"Invalid Request: JSON aninhado demais (máximo {MAX_DEPTH} níveis).",
        ),
    ],
    ids=["deep", "not-utf8", "truncated", "deep-inside-a-request"],
)
def test_deep_or_broken_bodies_are_plain_json_rpc_errors(
    server: LiveServer, post: Any, raw: bytes, code: int, message: str
) -> None:
    response = post(server, raw)
    assert response.status_code == 400
    data = {"code": "invalid_request", "content": message}  # BCP §5.4: the error's code and text in `data`
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message, "data": data}}
    assert_no_internals(response.text)


@pytest.mark.postgres
@pytest.mark.e2e
def test_one_body_cap_for_rest_mcp_and_a2a(server: LiveServer, settings: Any) -> None:
    # given a small cap, a body just over it and one just under it
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 20_000
    over = json.dumps(send_message([{"text": "x" * 20_500}])).encode()
    under = json.dumps(send_message([{"text": "oi " * 5_000}])).encode()
    assert len(over) > 20_000 > len(under)
    # when each is sent to every transport
    a2a_over, mcp_over = a2a_post(server, over), mcp_post(server, over)
    rest_over = httpx.post(
        f"{server.base_url}/bcp/v1/catalog/search",
        content=over,
        timeout=30,
        headers={"content-type": "application/json", "BCP-Agent": SEED_HEADERS["BCP-Agent"]},
    )
    a2a_under = a2a_post(server, under)
    # then all three refuse the larger body and A2A still answers the smaller one
    too_large = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": (message := "Invalid Request: o corpo passa do limite de 20000 bytes."),
            "data": {"code": "request_too_large", "content": message},
        },
    }
    assert (a2a_over.status_code, a2a_over.json()) == (413, too_large)
    assert (mcp_over.status_code, mcp_over.json()) == (413, too_large)
    assert (rest_over.status_code, rest_over.json()["code"]) == (400, "request_too_large")
    assert a2a_under.status_code == 200 and "result" in a2a_under.json(), a2a_under.text


@pytest.mark.postgres
@pytest.mark.e2e
def test_chunked_body_without_length_is_capped_while_reading(server: LiveServer, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 20_000

    def chunks() -> Any:
        for _ in range(100):
            yield b" " * 1_000

    response = httpx.post(server.a2a_url, content=chunks(), headers=SEED_HEADERS, timeout=30)
    assert response.status_code == 413
    assert response.json()["error"]["message"] == "Invalid Request: o corpo passa do limite de 20000 bytes."


@pytest.mark.django_db
def test_rest_speaks_json_in_utf8_both_ways_bcp_rest_02(client: Client, headers: dict[str, str]) -> None:
    """Bodies are JSON in UTF-8 (BCP §13.1): a buyer's accented name arrives whole and comes back in UTF-8 under
    `application/json; charset=utf-8`; the same body in Latin-1 is not UTF-8, so it is refused and nothing is
    stored."""
    text = '{"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "buyer": {"first_name": "João"}}'
    key = {**headers, "Idempotency-Key": str(uuid.uuid4())}

    latin = call(client, "post", "/checkout-sessions", key, text.encode("latin-1"))
    assert (latin.status_code, latin.json()["code"], Checkout.objects.count()) == (400, "invalid_request", 0)
    created = call(client, "post", "/checkout-sessions", {**key, "Idempotency-Key": str(uuid.uuid4())}, text.encode())

    assert (created.status_code, created["Content-Type"]) == (201, "application/json; charset=utf-8")
    assert json.loads(created.content.decode("utf-8"))["buyer"]["first_name"] == "João"
    assert latin["Content-Type"] == "application/json; charset=utf-8"
