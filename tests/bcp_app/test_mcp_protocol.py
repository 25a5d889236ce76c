"""MCP protocol surface of `/bcp/mcp`: initialize on both protocol eras, `tools/list` contracts, raw
JSON-RPC failures with their HTTP statuses (never a 500, never a change), Host/Origin checks.
BCP-MCP-01/02/05/07, BCP-ERR-04/05.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bcp_app.transports.mcp.tools import all_tools
from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.test_mcp_helpers import mcp_client, raw_post, run, tools_call

# Shared fixtures (pytest finds them by name in this module).
live_mcp = test_mcp_helpers.live_mcp

# The database for every test: initialize, tools/list and discover name the store of "Dados da loja".
pytestmark = [pytest.mark.postgres, pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

BCP_TOOLS = {
    "create_checkout",
    "get_checkout",
    "update_checkout",
    "complete_checkout",
    "cancel_checkout",
    "get_order",
    "cancel_order",  # extension order_actions (issue 35)
    "request_return",
    "search_catalog",
    "lookup_catalog",
    "get_product",
    "policies.search",
    "create_cart",
    "get_cart",
    "update_cart",
    "cancel_cart",
    "create_subscription",
    "get_subscription",
    "cancel_subscription",
}
TYPED_TOOLS = {"catalogue.list", "product.detail", "inventory.check", "order.intent", "order.status"}


def list_tools(url: str, mode: str) -> tuple[str, Any, list[Any]]:
    async def go() -> tuple[str, Any, list[Any]]:
        async with mcp_client(url, mode=mode) as client:
            tools = await client.list_tools()
            return client.protocol_version, client.server_info, tools.tools

    return run(go)


def undescribed(schema: Any, where: str = "$") -> list[str]:
    """Every property (recursively, through $defs) that has no description."""
    missing: list[str] = []
    if isinstance(schema, dict):
        for name, prop in (schema.get("properties") or {}).items():
            if isinstance(prop, dict) and "description" not in prop:
                missing.append(f"{where}.{name}")
        for key, value in schema.items():
            missing += undescribed(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            missing += undescribed(value, f"{where}[{index}]")
    return missing


def _meta_required(schema: dict[str, Any]) -> list[str]:
    if "meta" not in schema.get("properties", {}):
        return []
    return schema["$defs"][schema["properties"]["meta"]["$ref"].rsplit("/", 1)[-1]]["required"]


def test_readme_lists_every_tool_and_the_ones_that_need_an_idempotency_key() -> None:
    """The README's "Tool names are a release commitment" is what tools/list publishes: the BCP tools, the typed
    catalogue tools, and which tools require meta["idempotency-key"] (it said "complete and cancel", while
    cancel_order and request_return require it too)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("**Tool names are a release commitment.**", 1)[1].split("\n- Versioning", 1)[0]
    bcp, typed = section.split("\n- Typed catalogue tools", 1)
    keyed_text, listed = bcp.split("):", 1)
    tools = {tool.name: tool for tool in all_tools()}
    assert set(re.findall(r"`([a-z_.]+)`", listed)) == BCP_TOOLS
    assert set(re.findall(r"`([a-z_]+\.[a-z_]+)`", typed.split("Answers are", 1)[0])) == TYPED_TOOLS
    assert set(tools) == BCP_TOOLS | TYPED_TOOLS
    keyed = {name for name, tool in tools.items() if "idempotency-key" in _meta_required(tool.input_schema)}
    assert set(re.findall(r"`([a-z_.]+)`", keyed_text)) == keyed


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_initialize_and_tools_list_on_both_protocol_eras_bcp_mcp_01(live_mcp, mode: str, version: str) -> None:
    """BCP-CAT-08: with lookup advertised, `lookup_catalog` and `get_product` are listed."""
    # when a 2026-07-28 client (discover) and a handshake-era client (initialize) connect
    negotiated, server_info, tools = list_tools(live_mcp.mcp_url, mode)
    # then both see the same tools
    assert negotiated == version
    assert server_info.name == "loja-bcp"
    assert {tool.name for tool in tools} == BCP_TOOLS | TYPED_TOOLS


def test_tools_list_publishes_strict_described_schemas_bcp_mcp_02(live_mcp) -> None:
    # when
    _, _, tools = list_tools(live_mcp.mcp_url, "auto")
    by_name = {tool.name: tool for tool in tools}
    # then every tool, argument and output field is described, arguments are closed, outputs declared
    for tool in tools:
        assert tool.description, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False, tool.name
        assert undescribed(tool.input_schema) == [], tool.name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", tool.name
    for name in TYPED_TOOLS:
        assert undescribed(by_name[name].output_schema) == [], name
    # BCP tools require meta (with ucp-agent); complete/cancel also require the idempotency key
    for name in BCP_TOOLS:
        schema = by_name[name].input_schema
        assert "meta" in schema["required"], name
        meta = schema["$defs"][schema["properties"]["meta"]["$ref"].rsplit("/", 1)[-1]]
        keyed = name in ("complete_checkout", "cancel_checkout", "cancel_order", "request_return")
        expected = ["ucp-agent", "idempotency-key"] if keyed else ["ucp-agent"]
        assert meta["required"] == expected, name
        # what an agent reads (QA walk): each tool that requires the key is named where the key is described
        assert not keyed or name in meta["properties"]["idempotency-key"]["description"], name
    # complete_checkout said "(Pix)" only, though the card (with parcelamento) and boleto complete through it too
    assert "cartão" in by_name["complete_checkout"].description
    assert by_name["catalogue.list"].input_schema["properties"]["per_page"] == {
        "default": 12,
        "description": "Resultados por página, de 1 a 50 (padrão 12).",
        "maximum": 50,
        "minimum": 1,
        "type": "integer",
    }


def test_malformed_json_is_parse_error_400_bcp_err_05(live_mcp) -> None:
    # when
    response = raw_post(live_mcp.mcp_url, b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {')
    # then
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": 123}, "query"),
        ({"page": True}, "page"),
        ({"query": "café", "categria": "cafes"}, "categria"),
        ({"in_stock": "yes"}, "in_stock"),
    ],
)
def test_wrong_types_and_extra_keys_are_invalid_params_400(
    live_mcp,
    transactional_db,
    arguments: dict[str, Any],
    field: str,
) -> None:
    # when
    response = raw_post(live_mcp.mcp_url, tools_call("catalogue.list", arguments, request_id=7))
    # then
    body = response.json()
    assert response.status_code == 400
    assert body["id"] == 7
    assert body["error"]["code"] == -32602
    assert body["error"]["data"]["code"] == "invalid_request"
    assert list(body["error"]["data"]["fields"]) == [f"$.{field}"]


def test_unknown_tool_and_unknown_method_never_500(live_mcp, transactional_db) -> None:
    # when
    tool = raw_post(live_mcp.mcp_url, tools_call("catalog.list", {}))
    method = raw_post(live_mcp.mcp_url, {"jsonrpc": "2.0", "id": 2, "method": "tools/destroy", "params": {}})
    not_object = raw_post(live_mcp.mcp_url, tools_call("catalogue.list", ["query"]))
    # then
    assert (tool.status_code, tool.json()["error"]["code"]) == (400, -32602)
    assert "catalog.list" in tool.json()["error"]["message"]
    assert (method.status_code, method.json()["error"]["code"]) == (404, -32601)
    assert not_object.status_code == 400
    assert not_object.json()["error"]["code"] == -32602


def test_bad_bcp_arguments_change_nothing_bcp_err_05(live_mcp, transactional_db) -> None:
    # given
    from shop.models import Checkout

    meta = {"ucp-agent": {"profile": "https://agente.example/.well-known/bcp"}}
    # when create_checkout gets a wrong type, an extra key, or no meta
    responses = [
        raw_post(live_mcp.mcp_url, tools_call("create_checkout", {"meta": meta, "checkout": {"line_items": "x"}})),
        raw_post(live_mcp.mcp_url, tools_call("create_checkout", {"meta": meta, "checkout": {}, "extra": 1})),
        raw_post(live_mcp.mcp_url, tools_call("create_checkout", {"checkout": {}})),
    ]
    # then JSON-RPC errors with §5.4 statuses, and no checkout exists
    assert [(r.status_code, r.json()["error"]["code"]) for r in responses] == [
        (400, -32602),
        (400, -32602),
        (400, -32001),
    ]
    assert Checkout.objects.count() == 0


def test_modern_revision_request_without_handshake(live_mcp, transactional_db) -> None:
    """A 2026-07-28 request served without initialize; its argument error is the shared Portuguese text."""
    # given a self-contained 2026-07-28 request (no initialize, envelope in _meta)
    body = tools_call("catalogue.list", {"per_page": 0})
    body["params"]["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    # when
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "catalogue.list"}
    response = raw_post(live_mcp.mcp_url, body, headers=headers)
    # then it is served directly, with the same error and status
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602
    assert response.json()["error"]["data"]["fields"] == {"$.per_page": "deve ser maior ou igual a 1"}


def test_host_and_origin_are_checked(live_mcp, settings) -> None:
    # given the defaults (loopback hosts, no cross-origin browser callers)
    body = tools_call("catalogue.list", {})
    # when
    bad_host = raw_post(live_mcp.mcp_url, body, headers={"host": "evil.example"})
    bad_origin = raw_post(live_mcp.mcp_url, body, headers={"origin": "https://evil.example"})
    # then DNS-rebinding and cross-site requests are refused before any tool runs
    assert bad_host.status_code == 421
    assert bad_origin.status_code == 403


def test_initialize_result_over_raw_http(live_mcp) -> None:
    # when a handshake-era client initializes by hand
    response = raw_post(
        live_mcp.mcp_url,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    # then a JSON (not SSE) answer with the tools capability and no session id (stateless)
    result = response.json()["result"]
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in response.headers
    assert result["protocolVersion"] == "2025-06-18"
    assert "tools" in result["capabilities"]
    assert json.dumps(result["serverInfo"]).count("loja-bcp") == 1


def test_server_title_and_instructions_name_the_store_of_dados_da_loja_bcp_mcp_01(live_mcp) -> None:
    """Closing note 45: title and instructions said settings.SHOP_NAME ("Loja Exemplo") after the merchant
    renamed the store in the admin. Both eras name it as it is now, a save included (no restart)."""
    from shop.models import StoreSettings

    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    store = StoreSettings.objects.create(trade_name="Ateliê Ipê")
    result = raw_post(live_mcp.mcp_url, initialize).json()["result"]
    _, modern_info, _ = list_tools(live_mcp.mcp_url, "auto")
    store.trade_name = "Ateliê Ipê & Filhos"
    store.save()
    renamed = raw_post(live_mcp.mcp_url, initialize).json()["result"]

    assert (result["serverInfo"]["name"], result["serverInfo"]["title"]) == ("loja-bcp", "Ateliê Ipê (BCP)")
    assert result["instructions"].startswith("Ateliê Ipê: Loja brasileira com BCP.")
    assert modern_info.title == "Ateliê Ipê (BCP)"
    assert renamed["serverInfo"]["title"] == "Ateliê Ipê & Filhos (BCP)"
    assert renamed["instructions"].startswith("Ateliê Ipê & Filhos: ")


def test_tools_carry_read_only_hints(live_mcp) -> None:
    # when
    _, _, tools = list_tools(live_mcp.mcp_url, "auto")
    # then reads are marked read-only and writes are not
    read_only = {tool.name for tool in tools if tool.annotations and tool.annotations.read_only_hint}
    assert read_only == {
        "get_checkout",
        "get_order",
        "search_catalog",
        "lookup_catalog",
        "get_product",
        "policies.search",
        "get_cart",
        "get_subscription",
        "catalogue.list",
        "product.detail",
        "inventory.check",
        "order.status",
    }


def test_concurrent_calls_leak_no_database_connections(live_mcp, transactional_db) -> None:
    # given
    import anyio
    import httpx
    from django.conf import settings
    from django.db import connection

    from tests.bcp_app.test_mcp_helpers import make_product

    make_product()
    body = json.dumps(tools_call("catalogue.list", {"query": "café"})).encode()
    headers = {"content-type": "application/json", "accept": "application/json", "mcp-protocol-version": "2025-11-25"}

    async def burst() -> list[int]:
        async with httpx.AsyncClient(timeout=60) as client:
            statuses: list[int] = []

            async def one() -> None:
                statuses.append((await client.post(live_mcp.mcp_url, content=body, headers=headers)).status_code)

            async with anyio.create_task_group() as group:
                for _ in range(40):
                    group.start_soon(one)
            return statuses

    # when 40 calls run at once (each request gets its own ORM thread)
    statuses = run(burst)
    # then all succeed and the server holds no more connections than its pool allows
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        (open_connections,) = cursor.fetchone()
    assert statuses == [200] * 40
    assert open_connections <= settings.DATABASES["default"]["OPTIONS"]["pool"]["max_size"]


def test_rate_limit_uses_the_envelope_for_typed_tools_and_429_for_bcp(
    live_mcp,
    transactional_db,
    settings,
) -> None:
    # given a limit of 2 calls per hour for a caller identified by its (fresh) API key (an hour, not a minute: the
    # windows are fixed, and on a loaded CI machine four calls could straddle a minute's end)
    from bcp_app.service.platforms import platform_create

    settings.BCP_RATE_LIMITS = {**settings.BCP_RATE_LIMITS, "read": ("2/hour", "2/hour")}
    headers = {"authorization": f"Bearer {platform_create(name='Apressada').api_key}"}
    typed = tools_call("catalogue.list", {"query": "café"})
    bcp = tools_call("get_order", {"meta": {"ucp-agent": {"profile": "https://agente.example/p"}}, "id": "order_x"})
    # when a third and a fourth call arrive within the hour
    first = raw_post(live_mcp.mcp_url, typed, headers=headers)
    raw_post(live_mcp.mcp_url, typed, headers=headers)
    limited_typed = raw_post(live_mcp.mcp_url, typed, headers=headers)
    limited_bcp = raw_post(live_mcp.mcp_url, bcp, headers=headers)
    # then typed tools answer the seed's envelope, BCP tools the §5.4 protocol error with Retry-After
    assert first.json()["result"]["structuredContent"]["status"] == "ok"
    envelope = limited_typed.json()["result"]["structuredContent"]
    assert envelope["status"] == "error"
    assert envelope["error"]["code"] == "rate_limited"
    assert 1 <= envelope["error"]["retry_after_seconds"] <= 3600
    assert limited_bcp.status_code == 429
    assert limited_bcp.json()["error"]["code"] == -32000
    assert limited_bcp.json()["error"]["data"]["code"] == "rate_limited"
    assert limited_bcp.headers["retry-after"] == str(limited_bcp.json()["error"]["data"]["retry_after"])


def test_a_second_server_in_the_process_runs_its_own_session_manager(live_mcp, transactional_db) -> None:
    # given another uvicorn (own thread, own event loop) serving the same ASGI app objects
    from tests.bcp_app.test_mcp_helpers import LiveServer

    second = LiveServer()
    second.start()
    try:
        # when both answer a handshake-era call (the path that uses the manager's task group)
        answers = [
            raw_post(server.mcp_url, tools_call("catalogue.list", {"per_page": 0})) for server in (live_mcp, second)
        ]
    finally:
        second.stop()
    # and the first still answers after the second one shut its manager down
    answers.append(raw_post(live_mcp.mcp_url, tools_call("catalogue.list", {"per_page": 0})))
    # then each server answered through its own manager
    assert [(r.status_code, r.json()["error"]["code"]) for r in answers] == [(400, -32602)] * 3
