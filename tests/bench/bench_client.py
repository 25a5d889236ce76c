"""One benchmark client process (run by tests/bench/live_proc.run_clients; imports no Django).

`python -m tests.bench.bench_client KIND CALLS`, the job as one JSON line on stdin. It connects and makes
one warm-up call, prints `ready`, waits for `go`, makes CALLS calls and prints {"start", "end", "ids", "cpu"}
(CLOCK_MONOTONIC is one clock for every process of the machine). KIND:
- `mcp`: `tools/call` of job["tool"] through the official `mcp` client (streamable HTTP, one session);
- `get`: GET job["url"], or job["urls"][index] (one order per client), with job["headers"] if any;
- `post`: POST job["bodies"][index] to job["url"] (a bare JSON view);
- `page`: GET job["url"] (an HTML page), with job["headers"] (a session cookie) if any; its id is the page's size;
- `a2a`: `SendMessage` of job["data"] in conversation job["contexts"][index] through the official a2a-sdk
  client (agent card resolved once from job["base_url"], non-streaming), a fresh messageId per call; its id is
  that of the data part job["key"] (default `a2a.bcp.checkout`);
- `mcp_raw`, `a2a_raw`: the same calls as `mcp` and `a2a` as a light load generator sends them: one keep-alive
  httpx connection POSTing the bytes and headers the official clients send for a call (captured from them:
  `raw_mcp_request`, `raw_a2a_request`; `a2a_raw` POSTs to job["url"], the JSON-RPC endpoint the agent card
  names), the answer parsed with `json`; no SDK on the client side;
- `shop_flow`: one BCP REST purchase create → update → complete (card sandbox) of job["skus"][index] against
  job["base_url"] with job["headers"], shipping to job["address"]; its id is the placed order's;
- `bare_flow`: the same purchase through the bare views of tests/bcp_app/bench_urls.py (minimal SQL).
The mcp client and a2a-sdk are imported only by their kinds, so the other clients start quickly.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from typing import Any

import anyio
import httpx

CARD = {
    "id": "instr_card",
    "handler_id": "gpay",
    "type": "card",
    "selected": True,
    "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"},
}
BUYER = {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"}
COMPLETE = {"payment": {"instruments": [CARD]}}


def create_body(sku: str) -> dict[str, Any]:
    """The shop flow's bodies, shared with the bench's statement count (Django's test client)."""
    return {"line_items": [{"item": {"id": sku}, "quantity": 1}]}


def update_body(created: dict[str, Any], sku: str, address: dict[str, Any]) -> dict[str, Any]:
    return {
        "line_items": [{"id": created["line_items"][0]["id"], "item": {"id": sku}, "quantity": 1}],
        "buyer": BUYER,
        "fulfillment": {
            "methods": [{"type": "shipping", "destinations": [address], "groups": [{"selected_option_id": "pac"}]}]
        },
        "payment": {"instruments": [CARD]},
    }


async def shop_flow(client: httpx.AsyncClient, sku: str, address: dict[str, Any]) -> str:
    created = (await client.post("/bcp/v1/checkout-sessions", json=create_body(sku))).json()
    updated = (
        await client.put(f"/bcp/v1/checkout-sessions/{created['id']}", json=update_body(created, sku, address))
    ).json()
    assert updated["status"] == "ready_for_complete", updated.get("messages")
    done = (
        await client.post(
            f"/bcp/v1/checkout-sessions/{created['id']}/complete",
            json=COMPLETE,
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )
    ).json()
    assert done.get("status") == "completed", done
    return str(done["order"]["id"])


async def bare_flow(client: httpx.AsyncClient, sku: str, address: dict[str, Any]) -> str:
    created = (await client.post("/_bench/checkouts", json={"sku": sku, "quantity": 1})).json()
    (
        await client.put(f"/_bench/checkouts/{created['id']}", json={"buyer": BUYER, "address": address})
    ).raise_for_status()
    done = (await client.post(f"/_bench/checkouts/{created['id']}/complete", json={})).json()
    assert done["status"] == "completed", done
    return str(done["order"]["id"])


async def flow_calls(job: dict[str, Any], calls: int, kind: str) -> dict[str, Any]:
    flow = shop_flow if kind == "shop_flow" else bare_flow
    async with httpx.AsyncClient(base_url=job["base_url"], headers=job.get("headers", {}), timeout=120) as client:

        async def one() -> str:
            return await flow(client, job["skus"][job["index"]], job["address"])

        await one()
        return await released(one, calls)


async def mcp_calls(job: dict[str, Any], calls: int) -> dict[str, Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers=job["headers"], timeout=120)
    async with Client(streamable_http_client(job["url"], http_client=http), cache=None) as client:

        async def one() -> str:
            result = await client.call_tool(job["tool"], job["arguments"])
            assert not result.is_error, result
            return str(result.structured_content["id"])

        await one()
        return await released(one, calls)


async def http_calls(job: dict[str, Any], calls: int, method: str) -> dict[str, Any]:
    async with httpx.AsyncClient(headers=job.get("headers", {}), timeout=120) as client:

        async def one() -> str:
            if method == "page":
                response = await client.get(job["url"])
                assert response.status_code == 200, response.text[:300]
                return str(len(response.content))
            if method == "get":
                response = await client.get(job["urls"][job["index"]] if "urls" in job else job["url"])
            else:
                response = await client.post(job["url"], json=job["bodies"][job["index"]])
            assert response.status_code == 200, response.text[:300]
            return str(response.json()["id"])

        await one()
        return await released(one, calls)


async def a2a_calls(job: dict[str, Any], calls: int) -> dict[str, Any]:
    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest
    from google.protobuf import struct_pb2
    from google.protobuf.json_format import MessageToDict, ParseDict

    key = job.get("key", "a2a.bcp.checkout")
    async with httpx.AsyncClient(headers=job["headers"], timeout=120) as http:
        client = await create_client(job["base_url"], client_config=ClientConfig(streaming=False, httpx_client=http))

        async def one() -> str:
            message = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                context_id=job["contexts"][job["index"]],
                extensions=job["extensions"],
            )
            message.parts.append(Part(data=ParseDict(job["data"], struct_pb2.Value()), media_type="application/json"))
            async for event in client.send_message(SendMessageRequest(message=message)):
                for part in event.message.parts:
                    value = MessageToDict(part.data) if part.HasField("data") else None
                    if isinstance(value, dict) and key in value:
                        return str(value[key]["id"])
                raise AssertionError(f"no {key} in {event}")
            raise AssertionError("no answer")

        await one()
        return await released(one, calls)


MCP_VERSION = "2026-07-28"  # the revision the official client negotiates with the shop (server/discover)
MCP_CLIENT_META = {
    "io.modelcontextprotocol/protocolVersion": MCP_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def raw_mcp_request(tool: str, arguments: dict[str, Any], request_id: int) -> tuple[dict[str, str], bytes]:
    """The headers and body of the official `mcp` client's `tools/call` on streamable HTTP at 2026-07-28 (per
    request, stateless: no session id), as it sends them after its `server/discover`."""
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": MCP_VERSION,
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": MCP_CLIENT_META},
    }
    return headers, _compact(body)


def raw_a2a_request(data: Any, context_id: str, extensions: list[str]) -> bytes:
    """The body of the official a2a-sdk client's JSON-RPC `SendMessage` of one data part (non-streaming), with a
    fresh messageId and request id; its headers are the job's (A2A-Version, A2A-Extensions) and content-type."""
    message: dict[str, Any] = {
        "messageId": str(uuid.uuid4()),
        "contextId": context_id,
        "role": "ROLE_USER",
        "parts": [{"data": data, "mediaType": "application/json"}],
    }
    if extensions:
        message["extensions"] = extensions
    body = {
        "method": "SendMessage",
        "params": {"message": message, "configuration": {}},
        "id": str(uuid.uuid4()),
        "jsonrpc": "2.0",
    }
    return _compact(body)


async def raw_mcp_calls(job: dict[str, Any], calls: int) -> dict[str, Any]:
    async with httpx.AsyncClient(headers=job["headers"], timeout=120) as client:
        request_ids = iter(range(1, 1 << 62))

        async def one() -> str:
            headers, body = raw_mcp_request(job["tool"], job["arguments"], next(request_ids))
            response = await client.post(job["url"], content=body, headers=headers)
            assert response.status_code == 200, response.text[:300]
            result = response.json()["result"]
            assert not result.get("isError"), result
            return str(result["structuredContent"]["id"])

        await one()
        return await released(one, calls)


async def raw_a2a_calls(job: dict[str, Any], calls: int) -> dict[str, Any]:
    key, url = job.get("key", "a2a.bcp.checkout"), job["url"]
    async with httpx.AsyncClient(headers={**job["headers"], "content-type": "application/json"}, timeout=120) as client:

        async def one() -> str:
            body = raw_a2a_request(job["data"], job["contexts"][job["index"]], job["extensions"])
            response = await client.post(url, content=body)
            assert response.status_code == 200, response.text[:300]
            for part in response.json()["result"]["message"]["parts"]:
                value = part.get("data")
                if isinstance(value, dict) and key in value:
                    return str(value[key]["id"])
            raise AssertionError(f"no {key} in {response.text[:300]}")

        await one()
        return await released(one, calls)


async def released(one: Any, calls: int) -> dict[str, Any]:
    print("ready", flush=True)
    assert (await anyio.to_thread.run_sync(sys.stdin.readline)).strip() == "go"
    start, cpu = time.monotonic(), time.process_time()
    ids = [await one() for _ in range(calls)]
    return {"start": start, "end": time.monotonic(), "ids": ids, "cpu": time.process_time() - cpu}


def main() -> None:
    kind, calls = sys.argv[1], int(sys.argv[2])
    job = json.loads(sys.stdin.readline())
    if kind in ("mcp", "a2a"):
        outcome = anyio.run(mcp_calls if kind == "mcp" else a2a_calls, job, calls)
    elif kind in ("mcp_raw", "a2a_raw"):
        outcome = anyio.run(raw_mcp_calls if kind == "mcp_raw" else raw_a2a_calls, job, calls)
    elif kind in ("shop_flow", "bare_flow"):
        outcome = anyio.run(flow_calls, job, calls, kind)
    else:
        outcome = anyio.run(http_calls, job, calls, kind)
    print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main()
