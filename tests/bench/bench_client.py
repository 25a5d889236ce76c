"""One benchmark client process (run by tests/bench/live_proc.run_clients; imports no Django).

`python -m tests.bench.bench_client KIND CALLS`, the job as one JSON line on stdin. It connects and makes
one warm-up call, prints `ready`, waits for `go`, makes CALLS calls and prints {"start", "end", "ids"}
(CLOCK_MONOTONIC is one clock for every process of the machine). KIND:
- `mcp`: `tools/call` of job["tool"] through the official `mcp` client (streamable HTTP, one session);
- `get`: GET job["url"] (a bare JSON view);
- `post`: POST job["bodies"][index] to job["url"]; an A2A `SendMessage` body gets a fresh messageId per call.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def answer_id(body: dict[str, Any]) -> str:
    """The id an answer is about: the order's, or the checkout's of an A2A `a2a.bcp.checkout` part."""
    if "result" not in body:
        return str(body.get("id", body))
    for part in body["result"]["message"]["parts"]:
        if "a2a.bcp.checkout" in part.get("data", {}):
            return str(part["data"]["a2a.bcp.checkout"]["id"])
    raise AssertionError(f"no a2a.bcp.checkout in {body}")


async def mcp_calls(job: dict[str, Any], calls: int) -> dict[str, Any]:
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
            if method == "get":
                response = await client.get(job["url"])
            else:
                body = job["bodies"][job["index"]]
                if body.get("method") == "SendMessage":
                    body["params"]["message"]["messageId"] = str(uuid.uuid4())
                response = await client.post(job["url"], json=body)
            assert response.status_code == 200, response.text[:300]
            return answer_id(response.json())

        await one()
        return await released(one, calls)


async def released(one: Any, calls: int) -> dict[str, Any]:
    print("ready", flush=True)
    assert (await anyio.to_thread.run_sync(sys.stdin.readline)).strip() == "go"
    start = time.monotonic()
    ids = [await one() for _ in range(calls)]
    return {"start": start, "end": time.monotonic(), "ids": ids}


def main() -> None:
    kind, calls = sys.argv[1], int(sys.argv[2])
    job = json.loads(sys.stdin.readline())
    outcome = anyio.run(mcp_calls, job, calls) if kind == "mcp" else anyio.run(http_calls, job, calls, kind)
    print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main()
