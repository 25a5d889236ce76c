"""Issue 34: `get_order` over MCP 2026-07-28 is answered without the SDK's per-request machinery
(`bcp_app/transports/mcp/server.py:_fast_call`). The same requests are sent to two live servers, one with the
fast path and one without it (every call through the SDK), and the answers must be the same bytes: status,
content type and body, for a result, an error inside the result, a protocol error and requests the fast path
leaves to the SDK. The official client reads the same result from both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from bcp_app.transports.mcp import server as mcp_server
from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.live import LiveServer
from tests.bcp_app.test_mcp_get_order import place_seed_order
from tests.bcp_app.test_mcp_helpers import Agent, call

pytestmark = pytest.mark.django_db(transaction=True)

profile_host = test_mcp_helpers.profile_host
agent = test_mcp_helpers.agent
MODERN = "2026-07-28"


def _server(fast: bool) -> LiveServer:
    from config.asgi import OneHopHandler, PathRouter

    app = mcp_server.McpAsgiApp(fast_tools=mcp_server.FAST_TOOLS if fast else frozenset())
    return LiveServer(PathRouter(OneHopHandler(), {"/bcp/mcp": app}), lifespan="on")


@pytest.fixture
def servers(django_db_blocker: Any) -> Iterator[tuple[str, str]]:
    """(fast, SDK-only) MCP URLs, each on a uvicorn of its own serving `/bcp/mcp` the same way."""
    with django_db_blocker.unblock():
        fast, sdk = _server(True).start(), _server(False).start()
    try:
        yield f"{fast.base_url}/bcp/mcp", f"{sdk.base_url}/bcp/mcp"
    finally:
        fast.stop()
        sdk.stop()


def _body(arguments: dict[str, Any], request_id: Any = 7, name: str = "get_order") -> dict[str, Any]:
    meta = {
        PROTOCOL_VERSION_META_KEY: MODERN,
        CLIENT_CAPABILITIES_META_KEY: {},
        CLIENT_INFO_META_KEY: {"name": "teste", "version": "1.0"},
    }
    params = {"name": name, "arguments": arguments, "_meta": meta}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _post(url: str, body: dict[str, Any], headers: dict[str, str], **extra: str) -> httpx.Response:
    """A 2026-07-28 `tools/call` as the official client sends it (routing headers, JSON or SSE accepted)."""
    sent = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": body["params"]["name"],
        **headers,
        **extra,
    }
    return httpx.post(url, content=json.dumps(body).encode(), headers=sent, timeout=30)


def _same(fast_url: str, sdk_url: str, body: dict[str, Any], headers: dict[str, str], **extra: str) -> httpx.Response:
    fast, sdk = _post(fast_url, body, headers, **extra), _post(sdk_url, body, headers, **extra)
    assert (fast.status_code, fast.headers.get("content-type"), fast.content) == (
        sdk.status_code,
        sdk.headers.get("content-type"),
        sdk.content,
    )
    for name in ("retry-after", "www-authenticate"):
        assert fast.headers.get(name) == sdk.headers.get(name)
    return fast


def test_get_order_is_the_sdks_bytes_and_takes_the_fast_path(servers: tuple[str, str], agent: Agent) -> None:
    # given an order of the platform, and no result shaped yet
    order = place_seed_order(agent.platform_id)
    mcp_server._wire_results.clear()
    # when both servers answer the same get_order (a text id, then an integer id; a non-ASCII order body)
    for request_id in ("a-1", 7):
        reply = _same(*servers, _body({"meta": agent.meta(), "id": order.public_id}, request_id), agent.headers)
    # then the bytes are equal, the result is the order, and the fast server shaped it once
    assert reply.status_code == 200
    assert reply.json()["result"]["structuredContent"]["id"] == order.public_id
    assert len(mcp_server._wire_results) == 1


def test_the_server_info_stamp_follows_a_rename_on_both_paths(servers: tuple[str, str], agent: Agent) -> None:
    """Closing note 45: the MCP server's title said settings.SHOP_NAME after the merchant renamed the store in
    "Dados da loja". A 2026-07-28 result carries the server's identity (`_meta` serverInfo); both paths name
    the store as it is now, and the fast path's remembered bytes do not keep the old name."""
    from mcp_types import SERVER_INFO_META_KEY

    from shop.models import StoreSettings

    order = place_seed_order(agent.platform_id)
    store = StoreSettings.objects.create(trade_name="Ateliê Ipê")
    body = _body({"meta": agent.meta(), "id": order.public_id})
    first = _same(*servers, body, agent.headers).json()["result"]["_meta"][SERVER_INFO_META_KEY]["title"]
    store.trade_name = "Ateliê Ipê & Filhos"
    store.save()
    renamed = _same(*servers, body, agent.headers).json()["result"]["_meta"][SERVER_INFO_META_KEY]["title"]

    assert (first, renamed) == ("Ateliê Ipê (BCP)", "Ateliê Ipê & Filhos (BCP)")


def test_errors_and_refused_requests_are_the_sdks_bytes(servers: tuple[str, str], agent: Agent) -> None:
    order = place_seed_order(agent.platform_id)
    cases: list[tuple[dict[str, Any], dict[str, str], dict[str, str]]] = [
        # an error inside the result (not_found), 200
        (_body({"meta": agent.meta(), "id": "order_nao_existe"}), agent.headers, {}),
        # a protocol error (no ucp-agent): JSON-RPC error with BCP's HTTP status
        (_body({"id": order.public_id}), agent.headers, {}),
        # an invalid key: unauthenticated, 401 + WWW-Authenticate
        (_body({"meta": agent.meta(), "id": order.public_id}), {"Authorization": "Bearer errada"}, {}),
        # arguments of the wrong type: the SDK's own invalid params
        (_body({"meta": agent.meta(), "id": 5}), agent.headers, {}),
        # left to the SDK: a routing header that disagrees with the body, JSON not accepted, a wrong content type
        (_body({"meta": agent.meta(), "id": order.public_id}), agent.headers, {"mcp-name": "get_checkout"}),
        (_body({"meta": agent.meta(), "id": order.public_id}), agent.headers, {"accept": "text/event-stream"}),
        (_body({"meta": agent.meta(), "id": order.public_id}), agent.headers, {"content-type": "text/plain"}),
        # a request without the per-request envelope
        ({**_body({"meta": agent.meta(), "id": order.public_id}), "params": {"name": "get_order"}}, agent.headers, {}),
    ]
    for body, headers, extra in cases:
        _same(*servers, body, headers, **extra)


def test_the_official_client_reads_the_same_result_from_both(servers: tuple[str, str], agent: Agent) -> None:
    order = place_seed_order(agent.platform_id)
    arguments = {"meta": agent.meta(), "id": order.public_id}
    fast, sdk = (call(url, "get_order", arguments, headers=agent.headers) for url in servers)
    assert fast.structured_content == sdk.structured_content
    assert fast.structured_content["id"] == order.public_id
    assert [block.text for block in fast.content] == [block.text for block in sdk.content]
    assert fast.is_error is sdk.is_error is False


def _same_raw(fast_url: str, sdk_url: str, content: bytes, headers: dict[str, str]) -> httpx.Response:
    """`_same` for a body sent as given, with exactly `headers` (so a request may lack any of them)."""
    fast, sdk = (httpx.post(url, content=content, headers=headers, timeout=30) for url in (fast_url, sdk_url))
    assert (fast.status_code, fast.headers.get("content-type"), fast.content) == (
        sdk.status_code,
        sdk.headers.get("content-type"),
        sdk.content,
    )
    for name in ("retry-after", "www-authenticate", "allow"):
        assert fast.headers.get(name) == sdk.headers.get(name)
    return fast


def _routing(agent: Agent) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "get_order",
        **agent.headers,
    }


def test_another_platforms_order_is_the_sdks_bytes(servers: tuple[str, str], agent: Agent) -> None:
    # given an order placed by some other platform
    other = place_seed_order("plat_someoneelse")
    # when both servers answer our agent's get_order of it, then the bytes are equal (unauthorized, in the result)
    reply = _same_raw(
        *servers, json.dumps(_body({"meta": agent.meta(), "id": other.public_id})).encode(), _routing(agent)
    )
    assert reply.json()["result"]["structuredContent"]["messages"][0]["code"] == "unauthorized"


def test_requests_at_the_edges_are_the_sdks_bytes(servers: tuple[str, str], agent: Agent) -> None:
    # given an order of the platform, and requests around a valid get_order of it
    order = place_seed_order(agent.platform_id)
    valid = _body({"meta": agent.meta(), "id": order.public_id})
    routing = _routing(agent)
    without_version = {name: value for name, value in routing.items() if name != "mcp-protocol-version"}
    raw_cases: list[tuple[bytes, dict[str, str]]] = [
        # the protocol version header missing, unknown, or an older revision (left to the SDK)
        (json.dumps(valid).encode(), without_version),
        (json.dumps(valid).encode(), {**routing, "mcp-protocol-version": "1999-01-01"}),
        (json.dumps(valid).encode(), {**routing, "mcp-protocol-version": "2025-06-18"}),
        # a foreign Origin and a Host the server does not serve
        (json.dumps(valid).encode(), {**routing, "origin": "https://evil.example"}),
        (json.dumps(valid).encode(), {**routing, "host": "evil.example"}),
        # not JSON, a batch, a notification (no id), a null id, a JSON-RPC version that is not 2.0
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"', routing),
        (json.dumps([valid, {**valid, "id": 8}]).encode(), routing),
        (json.dumps({key: value for key, value in valid.items() if key != "id"}).encode(), routing),
        (json.dumps({**valid, "id": None}).encode(), routing),
        (json.dumps({**valid, "jsonrpc": "1.0"}).encode(), routing),
        # a member JSON-RPC does not define, and arguments that are not an object
        (json.dumps({**valid, "extra": 1}).encode(), routing),
        (json.dumps({**valid, "params": {**valid["params"], "arguments": [1]}}).encode(), routing),
        # a tool the fast path does not serve, and one that does not exist
        (json.dumps(_body({"meta": agent.meta(), "id": "checkout_x"}, name="get_checkout")).encode(), routing),
        (json.dumps(_body({"meta": agent.meta()}, name="nao_existe")).encode(), {**routing, "mcp-name": "nao_existe"}),
        # no API key: unauthorized inside the result (Get Order needs the platform's key)
        (json.dumps(valid).encode(), {k: v for k, v in routing.items() if k != "Authorization"}),
    ]
    # when both servers answer each, then the bytes are equal
    for content, headers in raw_cases:
        _same_raw(*servers, content, headers)


def test_only_a_schema_naming_x_mcp_header_has_its_param_headers_checked() -> None:
    # given the fast tool as served, and the same tool with a property mirrored into an Mcp-Param-* header
    from dataclasses import replace

    from bcp_app.transports.mcp.tools import bcp_tools

    (tool,) = bcp_tools({"get_order"})
    schema = json.loads(json.dumps(tool.input_schema))
    schema["properties"]["id"]["x-mcp-header"] = "Order-Id"
    annotated = replace(tool, name="annotated", input_schema=schema)
    # when the fast path reads which of them can disagree with their headers
    checked = mcp_server._param_headers({tool.name: tool, annotated.name: annotated})
    # then only the annotated one is checked (the SDK finds no annotated property in the other)
    assert checked == frozenset({"annotated"})


def test_params_that_pass_the_sdks_surface_check_are_remembered_those_refused_are_not(agent: Agent) -> None:
    # given a get_order's params as the official client sends them, the same with a name that is not text, and the
    # same with a lone surrogate in an argument (valid, but not bytes a process can remember them by)
    valid = _body({"meta": agent.meta(), "id": "order_abc"})["params"]
    refused = {**valid, "name": 5}
    surrogate = _body({"meta": agent.meta(), "id": "order_\ud800"})["params"]
    mcp_server._valid_surfaces.clear()
    # when the fast path checks each twice
    outcomes = [mcp_server._surface_valid(MODERN, params) for params in (valid, valid, refused, refused)]
    outcomes += [mcp_server._surface_valid(MODERN, surrogate) for _ in range(2)]
    # then the valid params pass and are remembered once, the refused ones are refused both times and never
    # remembered (the SDK answers them), and the surrogate's pass without being remembered
    assert outcomes == [True, True, False, False, True, True]
    assert len(mcp_server._valid_surfaces) == 1
