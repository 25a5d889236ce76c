"""The Get Order bench's per-protocol floors (issue 34): a bare MCP server and a bare A2A server, each on its
official SDK as the SDK's own examples build one, doing what the bare view does (one SELECT of one row of
`BARE_ORDER`, the row answered as JSON) and nothing of the shop (no negotiation, identity, rate limit, schema).

Mounted beside the shop's own transports in the bench's ASGI app (`tests.bcp_app.bench_site.ASGI_MOUNTS`), so
they run behind the same router, body guard and access log, in the same uvicorn processes, and are read by the
same official clients (tests/bench/bench_client.py). What MCP or A2A costs beyond these is the shop's.

- `bare_mcp` at `/_bench/mcp`: the `mcp` SDK's low-level `Server` (one tool, `get_order`, with an input and an
  output schema) behind its `StreamableHTTPSessionManager`, stateless with JSON responses as the shop's MCP;
- `bare_a2a` at `/_bench/a2a` (its Agent Card at `/_bench/a2a/.well-known/agent-card.json`): a2a-sdk's
  `DefaultRequestHandler` with an in-memory task store and an `AgentExecutor` that enqueues one `Message` whose
  data part is `{"bare.order": row}`, behind the SDK's JSON-RPC and agent card routes.

The SELECT runs in a thread of the loop's executor, the connection handed back to the pool after it, as the
bare view's request does.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types as types
from a2a.helpers.proto_helpers import new_data_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCard
from django.conf import settings
from django.db import connection
from google.protobuf.json_format import MessageToDict, ParseDict
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette

from kernel import threads
from tests.bcp_app.bench_site import BARE_ORDER

MCP_PATH = "/_bench/mcp"
A2A_PATH = "/_bench/a2a"
A2A_KEY = "bare.order"  # the reply's data part: {A2A_KEY: row}


def select_order(order_id: int) -> dict[str, Any]:
    """The bare view's one SELECT, as a dict (in a worker thread; the connection goes back to the pool after)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id, checkout_id, total FROM {BARE_ORDER} WHERE id = %s", [order_id])  # noqa: S608
            row = cursor.fetchone()
    finally:
        connection.close()
    return {"id": row[0], "checkout_id": row[1], "total": row[2]}


# -- MCP ---------------------------------------------------------------------------------------------------------

_ROW_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "checkout_id": {"type": "integer"}, "total": {"type": "integer"}},
    "required": ["id", "checkout_id", "total"],
}
_TOOL = types.Tool(
    name="get_order",
    description="One order row by id.",
    input_schema={"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
    output_schema=_ROW_SCHEMA,
)


def mcp_server() -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_TOOL])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        row = await threads.in_thread(select_order, int((params.arguments or {})["id"]))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(row))], structured_content=row
        )

    return Server("bench-bare", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


class BareMcp:
    """The SDK's session manager as an ASGI app; `startup`/`shutdown` (the router's lifespan) run it, one per
    event loop as the shop's `McpAsgiApp` keeps its own."""

    def __init__(self) -> None:
        self._running: dict[asyncio.AbstractEventLoop, tuple[StreamableHTTPSessionManager, asyncio.Event, Any]] = {}

    async def startup(self) -> None:
        loop = asyncio.get_running_loop()
        manager = StreamableHTTPSessionManager(app=mcp_server(), json_response=True, stateless=True)
        started, stop = asyncio.Event(), asyncio.Event()

        async def run() -> None:
            async with manager.run():
                started.set()
                await stop.wait()

        runner = loop.create_task(run())
        await started.wait()
        self._running[loop] = (manager, stop, runner)

    async def shutdown(self) -> None:
        running = self._running.pop(asyncio.get_running_loop(), None)
        if running is not None:
            running[1].set()
            await running[2]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        manager = self._running[asyncio.get_running_loop()][0]
        await manager.handle_request(scope, receive, send)


bare_mcp = BareMcp()


# -- A2A ---------------------------------------------------------------------------------------------------------


class BareExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        data = MessageToDict(context.message.parts[0].data)
        row = await threads.in_thread(select_order, int(data["order_id"]))
        # A data part is a protobuf Struct, whose numbers are doubles: the id travels as text, as the shop's do.
        reply = {A2A_KEY: {**row, "id": str(row["id"])}}
        await event_queue.enqueue_event(new_data_message(reply, context_id=context.context_id))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def _card() -> AgentCard:
    return ParseDict(
        {
            "name": "bench bare",
            "description": "One order row by id.",
            "version": "1",
            "supportedInterfaces": [
                {
                    "url": f"{settings.BCP_PUBLIC_URL.rstrip('/')}{A2A_PATH}",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
            ],
            "capabilities": {"streaming": False},
            "defaultInputModes": ["application/json"],
            "defaultOutputModes": ["application/json"],
            "skills": [{"id": "get_order", "name": "get_order", "description": "One order row", "tags": ["order"]}],
        },
        AgentCard(),
    )


class BareA2a:
    """The SDK's JSON-RPC and Agent Card routes in a Starlette app, built on first use (the card names the
    server's public URL, known once settings are)."""

    def __init__(self) -> None:
        self._app: Starlette | None = None

    def _build(self) -> Starlette:
        if self._app is None:
            card = _card()
            handler = DefaultRequestHandler(
                agent_executor=BareExecutor(), task_store=InMemoryTaskStore(), agent_card=card
            )
            routes = create_jsonrpc_routes(handler, A2A_PATH) + create_agent_card_routes(
                card, card_url=f"{A2A_PATH}/.well-known/agent-card.json"
            )
            self._app = Starlette(routes=routes)
        return self._app

    async def startup(self) -> None:
        self._build()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self._build()(scope, receive, send)


bare_a2a = BareA2a()
