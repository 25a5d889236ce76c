"""MCP transport edges (issue 13 §15): `GET /bcp/mcp` in stateless mode, and request ids MCP forbids.

Before: a GET opened an SSE stream that stayed idle for ever, and a request whose id was null, a
float or an object was taken for a notification and answered with an empty 202. BCP-MCP-07.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.test_mcp_helpers import raw_post

live_mcp = test_mcp_helpers.live_mcp

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405_in_stateless_mode(live_mcp: Any, method: str) -> None:
    response = httpx.request(method, live_mcp.mcp_url, headers={"accept": "text/event-stream"}, timeout=10)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["error"] == {"code": -32600, "message": "Method Not Allowed: use POST (stateless server)."}


@pytest.mark.parametrize(
    ("request_id", "kind"),
    [(None, "null"), (1.5, "número decimal"), ({"a": 1}, "objeto"), ([1], "lista"), (True, "booleano")],
)
def test_request_ids_mcp_forbids_are_invalid_request(live_mcp: Any, request_id: Any, kind: str) -> None:
    response = raw_post(live_mcp.mcp_url, {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": f"Invalid Request: o id de uma requisição MCP é texto ou inteiro (recebido: {kind}).",
        },
    }


@pytest.mark.parametrize("request_id", ["abc", 7])
def test_string_and_integer_ids_still_work(live_mcp: Any, transactional_db: None, request_id: Any) -> None:
    # (the database: tools/list reads the store's name for the server's identity)
    response = raw_post(live_mcp.mcp_url, {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})
    assert response.status_code == 200
    assert response.json()["id"] == request_id


def test_malformed_requests_are_json_rpc_errors_in_portuguese_naming_the_member(live_mcp: Any) -> None:
    """Agent QA walk: the SDK answered a wrong Content-Type with a plain-text "Invalid Content-Type header", a batch
    or list `params` with a pydantic dump, and `arguments` not an object with "Invalid request parameters"
    (BCP-ERR-05: bad JSON/schema → -32600/-32602, a specific message)."""
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "get_order", "arguments": {}}}
    cases = [
        (raw_post(live_mcp.mcp_url, call, headers={"content-type": "text/plain"}), None, -32600, "Content-Type"),
        (raw_post(live_mcp.mcp_url, [call, {**call, "id": 10}]), None, -32600, "lotes"),
        (raw_post(live_mcp.mcp_url, {**call, "params": [1]}), 9, -32602, "params deve ser um objeto"),
        (raw_post(live_mcp.mcp_url, {**call, "params": {"name": 5}}), 9, -32602, "params.name"),
        (
            raw_post(live_mcp.mcp_url, {**call, "params": {"name": "get_order", "arguments": [1]}}),
            9,
            -32602,
            "params.arguments deve ser um objeto",
        ),
    ]
    for response, request_id, code, words in cases:
        assert response.status_code == 400
        body = response.json()
        assert (body["id"], body["error"]["code"]) == (request_id, code)
        assert words in body["error"]["message"], body
    # a well-formed call still reaches the tool (its own refusal: no meta)
    assert raw_post(live_mcp.mcp_url, call).json()["id"] == 9
