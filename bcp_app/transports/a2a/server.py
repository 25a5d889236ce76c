"""A2A 1.0 JSON-RPC transport (seed 004; BCP.md §13.3) on the official `a2a-sdk`, and its Agent Card.

Mounted by `config/asgi.py` at `/bcp/a2a` (JSON-RPC `SendMessage`) and `/.well-known/agent-card.json`.

The Agent Card (seed 004 "Transport discovery", BCP-A2A-01) is served in exactly the seed's shape and member
order. The BCP extension's `params.capabilities` lists the checkout capability and the extensions of it the
shop offers (from the same registry as `/.well-known/bcp`), each as `{"version"}` / `{"version", "extends"}`.

The SDK parses JSON-RPC, validates the request and runs our `AgentExecutor`; this module adds:

- header checks before anything runs (`A2A-Version: 1.0`, `A2A-Extensions` activating the BCP
  extension, a well-formed `BCP-Agent`), answered with A2A's JSON-RPC errors and a clear message;
- BCP negotiation and caller identity (`bcp_app.service.context.resolve_context`) off the event loop;
- the reply rendered from our own dict, so amounts stay integers and members keep the seed's order.

The business work (intents → operations, contexts, messageId idempotency) is synchronous Django code in
`actions.handle_message`. Nothing is kept in process memory between requests: every reply is a direct
`Message`, except a Pix complete waiting for the PSP, answered with a Task (issue 35) that lives in Postgres
(`bcp_app/service/a2a_tasks.py`) behind the SDK's task store, push-config store and event stream interfaces
(`tasks.py`); contexts live in Postgres too, so any process can answer any message, GetTask or SubscribeToTask.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from typing import Any

from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.jsonrpc_models import JSONRPCError
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import EXCEPTION_MAP, build_error_response
from a2a.server.routes import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Role,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from a2a.utils import telemetry
from a2a.utils.errors import (
    A2A_ERROR_REASONS,
    JSON_RPC_ERROR_CODE_MAP,
    A2AError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a.utils.input_mode_validator import validate_input_modes
from a2a.utils.task import validate_history_length
from django.conf import settings
from django.db import close_old_connections
from google.protobuf.json_format import MessageToDict, ParseDict
from jsonrpc.jsonrpc2 import JSONRPC20Response
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.status import HTTP_413_CONTENT_TOO_LARGE

from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.field_errors import field_path
from bcp_app.protocol.names import A2A_EXTENSION_URI
from bcp_app.protocol.results import body_bytes
from bcp_app.protocol.schemas.text import CONTROL_CHARACTER, find_control_character
from bcp_app.protocol.signatures import HttpMessage
from bcp_app.service import a2a_tasks, outbound, ratelimit
from bcp_app.service.context import SignedRequest, resolve_context
from bcp_app.service.discovery import a2a_capability_registry, public_url, store_trade_name
from bcp_app.service.negotiation import parse_agent_header
from bcp_app.transports.a2a.actions import handle_message
from bcp_app.transports.a2a.messages import intify, message_to_dict, to_proto
from bcp_app.transports.a2a.reads import REPLY_JSON, read_message
from bcp_app.transports.a2a.required import MISSING, MISSING_ELEMENT, validate_required_fields
from bcp_app.transports.a2a.send_memo import ParsedSend, parsed_send
from bcp_app.transports.a2a.tasks import (
    STATE_DIRECT,
    STATE_TASK,
    BcpPushConfigStore,
    BcpTaskEventStream,
    BcpTaskStore,
    db_call,
    task_proto,
)
from bcp_app.transports.a2a.ucp_face import (
    agent_header,
    card_extension,
    checkout_request,
    incoming_to_bcp,
    reply_to_ucp,
    served_context,
    speaks_ucp,
)
from bcp_app.transports.scope import path_and_query
from kernel import threads
from kernel.ops import setting
from kernel.ops.asgi_guard import NOT_PARSED, PARSED_BODY, parsed_body
from kernel.ops.request_cache import request_scope

A2A_PATH = "/bcp/a2a"
AGENT_CARD_PATH = "/.well-known/agent-card.json"
A2A_PROTOCOL_VERSION = "1.0"
AGENT_VERSION = "1.0.0"


def card_capabilities() -> dict[str, list[dict[str, Any]]]:
    """What the A2A binding serves, from the profile's registry (`a2a_capability_registry`), as the seed shows
    them (version, extends)."""
    capabilities: dict[str, list[dict[str, Any]]] = {}
    for name, entries in a2a_capability_registry().items():
        capabilities[name] = [
            {"version": entry["version"], **({"extends": entry["extends"]} if entry.get("extends") else {})}
            for entry in entries
        ]
    return capabilities


# How a platform authenticates (BCP §18 (4), `_api_key`): its API key as a bearer token or in X-API-Key; an HTTP
# Message Signature (RFC 9421, BCP §14) has no A2A scheme type, so the descriptions say it.
SECURITY_SCHEMES: dict[str, Any] = {
    "bearer": {
        "httpAuthSecurityScheme": {
            "description": "Chave de API da plataforma: Authorization: Bearer <chave>. Pedidos também podem ser "
            "assinados (HTTP Message Signatures, RFC 9421, chave do perfil BCP).",
            "scheme": "Bearer",
        }
    },
    "apiKey": {
        "apiKeySecurityScheme": {
            "description": "A mesma chave de API da plataforma, no cabeçalho X-API-Key.",
            "location": "header",
            "name": "X-API-Key",
        }
    },
}


def security_requirements() -> list[dict[str, Any]]:
    """Either scheme; with no credential at all (`{}`, OpenAPI's optional security) while the shop lets anonymous
    agents browse and create checkouts (BCP_ALLOW_ANONYMOUS, and BCP_REQUIRE_SIGNATURES off: `resolve_context`)."""
    requirements: list[dict[str, Any]] = [{"schemes": {"bearer": {}}}, {"schemes": {"apiKey": {}}}]
    if setting.value("BCP_ALLOW_ANONYMOUS", True) and not setting.value("BCP_REQUIRE_SIGNATURES", False):
        requirements.append({})
    return requirements


def agent_card_dict(shop_name: str) -> dict[str, Any]:
    """The card of the store named `shop_name`: its trade name as the merchant set it in "Dados da loja"
    (`store_trade_name`, read in a thread by `agent_card_endpoint`), as the seed's "Example business agent", with
    the authentication the shop accepts (A2A 1.0 `securitySchemes`, `securityRequirements`)."""
    return {
        "name": f"{shop_name or 'Loja'} business agent",
        "description": "Business agent with BCP checkout",
        "version": AGENT_VERSION,
        "supportedInterfaces": [
            {"url": public_url(A2A_PATH), "protocolBinding": "JSONRPC", "protocolVersion": A2A_PROTOCOL_VERSION}
        ],
        "capabilities": {
            # A Pix complete answers a Task that the settlement ends (issue 35): GetTask, SubscribeToTask
            # (streaming) and push notifications to the platform's URL, signed like order webhooks.
            "streaming": True,
            "pushNotifications": True,
            "extensions": [
                {
                    "uri": A2A_EXTENSION_URI,
                    "description": "Brazilian Commerce Protocol structured types",
                    "required": False,
                    "params": {"capabilities": card_capabilities()},
                },
                # UCP's A2A binding on the same agent (ucp_face.py): UCP's names and shapes at the edges.
                card_extension(card_capabilities()),
            ],
        },
        "securitySchemes": SECURITY_SCHEMES,
        "securityRequirements": security_requirements(),
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {
                "id": "bcp-checkout",
                "name": "BCP checkout",
                "description": "Creates, updates, and completes BCP checkout sessions",
                "tags": ["commerce", "checkout", "bcp"],
            },
            {
                "id": "bcp-cart",
                "name": "BCP cart",
                "description": "Creates, updates and cancels carts (create_cart, get_cart, update_cart, cancel_cart) "
                "and turns one into a checkout (create_checkout)",
                "tags": ["commerce", "cart", "bcp"],
            },
            {
                "id": "bcp-subscription",
                "name": "BCP subscription",
                "description": "Subscribes a buyer to a plan paid by Pix Automático, reads and cancels it "
                "(create_subscription, get_subscription, cancel_subscription)",
                "tags": ["commerce", "subscription", "bcp"],
            },
            {
                "id": "policies-search",
                "name": "Store policies",
                "description": "Answers questions about returns, shipping, privacy and terms (policies.search)",
                "tags": ["commerce", "policies", "bcp"],
                "examples": ["qual é a política de trocas?"],
            },
            {
                "id": "bcp-order-actions",
                "name": "Cancel and return orders",
                "description": "Cancels an order before it ships (cancel_order) and requests a return of delivered "
                "items within the store's window (request_return); extension br.dev.bcp.shopping.order_actions",
                "tags": ["commerce", "order", "returns", "bcp"],
            },
        ],
    }


def agent_card(shop_name: str) -> AgentCard:
    """The same card as the SDK's protobuf type (validated by parsing it)."""
    return ParseDict(agent_card_dict(shop_name), AgentCard())


logger = logging.getLogger(__name__)

STATE_INCOMING = "bcp_incoming"  # the message as the platform sent it (before the SDK fills ids in)
STATE_REPLY = "bcp_reply"  # our reply dict, rendered verbatim
STATE_ERROR = "bcp_error"  # a ProtocolError raised by the business layer
STATE_UCP_REQUEST = "bcp_ucp_request"  # a UCP platform's Create/Update intent part, as sent (`checkout_request`)
STATE_READ = "bcp_read"  # the reply is a read's (`_direct`): our own dict, integers already integers
STATE_PARSED_INCOMING = "bcp_parsed_incoming"  # the message's dict, made with its protobuf (`send_memo`)


def _message_loc(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """A place in the message as the other field errors name it: inside a data part, relative to the data (the
    checkout's `$.buyer.first_name`, as `$.line_items[0].quantity`); elsewhere, in the request's params
    (`$.message.messageId`, `$.message.parts[0].text`)."""
    if len(loc) > 2 and loc[0] == "parts" and loc[2] == "data":
        return loc[3:]
    return ("message", *loc)


class ServerError(A2AError):
    """JSON-RPC -32000 (implementation-defined server error): BCP §5.4's code, as on MCP, for a valid request the
    shop refuses or cannot serve now — `idempotency_conflict`/`_in_progress` (BCP-IDEM-05/06), `rate_limited`,
    `unavailable`, `unauthenticated`, `forbidden`, `profile_not_trusted` and the signature failures (BCP-SIG-04).
    A2A 1.0 defines no code for them; -32600 "Invalid Request" (or -32602) would tell the agent its JSON-RPC was
    malformed, when it must wait, authenticate or use another messageId."""

    message = "Server error"


# The SDK renders an A2AError through these tables by its exact type (an unlisted one would be -32603
# 'UNKNOWN_ERROR'): our one extra type is registered beside A2A's own.
JSON_RPC_ERROR_CODE_MAP[ServerError] = -32000
EXCEPTION_MAP[ServerError] = JSONRPCError
A2A_ERROR_REASONS[ServerError] = "SERVER_ERROR"


def a2a_error(error: ProtocolError) -> A2AError:
    """A BCP protocol error as an A2A JSON-RPC error (BCP.md §18 (3)); the BCP code travels in `data`."""
    data: dict[str, Any] = {"code": error.code, "content": error.content}
    if error.retry_after is not None:
        data["retry_after"] = str(error.retry_after)
    if error.fields:
        # every offending member, one entry each (MCP's `data.fields`), in the SDK's form: the reply's details
        # then carry a google.rpc.BadRequest with one fieldViolation per member
        data["errors"] = [{"field": field, "message": text} for field, text in error.fields.items()]
    if error.jsonrpc_code == -32000:
        return ServerError(message=error.content, data=data)
    if error.jsonrpc_code == -32602:
        return InvalidParamsError(message=error.content, data=data)
    if error.jsonrpc_code == -32603:
        return InternalError(message=error.content, data=data)
    # The rest: -32600 as on MCP (`digest_mismatch`, `algorithm_unsupported`), and the profile errors MCP gives
    # -32001, which in A2A is TaskNotFoundError.
    return InvalidRequestError(message=error.content, data=data)


def check_headers(headers: dict[str, str]) -> None:
    """BCP-A2A-03: `A2A-Version: 1.0` and a parseable `BCP-Agent`; `A2A-Extensions` picks BCP or UCP."""
    version = headers.get("a2a-version", "").strip()
    if version != A2A_PROTOCOL_VERSION:
        shown = f"'{version}'" if version else "ausente"
        raise VersionNotSupportedError(
            message=f"A2A-Version {shown}: este agente fala somente A2A {A2A_PROTOCOL_VERSION}; "
            f"envie o cabeçalho A2A-Version: {A2A_PROTOCOL_VERSION}.",
            data={"code": "version_not_supported", "supported": A2A_PROTOCOL_VERSION},
        )
    # The card declares the BCP extension `required: false` (BCP §13.3, seed 004): a request activating neither
    # BCP's nor UCP's is served as BCP (its names and data parts), the agent header naming the platform as ever.
    try:
        parse_agent_header(agent_header(headers))
    except ProtocolError as exc:
        raise a2a_error(exc) from exc


_EXTENSION_HEADER = HTTP_EXTENSION_HEADER.lower().encode("latin-1")  # as it arrives in the ASGI scope


class BcpCallContextBuilder(DefaultServerCallContextBuilder):
    """Runs the header checks before the SDK touches the request (no task is created for a rejected call)."""

    def build(self, request: Request) -> ServerCallContext:
        """The SDK's `DefaultServerCallContextBuilder.build`, its headers read off the scope once (issue 34:
        `dict(request.headers)` looked each name up again in the list, and decoded it again, about 14 µs of the
        20 a message's context cost): the same dict, each name's first value as Starlette's `Headers` gives it."""
        raw = request.scope["headers"]
        headers: dict[str, str] = {}
        for name, value in raw:
            key = name.decode("latin-1")
            if key not in headers:
                headers[key] = value.decode("latin-1")
        state: dict[str, Any] = {}
        if "auth" in request.scope:
            state["auth"] = request.auth
        state["headers"] = headers
        context = ServerCallContext(
            user=self.build_user(request),
            state=state,
            requested_extensions=get_requested_extensions(
                [value.decode("latin-1") for name, value in raw if name == _EXTENSION_HEADER]
            ),
        )
        check_headers(headers)
        # Starlette caches the body read by the dispatcher; signatures (RFC 9421) need the raw bytes.
        context.state["raw_body"] = getattr(request, "_body", b"")
        context.state["method_http"] = request.method
        context.state["authority"] = headers.get("host", "")
        context.state["path"], context.state["query"] = path_and_query(request.scope)
        return context


def _api_key(headers: dict[str, str]) -> str | None:
    authorization = headers.get("authorization", "").strip()
    if authorization:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ProtocolError("unauthenticated", "Use Authorization: Bearer <chave de API>.")
        return token.strip()
    return headers.get("x-api-key", "").strip() or None


def _resolve(state: dict[str, Any], *, own_connections: bool = True) -> Any:
    """BCP §3 negotiation + caller identity, in a worker thread (ORM and outbound HTTP); `own_connections`: old
    connections closed before and after, as Django's request_started/finished do (False: the caller does it)."""
    headers: dict[str, str] = state["headers"]
    # Every A2A message may change a checkout: the `write` class (bcp_app/service/ratelimit.py).
    caller, authenticated = ratelimit.caller_from_headers(headers, None)
    counted = ratelimit.call_window(op_class="write", caller=caller, authenticated=authenticated)
    signed = None
    if "signature-input" in headers:
        message = HttpMessage(
            method=state.get("method_http", "POST"),
            authority=state.get("authority", ""),
            path=state.get("path", A2A_PATH),
            query=state.get("query"),
            headers=headers,
        )
        signed = SignedRequest(message=message, body=state.get("raw_body", b""))
    if own_connections:
        close_old_connections()
    try:
        return resolve_context(
            transport="a2a",
            profile_url=parse_agent_header(agent_header(headers)),
            api_key=_api_key(headers),
            signed=signed,
            language=headers.get("accept-language"),
            request_id=headers.get("request-id"),
            operation="a2a_message",
            counted=counted,  # counted and refused when over in identity's round trip
        )
    finally:
        if own_connections:
            close_old_connections()


def _identity(state: dict[str, Any], push: tuple[str, str] | None, *, own_connections: bool = True) -> Any:
    """The message's `_resolve`, its refusal as an A2A error; the push URL the message named kept in it."""
    try:
        bcp_context = _resolve(state, own_connections=own_connections)
    except ProtocolError as exc:
        raise a2a_error(exc) from exc
    if push is not None:
        bcp_context.extra["a2a_push"] = push
    return served_context(state["headers"], state.get(STATE_INCOMING) or {}, bcp_context)


def _handle(
    bcp_context: Any, incoming: dict[str, Any], language_given: bool, read: bool = False, own_connections: bool = True
) -> dict[str, Any]:
    if own_connections:  # as `_resolve`'s
        close_old_connections()
    try:
        # read-mostly cache entries once per message, as per HTTP request: the message's scope, with what
        # identity prefetched (`on_message_send`)
        with request_scope(reuse=True):
            run = read_message if read else handle_message  # a read intent: one statement besides the read
            return run(bcp_context, incoming, language_given=language_given)
    finally:
        if own_connections:
            close_old_connections()


class BcpAgentExecutor(AgentExecutor):
    """Answers every message with one direct `Message` carrying the checkout (BCP-A2A-04/05)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        reply = await answer(context.call_context.state)
        if "task" in reply:
            # The task is ours (Postgres, ended by the settlement): the SDK finishes this call as a direct reply,
            # and the dispatcher renders the stored task instead (issue 35).
            placeholder = {"messageId": reply["task"]["id"], "contextId": reply["task"]["contextId"], "parts": []}
            await event_queue.enqueue_event(to_proto(placeholder))
            return
        await event_queue.enqueue_event(to_proto(reply))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise TaskNotCancelableError(message="Para desistir, cancele o checkout (cancel_checkout).")


async def answer(state: dict[str, Any]) -> dict[str, Any]:
    """Run the message (`_reply`, off the loop); our reply dict, kept in `state` for the dispatcher (or the
    error for the handler)."""
    return await threads.in_thread(_reply, state)


def _reply(state: dict[str, Any], read: bool = False, own_connections: bool = True) -> dict[str, Any]:
    """`answer`'s work, in the worker thread (`read`: a read intent, `reads.read_message`; `own_connections`: as
    `_resolve`'s)."""
    incoming = state[STATE_INCOMING]
    language_given = bool(state["headers"].get("accept-language"))
    try:
        reply = _handle(state["bcp_context"], incoming, language_given, read, own_connections)
    except Exception as exc:
        if not isinstance(exc, ProtocolError):
            # BCP-ERR-06: -32603 without internals (the SDK would echo str(exc) to the caller).
            logger.exception("A2A message failed")
            exc = ProtocolError("internal_error", "Erro interno ao processar a mensagem; tente novamente.")
        # Reported as a JSON-RPC error by the handler; the SDK still needs one event to finish.
        state[STATE_ERROR] = exc
        reply = {"messageId": "error", "contextId": incoming.get("contextId", ""), "parts": [], "extensions": []}
    if speaks_ucp(state["headers"]) and STATE_ERROR not in state:
        context = state.get("bcp_context")
        reply = reply_to_ucp(reply, state.get(STATE_UCP_REQUEST), getattr(context, "profile", None))
    state[STATE_REPLY] = reply
    return reply


# Issue 34: intents that only read and always answer one direct `Message` (never a task), run without the SDK's
# task machinery (`BcpRequestHandler.on_message_send`).
DIRECT_ACTIONS = frozenset({"get_order"})


def intent_action(incoming: dict[str, Any]) -> Any:
    """The message's `action`: that of its first data part with one, as `actions.message_parts` picks the intent."""
    for part in incoming.get("parts") or []:
        data = part.get("data") if isinstance(part, dict) else None
        if isinstance(data, dict) and "action" in data:
            return data["action"]
    return None


async def push_url_ok(url: str) -> bool:
    """A push URL passes the outbound rules of BCP §3 (https, no special-use addresses unless allow-listed)."""
    try:
        await threads.in_thread(outbound.check_url, url, timeout=3.0)
    except outbound.OutboundError:
        return False
    return True


def _task_not_found(task_id: str) -> TaskNotFoundError:
    """The SDK's "Task not found", in the shop's language and naming the id (agent QA walk)."""
    return TaskNotFoundError(message=f"Tarefa {task_id} não encontrada.")


_REQUIRED_WORDS = {MISSING: "obrigatório", MISSING_ELEMENT: "informe ao menos um item"}


def _required_in_portuguese(exc: InvalidParamsError) -> InvalidParamsError:
    """The SDK's REQUIRED-field refusal ("Validation failed", `data.errors` of "Field is required.") said in
    Portuguese, each field named, the same on the direct read path and the SDK's (agent QA walk: empty `parts`
    answered in English). Other invalid-params errors are ours already and pass unchanged."""
    errors = (exc.data or {}).get("errors") if exc.message == "Validation failed" else None
    if not errors:
        return exc
    named = "; ".join(f"{e['field']}: {_REQUIRED_WORDS.get(e['message'], e['message'])}" for e in errors)
    return InvalidParamsError(message=f"Mensagem incompleta: {named}.", data=exc.data)


class BcpRequestHandler(DefaultRequestHandler):
    direct_actions: frozenset[str] = frozenset()  # answered by `_direct` (an application sets DIRECT_ACTIONS)

    async def _identify(self, context: ServerCallContext) -> None:
        """BCP identity before any task method: tasks belong to the caller that created them."""
        with request_scope():
            try:
                context.state["bcp_context"] = await threads.in_thread(_resolve, context.state)
            except ProtocolError as exc:
                raise a2a_error(exc) from exc

    async def _push_config(self, params: SendMessageRequest) -> tuple[str, str] | None:
        """The push URL the message names for the task it may open (A2A `taskPushNotificationConfig`), checked
        and taken off the request: the task id is ours, not the SDK's."""
        if not params.configuration.HasField("task_push_notification_config"):
            return None
        config = params.configuration.task_push_notification_config
        if not await push_url_ok(config.url):
            raise InvalidParamsError(message="taskPushNotificationConfig.url inválida: use uma URL https pública.")
        params.configuration.ClearField("task_push_notification_config")
        return config.url, config.token

    async def _open_task_only(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        """BCP-A2A-08: a message naming a finished task is refused (the context starts a new one); one naming our
        open task continues its conversation (the SDK does not run our tasks: the id is taken off)."""
        task_id = params.message.task_id
        if not task_id:
            return
        principal = context.state["bcp_context"].principal
        row = await db_call(a2a_tasks.task_for_caller, task_id, principal)
        if row is None:
            raise TaskNotFoundError(message=f"Tarefa {task_id} não encontrada.")
        if row.state in a2a_tasks.TERMINAL:
            raise UnsupportedOperationError(
                message=f"A tarefa {task_id} já terminou; envie a mensagem sem taskId no mesmo contextId."
            )
        params.message.task_id = ""

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Message:  # type: ignore[override]
        try:
            return await self._message_send(params, context)
        except InvalidParamsError as exc:
            raise _required_in_portuguese(exc) from None

    async def _message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Message:
        if params.message.role == Role.ROLE_AGENT:  # BCP-A2A-02: the platform speaks as the user
            raise InvalidParamsError(
                message="message.role inválido: uma mensagem enviada ao agente da loja usa ROLE_USER, não ROLE_AGENT."
            )
        # Keep the message exactly as sent: the SDK fills in contextId/taskId when they are missing.
        parsed = context.state.pop(STATE_PARSED_INCOMING, None)  # `BcpDispatcher.handle_requests` made it
        context.state[STATE_INCOMING] = parsed if parsed is not None else message_to_dict(params.message)
        found = find_control_character(context.state[STATE_INCOMING], ())
        if found is not None:  # Postgres refuses U+0000: never let one reach the contexts or the engine
            where, char = found
            raise a2a_error(
                ProtocolError(
                    "invalid_request",
                    f"Campo inválido {field_path(_message_loc(where))}: {CONTROL_CHARACTER.format(char=char)}",
                )
            )
        if speaks_ucp(context.state["headers"]):
            context.state[STATE_UCP_REQUEST] = checkout_request(context.state[STATE_INCOMING])
            context.state[STATE_INCOMING] = incoming_to_bcp(context.state[STATE_INCOMING])
        push = await self._push_config(params)
        action = intent_action(context.state[STATE_INCOMING])
        context.state[STATE_DIRECT] = True  # no thread hop and query for the SDK's own task id (tasks.py)
        with request_scope():  # one for the message: identity's reads, then the executor's (`_handle`)
            if not params.message.task_id and isinstance(action, str) and action in self.direct_actions:
                # identity, the SDK's checks and the read in one trip to a worker thread (issue 34)
                result = await threads.in_thread(self._direct, params, context, push)
            else:
                context.state["bcp_context"] = await threads.in_thread(_identity, context.state, push)
                await self._open_task_only(params, context)
                result = await super().on_message_send(params, context)
        error = context.state.get(STATE_ERROR)
        if error is not None:
            raise a2a_error(error)
        return result  # type: ignore[return-value]

    def _direct(self, params: SendMessageRequest, context: ServerCallContext, push: tuple[str, str] | None) -> Message:
        """A read intent (`DIRECT_ACTIONS`) answered as the SDK's `on_message_send` would, without its task machinery,
        in a worker thread: the caller's identity (as for any message), then the rest.

        The SDK runs every message as a task: an in-memory active task, an event queue with producer and consumer
        coroutines, the task store's lookups, and our executor inside them; for a message naming no task whose
        executor enqueues one `Message`, it returns that `Message`. Here the SDK's own request checks run in its
        order (required fields, history length, input modes when enabled), then the executor's work (`_reply`, the
        read recorded in one statement: `reads.py`) directly;
        the dispatcher renders our reply dict from `state` either way (`BcpDispatcher`), so the bytes are the same.
        Safe for a read: its reply is never a task, so no task, push config or event stream outlives the call.
        Old connections are closed once before identity and once after the read (Django's request_started and
        request_finished), not around each of them: nothing runs between the two in this thread."""
        close_old_connections()
        try:
            context.state["bcp_context"] = _identity(context.state, push, own_connections=False)
            validate_required_fields(params)  # the SDK's check, its descriptors read once (`required.py`)
            validate_history_length(params.configuration)
            if self._validate_input_modes:
                validate_input_modes(params.message, self._agent_card)
            reply = _reply(context.state, read=True, own_connections=False)
        finally:
            close_old_connections()
        context.state[STATE_READ] = True
        # Only its messageId is read: the dispatcher sends our reply dict in its place (`BcpDispatcher`), so the
        # whole reply is not converted to protobuf and back.
        return to_proto({"messageId": reply.get("messageId", ""), "contextId": reply.get("contextId", ""), "parts": []})

    async def on_message_send_stream(  # type: ignore[override]
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        """SendStreamingMessage: the one reply (a Message, or the Task of a Pix complete) as the whole stream; the
        task's later changes come through SubscribeToTask or the push."""
        await self.on_message_send(params, context)
        reply = context.state[STATE_REPLY]
        yield task_proto(reply["task"]) if "task" in reply else to_proto(reply)

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:  # type: ignore[override]
        await self._identify(context)
        try:
            return await super().on_get_task(params, context)
        except TaskNotFoundError:
            raise _task_not_found(params.id) from None

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:  # type: ignore[override]
        await self._identify(context)
        return await super().on_list_tasks(params, context)

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:  # type: ignore[override]
        raise TaskNotCancelableError(
            message="A tarefa acompanha o pagamento Pix; para desistir, cancele o checkout (cancel_checkout)."
        )

    async def on_subscribe_to_task(  # type: ignore[override]
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        await self._identify(context)
        try:
            async for event in super().on_subscribe_to_task(params, context):
                yield event
        except TaskNotFoundError:
            raise _task_not_found(params.id) from None

    async def on_create_task_push_notification_config(  # type: ignore[override]
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        await self._identify(context)
        return await super().on_create_task_push_notification_config(params, context)

    async def on_get_task_push_notification_config(  # type: ignore[override]
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        await self._identify(context)
        return await super().on_get_task_push_notification_config(params, context)

    async def on_list_task_push_notification_configs(  # type: ignore[override]
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        await self._identify(context)
        return await super().on_list_task_push_notification_configs(params, context)

    async def on_delete_task_push_notification_config(  # type: ignore[override]
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        await self._identify(context)
        await super().on_delete_task_push_notification_config(params, context)


def _untraced(method: Any) -> Any:
    """`method` without the SDK's OpenTelemetry wrapper (`a2a.utils.telemetry.trace_class`) when that wrapper is
    its outermost one, else `method` itself: what it wraps (the SDK's `validate_version`, then the method) runs
    as ever. A no-op span costs ~12 µs a call (tracer lookup, context attach and detach, status), issue 34."""
    code = getattr(method, "__code__", None)
    wrapped = getattr(method, "__wrapped__", None)
    return wrapped if code is not None and wrapped is not None and code.co_filename == telemetry.__file__ else method


_PROCESS_UNTRACED = _untraced(JsonRpcDispatcher._process_non_streaming_request)


class BcpDispatcher(JsonRpcDispatcher):
    async def handle_requests(self, request: Request) -> Response:
        """The SDK's, except for a read's `SendMessage` (`_read_send`), whose params are parsed once per shape
        (`send_memo`, issue 34); the steps after the parse are the SDK's own, in its order, with its error
        answers. Not run for it: the SDK's debug log line of the body and its OpenTelemetry spans of this method
        and of `_process_non_streaming_request` (no tracer is configured in the shop; `_untraced`)."""
        found = await self._read_send(request)
        if found is None:
            return await super().handle_requests(request)
        request_id, parsed = found
        try:
            call_context = self._context_builder.build(request)
            call_context.tenant = getattr(parsed.request, "tenant", "")
            call_context.state["method"] = "SendMessage"
            call_context.state["request_id"] = request_id
            call_context.state[STATE_PARSED_INCOMING] = parsed.incoming
            handler_result: dict[str, Any]
            try:
                raw_result = await _PROCESS_UNTRACED(self, parsed.request, call_context)
                handler_result = JSONRPC20Response(result=raw_result, _id=request_id).data
            except A2AError as e:
                handler_result = build_error_response(request_id, e)
            return self._create_response(call_context, handler_result)
        except HTTPException as e:
            if e.status_code == HTTP_413_CONTENT_TOO_LARGE:
                return self._generate_error_response(request_id, InvalidRequestError(message="Payload too large"))
            raise
        except A2AError as e:
            return self._generate_error_response(request_id, e)
        except Exception as e:
            logger.exception("A2A: unhandled exception")
            return self._generate_error_response(request_id, InternalError(message=str(e)))

    async def _read_send(self, request: Request) -> tuple[str | int, ParsedSend] | None:
        """(request id, parsed params) for a JSON-RPC `SendMessage` of a read intent (`DIRECT_ACTIONS`), its body
        parsed by the router's guard, that the SDK's base checks pass (a JSON object of exactly jsonrpc "2.0", an
        id that is a string or an integer, the method and its params) and whose params `send_memo` parses; None
        for the SDK to serve."""
        handler = self.request_handler
        if self.enable_v0_3_compat or not isinstance(handler, BcpRequestHandler) or not handler.direct_actions:
            return None
        # the body as `_rpc` handed it on from the router's guard (`request.json()`'s cache): never read here, so
        # a body that fails to arrive or to parse is the SDK's to read and answer
        body = getattr(request, "_json", None)
        if not isinstance(body, dict) or body.keys() != _SEND_KEYS:
            return None
        request_id, params = body["id"], body["params"]
        if body["jsonrpc"] != "2.0" or body["method"] != "SendMessage":
            return None
        if isinstance(request_id, bool) or not isinstance(request_id, str | int) or not isinstance(params, dict):
            return None
        message = params.get("message")
        if not isinstance(message, dict) or intent_action(message) not in handler.direct_actions:
            return None
        parsed = parsed_send(params)
        return None if parsed is None else (request_id, parsed)

    async def _handle_send_message(self, request_obj: SendMessageRequest, context: ServerCallContext) -> dict[str, Any]:
        """The SDK's, except for a read's reply (`_direct`): `_create_response` sends our reply dict in its place and
        reads only its messageId, so the placeholder is not converted to ProtoJSON (issue 34)."""
        task_or_message = await self.request_handler.on_message_send(request_obj, context)
        if isinstance(task_or_message, Task):
            return MessageToDict(SendMessageResponse(task=task_or_message))
        if context.state.get(STATE_READ):
            return {"message": {"messageId": task_or_message.message_id}}
        return MessageToDict(SendMessageResponse(message=task_or_message))

    def _create_response(self, context: ServerCallContext, handler_result: Any) -> Response:
        if isinstance(handler_result, dict) and "result" in handler_result:
            reply = context.state.get(STATE_REPLY)
            result = handler_result["result"]
            message = result.get("message") if isinstance(result, dict) else None
            stored = context.state.get(STATE_TASK)
            if (
                reply is not None
                and "task" in reply
                and isinstance(message, dict)
                and message.get("messageId") == reply["task"]["id"]
            ):
                result = {"task": reply["task"]}  # a Pix complete: the task we opened (issue 35)
            elif reply is not None and isinstance(message, dict) and message.get("messageId") == reply.get("messageId"):
                result = {"message": reply}
                if context.state.get(STATE_READ):  # built from the order body (or its stored text): no float in it
                    return Response(_read_body(context, handler_result.get("id"), reply), media_type="application/json")
            elif (
                isinstance(stored, dict)
                and isinstance(result, dict)
                and "status" in result
                and result.get("id") == stored.get("id")
            ):
                result = stored  # GetTask: the stored task verbatim (integers and member order kept)
            handler_result = {"jsonrpc": "2.0", "id": handler_result.get("id"), "result": intify(result)}
        if isinstance(handler_result, dict):
            # The SDK's JSONResponse (json.dumps, compact) as the same bytes by orjson, for less CPU (issue 34).
            return Response(body_bytes(handler_result), media_type="application/json")
        return super()._create_response(context, handler_result)


_SEND_KEYS = {"jsonrpc", "id", "method", "params"}


def _read_body(context: ServerCallContext, request_id: Any, reply: dict[str, Any]) -> bytes:
    """The JSON-RPC response to a read (`_direct`): what `body_bytes` writes for it, with the reply's JSON written
    once for its record and the response (`reads.REPLY_JSON`, kept only when orjson wrote it: then every member
    name is a string, and orjson writes the same bytes with or without `body_bytes`' OPT_NON_STR_KEYS)."""
    extra = getattr(context.state.get("bcp_context"), "extra", None) or {}
    recorded = extra.get(REPLY_JSON)
    if recorded is not None and recorded[0] is reply:  # not a UCP reply made of it, nor a replayed one
        return b'{"jsonrpc":"2.0","id":' + body_bytes(request_id) + b',"result":{"message":' + recorded[1] + b"}}"
    return body_bytes({"jsonrpc": "2.0", "id": request_id, "result": {"message": reply}})


async def agent_card_endpoint(request: Request) -> Response:
    """BCP-A2A-01: the Agent Card, public and cacheable, named after the store as it is now: the trade name is read
    (in a thread: the first read after a save queries the row) from the store settings each process keeps under
    their version token, so a rename in the admin reaches every process's card on its next request."""
    shop_name = await db_call(store_trade_name)
    return JSONResponse(agent_card_dict(shop_name), headers={"Cache-Control": "public, max-age=300"})


async def _rpc(dispatcher: BcpDispatcher, scope: Any, receive: Any, send: Any) -> None:
    """A JSON-RPC call (POST `A2A_PATH`) as Starlette's route serves it, without its middleware and router, which
    only find this one route again (issue 34). `handle_requests` answers every exception as a JSON-RPC error but
    an `HTTPException`, which is answered here as Starlette's `ExceptionMiddleware` does; anything else (a
    `BaseException`) ends the call as it would through Starlette."""
    request = Request(scope, receive, send)
    if PARSED_BODY in scope:  # the router's guard parsed the body: `request.json()` answers its JSON (issue 34)
        parsed = parsed_body(scope, await request.body())  # the bytes the guard read, replayed
        if parsed is not NOT_PARSED:
            request._json = parsed
    try:
        response = await dispatcher.handle_requests(request)
    except HTTPException as exc:
        if exc.status_code in {204, 304}:
            response = Response(status_code=exc.status_code, headers=exc.headers)
        else:
            response = PlainTextResponse(exc.detail, status_code=exc.status_code, headers=exc.headers)
    await response(scope, receive, send)


class A2AApplication:
    """The ASGI app mounted at `/bcp/a2a` and `/.well-known/agent-card.json` (built on first use)."""

    def __init__(self, direct_actions: frozenset[str] = DIRECT_ACTIONS) -> None:
        self._app: Starlette | None = None
        self._handler: BcpRequestHandler | None = None
        self._dispatcher: BcpDispatcher | None = None
        self._direct_actions = direct_actions

    def _build(self) -> Starlette:
        if self._app is None:
            self._handler = BcpRequestHandler(
                agent_executor=BcpAgentExecutor(),
                task_store=BcpTaskStore(),
                # The SDK reads only the card's capabilities and input modes (never served from here: the
                # endpoint builds the card with the store's current name), so no query at start-up for its name.
                agent_card=agent_card(settings.SHOP_NAME),
                push_config_store=BcpPushConfigStore(),
                push_url_validator=push_url_ok,
                event_stream=BcpTaskEventStream(),
            )
            self._handler.direct_actions = self._direct_actions
            self._dispatcher = dispatcher = BcpDispatcher(
                request_handler=self._handler, context_builder=BcpCallContextBuilder()
            )
            self._app = Starlette(
                routes=[
                    Route(A2A_PATH, dispatcher.handle_requests, methods=["POST"]),
                    Route(AGENT_CARD_PATH, agent_card_endpoint, methods=["GET"]),
                ]
            )
        return self._app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        app = self._build()
        if (
            self._dispatcher is not None
            and scope["type"] == "http"
            and scope.get("method") == "POST"
            and scope.get("path") == A2A_PATH
            and not scope.get("root_path")
        ):
            await _rpc(self._dispatcher, scope, receive, send)
            return
        await app(scope, receive, send)

    async def startup(self) -> None:
        self._build()

    async def shutdown(self) -> None:
        # Forget the closed handler: a later server in the same process (tests) builds a fresh one.
        handler, self._handler, self._app, self._dispatcher = self._handler, None, None, None
        if handler is not None:
            await handler.aclose()


asgi_app = A2AApplication()
