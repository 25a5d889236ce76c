"""Every tool the MCP server lists — the BCP tools of §13.2 and the typed catalogue tools of seed 002 — and
the pieces they share between HTTP (`server`) and stdio (`manage.py mcp_stdio`).

A tool is a plain synchronous function `run(call) -> ToolOutcome` that runs on the event loop's bounded
default executor (`kernel.threads.in_thread`: calls run side by side instead of queueing on one
thread-sensitive thread, and no thread is started per call), with the database connection handed
back to the pool afterwards so no connection outlives the call. Protocol failures are raised as
`bcp_app.protocol.errors.ProtocolError` and rendered as JSON-RPC errors with `data{code, content}`; any
other exception becomes a bare -32603 (no internals leaked).

Typed catalogue tools (seed 002): strict input, validated output, domain errors in the seed's envelope
(`status: "error"`), protocol errors as JSON-RPC errors.

BCP tools (§13.2) over `bcp_app.service.operations`: parse → resolve the caller → operation → render.
Arguments are strict at the top level (an unknown or misspelled key is -32602 naming it), tolerant inside
`meta` and inside BCP entity bodies (BCP §1: unknown members are ignored). A missing
`meta["ucp-agent"].profile` is -32001 `invalid_profile_url` (BCP-MCP-03, seed 000 conformance). Mutations
honour `meta["idempotency-key"]` with the MCP fingerprint of §12 (SHA-256 of JCS({name, arguments})).
Business outcomes, including Error Responses, are `structuredContent` + one text block; never JSON-RPC
errors and never `isError` (BCP-MCP-06).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

import mcp_types as types
import orjson
from django.conf import settings
from django.db import close_old_connections, connections
from jsonschema.validators import validator_for
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict, Field, StrictStr, TypeAdapter, ValidationError

from bcp_app.protocol.errors import PROTOCOL_ERRORS, ProtocolError
from bcp_app.protocol.field_errors import describe
from bcp_app.protocol.results import OperationResult, body_bytes
from bcp_app.protocol.schemas.cart import CartCreateRequest, CartResponse, CartUpdateRequest
from bcp_app.protocol.schemas.catalog import (
    GetProductRequest,
    LookupRequest,
    LookupResponse,
    ProductResponse,
    SearchRequest,
    SearchResponse,
)
from bcp_app.protocol.schemas.checkout import (
    CheckoutCompleteRequest,
    CheckoutCreateRequest,
    CheckoutResponse,
    CheckoutUpdateRequest,
)
from bcp_app.protocol.schemas.common import ErrorResponse
from bcp_app.protocol.schemas.order import OrderResponse
from bcp_app.protocol.schemas.order_actions import CancelOrderRequest, RequestReturnRequest
from bcp_app.protocol.schemas.policies import PoliciesSearchResponse
from bcp_app.protocol.schemas.subscription import SubscriptionCreateRequest, SubscriptionResponse
from bcp_app.protocol.schemas.text import NoControlCharacters
from bcp_app.protocol.signatures import HttpMessage
from bcp_app.service import idempotency, operations, ratelimit
from bcp_app.service.catalogue import TYPED_TOOLS, Caller, TypedTool
from bcp_app.service.catalogue.contracts import describe_validation_error, error_result, input_schema, output_schema
from bcp_app.service.context import SignedRequest, normalize_language, resolve_context
from bcp_app.service.platforms import platform_authenticate
from kernel import threads
from kernel.ops import request_cache
from kernel.ops.request_cache import request_scope

logger = logging.getLogger("bcp_app.transports.mcp.server")


@dataclass(frozen=True)
class CallInfo:
    """One `tools/call`: the tool name, raw arguments and, over HTTP, what identifies the caller."""

    name: str
    arguments: dict[str, Any]
    transport: str = "http"  # "http" | "stdio"
    method: str = "POST"
    authority: str = ""
    path: str = "/bcp/mcp"
    query: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""
    protocol_version: str = ""
    client: str = ""  # client IP over HTTP
    meta: Mapping[str, Any] = field(default_factory=dict)  # the request's `_meta` (UCP's face reads its profile there)


@dataclass(frozen=True)
class ToolOutcome:
    """`structuredContent` and the text of the single `content` block (its JSON unless said otherwise)."""

    structured: dict[str, Any]
    text: str | None = None
    # The calling platform's resolved profile (not sent): UCP's face answers in the UCP version it was written in.
    profile: Any = None

    def as_result(self) -> types.CallToolResult:
        text = self.text if self.text is not None else compact_json(self.structured)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=self.structured
        )


@dataclass(frozen=True)
class McpTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    run: Callable[[CallInfo], ToolOutcome]
    read_only: bool = False
    # Typed tools answer a rate limit in the seed's envelope; BCP tools raise the §5.4 protocol error.
    on_rate_limited: Callable[[int], ToolOutcome] | None = None

    def as_tool(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=types.ToolAnnotations(read_only_hint=self.read_only, destructive_hint=False),
        )


class OutputContractError(Exception):
    """Our own output broke its published `outputSchema`: a bug, logged and answered as -32603."""


VALIDATED_MEMO_SIZE = 1024  # distinct outputs remembered as valid per tool and process
# Digests of output schemas already checked against their metaschema in this process: the check is most of an
# application's start (each MCP face builds its tools), and a schema checked once stays valid.
_CHECKED_SCHEMAS: set[bytes] = set()


def output_validator(name: str, schema: dict[str, Any] | None) -> Callable[..., None]:
    """Validate a result against the exact `outputSchema` clients check it with, before it leaves.

    Outputs already found valid are remembered by a digest of their wire bytes (`encoded`, else their
    compact JSON): the same order read again is the same JSON, and validating it again was most of a
    `get_order`'s CPU. A new or changed output is always validated in full.
    """
    if schema is None:
        return lambda value, encoded=None: None

    validator_cls = validator_for(schema)
    schema_digest = hashlib.blake2b(compact_json(schema).encode(), digest_size=16).digest()
    if schema_digest not in _CHECKED_SCHEMAS:
        validator_cls.check_schema(schema)
        _CHECKED_SCHEMAS.add(schema_digest)
    validator = validator_cls(schema)
    valid: set[bytes] = set()

    def validate(value: dict[str, Any], encoded: bytes | None = None) -> None:
        raw = encoded if encoded is not None else compact_json(value).encode()
        digest = hashlib.blake2b(raw, digest_size=16).digest()
        if digest in valid:
            return
        error = next(iter(validator.iter_errors(value)), None)
        if error is not None:
            raise OutputContractError(f"{name}: output violates outputSchema at {error.json_path}: {error.message}")
        if len(valid) >= VALIDATED_MEMO_SIZE:
            valid.clear()  # bounded; forgetting only costs a re-validation
        valid.add(digest)

    return validate


def compact_json(value: Any) -> str:
    return body_bytes(value).decode()  # orjson: the same compact UTF-8 JSON as json.dumps, for less CPU


def _rate_window(call: CallInfo, read_only: bool) -> Any:
    """The caller's window for this tool's class (bcp_app/service/ratelimit.py): read-only tools count as `read`, the
    others as `write`; stdio has a single local caller: no limit (None)."""
    if call.transport != "http":
        return None
    caller, authenticated = ratelimit.caller_from_headers(call.headers, call.client or None)
    return ratelimit.call_window(op_class="read" if read_only else "write", caller=caller, authenticated=authenticated)


def _run_in_django(tool: McpTool, call: CallInfo) -> ToolOutcome:
    close_old_connections()
    try:
        with request_scope():  # read-mostly cache entries once per call, as per HTTP request
            if tool.on_rate_limited is None:
                # A BCP tool: counted, and refused when over, in its identity's cache round trip
                # (bcp_app.service.context.resolve_context), before anything else is looked up (`_context`).
                return tool.run(call)
            window = _rate_window(call, tool.read_only)
            retry_after = window.retry_after(request_cache.count(window.key, window.timeout)) if window else None
            if retry_after is not None:
                return tool.on_rate_limited(retry_after)
            return tool.run(call)
    finally:
        # The executor thread is reused by other calls: hand its connection back to the pool now.
        connections.close_all()


def protocol_error_to_mcp(exc: ProtocolError) -> MCPError:
    return MCPError(exc.jsonrpc_code, exc.content, exc.jsonrpc_data())


async def run_tool(tool: McpTool, call: CallInfo) -> types.CallToolResult:
    try:
        outcome = await threads.in_thread(_run_in_django, tool, call)
    except ProtocolError as exc:
        raise protocol_error_to_mcp(exc) from None
    except MCPError:
        raise
    except Exception:
        logger.exception("MCP tool %s failed", call.name)
        error = ProtocolError("internal_error", "Erro interno; nada foi alterado. Tente novamente.")
        raise protocol_error_to_mcp(error) from None
    return outcome.as_result()


def api_key_from(call: CallInfo) -> str | None:
    """`Authorization: Bearer <key>` or `X-API-Key: <key>`; None when neither is sent."""
    authorization = call.headers.get("authorization", "").strip()
    if authorization:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ProtocolError("unauthenticated", "Use Authorization: Bearer <chave de API>.")
        return token.strip()
    api_key = call.headers.get("x-api-key", "").strip()
    return api_key or None


logger = logging.getLogger("bcp_app.transports.mcp.server")
INTERNAL = error_result("internal", "Erro interno; nada foi alterado. Tente novamente em instantes.").model_dump(
    mode="json", exclude_none=True
)


def invalid_params(content: str, fields: dict[str, str]) -> MCPError:
    """-32602 naming every offending argument (BCP-MCP-05; seed 002 `categria`)."""
    return MCPError(
        PROTOCOL_ERRORS["invalid_request"][1],
        content,
        {
            "code": "invalid_request",
            "content": content,
            "fields": fields,
        },
    )


def _rate_limited(retry_after: int) -> ToolOutcome:
    envelope = error_result(
        "rate_limited",
        "Muitas chamadas; tente novamente depois do intervalo indicado.",
        retry_after_seconds=retry_after,
    )
    return ToolOutcome(structured=envelope.model_dump(mode="json", exclude_none=True))


def _typed_runner(
    tool: TypedTool, resolve_caller: Callable[[CallInfo], Caller], validate_output: Callable[[dict], None]
) -> Callable[[CallInfo], ToolOutcome]:
    def run(call: CallInfo) -> ToolOutcome:
        try:
            args = tool.input_model.model_validate(call.arguments)
        except ValidationError as exc:
            summary, fields = describe_validation_error(exc)
            raise invalid_params(f"Argumentos inválidos para {tool.name}: {summary}", fields) from None
        caller = resolve_caller(call)
        try:
            result = tool.operation(args, caller)
            structured = tool.result.dump_python(result, mode="json", by_alias=True, exclude_none=True)
            # Seed 002: the output is parsed against its contract before it leaves the server.
            tool.result.validate_python(structured)
            validate_output(structured)
        except (ProtocolError, MCPError):
            raise
        except Exception:
            # The agent never sees corrupt data: the developer gets the typed error in the log,
            # the agent the seed's `internal` envelope.
            logger.exception("typed tool %s failed", tool.name)
            structured = INTERNAL
        return ToolOutcome(structured=structured)

    return run


def typed_tools(resolve_caller: Callable[[CallInfo], Caller]) -> list[McpTool]:
    tools = []
    for tool in TYPED_TOOLS:
        output = output_schema(tool.result)
        tools.append(
            McpTool(
                name=tool.name,
                description=tool.full_description,
                input_schema=input_schema(tool.input_model),
                output_schema=output,
                run=_typed_runner(tool, resolve_caller, output_validator(tool.name, output)),
                read_only=not tool.mutates,
                on_rate_limited=_rate_limited,
            )
        )
    return tools


META_KEY_FIELD = 'meta["idempotency-key"]'
READ_ONLY = frozenset(
    {
        "get_checkout",
        "get_order",
        "search_catalog",
        "lookup_catalog",
        "get_product",
        "policies.search",
        "get_cart",
        "get_subscription",
    }
)
ResourceId = Annotated[StrictStr, Field(min_length=1, max_length=100)]


class UcpAgent(NoControlCharacters):
    model_config = ConfigDict(extra="allow")
    profile: StrictStr = Field(description="URL https do perfil BCP da plataforma (equivale ao cabeçalho BCP-Agent).")


class Meta(NoControlCharacters):
    """Request metadata; extra members are allowed (BCP §13.2)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    ucp_agent: UcpAgent = Field(alias="ucp-agent", description="Identificação do agente: {profile}.")
    idempotency_key: StrictStr | None = Field(
        default=None,
        alias="idempotency-key",
        description=(
            "UUID para repetir com segurança (BCP §12); obrigatório em complete_checkout, cancel_checkout, "
            "cancel_order e request_return."
        ),
    )


class Args(NoControlCharacters):
    model_config = ConfigDict(extra="forbid")
    meta: Meta = Field(description="Metadados BCP: meta['ucp-agent'].profile e meta['idempotency-key'].")


class CreateCheckoutArgs(Args):
    checkout: CheckoutCreateRequest = Field(description="Estado gravável do novo checkout (BCP §4.1).")


class IdArgs(Args):
    id: ResourceId = Field(description="Id do recurso (checkout `checkout_…` ou pedido `order_…`).")


class UpdateCheckoutArgs(IdArgs):
    checkout: CheckoutUpdateRequest = Field(
        description="Estado gravável completo (substituição total); um `id` aqui dentro é ignorado."
    )


class CompleteCheckoutArgs(IdArgs):
    checkout: CheckoutCompleteRequest = Field(description="`payment` com exatamente um instrumento; `signals`, `ap2`.")


class SearchCatalogArgs(Args):
    catalog: SearchRequest = Field(description="Busca (BCP §16): query e/ou filters, pagination opcional.")


class LookupCatalogArgs(Args):
    catalog: LookupRequest = Field(description="Consulta em lote (BCP §16): ids de produto ou SKU.")


class GetProductArgs(Args):
    catalog: GetProductRequest = Field(description="Produto (BCP §16): id, selected e preferences opcionais.")


class CreateCartArgs(Args):
    cart: CartCreateRequest = Field(description="Estado gravável do novo carrinho (line_items, buyer, context).")


class UpdateCartArgs(IdArgs):
    cart: CartUpdateRequest = Field(description="Estado gravável completo do carrinho (substituição total).")


class CancelOrderArgs(IdArgs):
    cancel: CancelOrderRequest | None = Field(
        default=None, description="Cancelamento (extensão order_actions): reason opcional."
    )


class RequestReturnArgs(IdArgs):
    return_request: RequestReturnRequest = Field(
        description="Devolução (extensão order_actions): reason_code, reason e line_items [{id, quantity}]."
    )


class CreateSubscriptionArgs(Args):
    subscription: SubscriptionCreateRequest = Field(description="Plano, assinante e entrega (extensão subscription).")


class PoliciesSearchArgs(Args):
    query: Annotated[StrictStr, Field(min_length=1, max_length=500)] = Field(
        description='A pergunta do comprador sobre as políticas da loja, ex. "qual é a política de trocas?".'
    )
    language: Annotated[StrictStr, Field(max_length=35)] | None = Field(default=None, description="Idioma (BCP 47).")


@dataclass(frozen=True)
class BcpToolSpec:
    name: str
    description: str
    args: type[Args]
    result: Any  # the response model union, for outputSchema and server-side validation
    execute: Callable[[Any, Any], OperationResult]  # (ctx, validated args) -> result
    key_required: bool = False
    text: Callable[[dict[str, Any]], str] | None = None  # the text block, when not the JSON of the result
    # The engine may store the idempotent answer in its last transaction (`idempotency.run(joinable=True)`): the
    # tool sends the operation's result as it is (UCP's face reshapes what this runner returns, the stored answer
    # included, on every call), so the record holds the same body it would get after the commit.
    joinable: bool = False


def _ops() -> Any:
    return operations


CheckoutResult = CheckoutResponse | ErrorResponse
OrderResult = OrderResponse | ErrorResponse


def _specs() -> list[BcpToolSpec]:
    return [
        BcpToolSpec(
            "create_checkout",
            "Cria uma sessão de checkout BCP (line_items com item.id = SKU e quantity).",
            CreateCheckoutArgs,
            CheckoutResult,
            lambda ctx, a: _ops().create_checkout(ctx, a.checkout),
        ),
        BcpToolSpec(
            "get_checkout",
            "Devolve o estado atual de um checkout.",
            IdArgs,
            CheckoutResult,
            lambda ctx, a: _ops().get_checkout(ctx, a.id),
        ),
        BcpToolSpec(
            "update_checkout",
            "Substitui todo o estado gravável de um checkout (campos omitidos são limpos).",
            UpdateCheckoutArgs,
            CheckoutResult,
            lambda ctx, a: _ops().update_checkout(ctx, a.id, a.checkout),
        ),
        BcpToolSpec(
            "complete_checkout",
            "Conclui o checkout com um instrumento de um handler de ucp.payment_handlers do checkout (Pix, cartão "
            "com parcelas, boleto); exige meta['idempotency-key'].",
            CompleteCheckoutArgs,
            CheckoutResult,
            lambda ctx, a: _ops().complete_checkout(ctx, a.id, a.checkout),
            key_required=True,
            joinable=True,  # a card approval: the order and its answer commit together (issue 34)
        ),
        BcpToolSpec(
            "cancel_checkout",
            "Cancela um checkout não terminal; exige meta['idempotency-key'].",
            IdArgs,
            CheckoutResult,
            lambda ctx, a: _ops().cancel_checkout(ctx, a.id),
            key_required=True,
        ),
        BcpToolSpec(
            "get_order",
            "Obtém o estado atual de um pedido (instantâneo completo).",
            IdArgs,
            OrderResult,
            lambda ctx, a: _ops().get_order(ctx, a.id),
        ),
        BcpToolSpec(
            "cancel_order",
            "Cancela o que ainda não foi enviado de um pedido (estoque e valor pago por isso voltam); exige "
            "meta['idempotency-key'] "
            "(extensão br.dev.bcp.shopping.order_actions).",
            CancelOrderArgs,
            OrderResult,
            # a refusal names the member in the tool's arguments, as invalid_params does (README)
            lambda ctx, a: _ops().cancel_order(ctx, a.id, a.cancel, body_path="$.cancel"),
            key_required=True,
        ),
        BcpToolSpec(
            "request_return",
            "Pede a devolução de itens entregues dentro do prazo da política (mínimo 7 dias, CDC art. 49); a loja "
            "aprova, recebe e reembolsa. Exige meta['idempotency-key'] (extensão br.dev.bcp.shopping.order_actions).",
            RequestReturnArgs,
            OrderResult,
            lambda ctx, a: _ops().request_return(ctx, a.id, a.return_request, body_path="$.return_request"),
            key_required=True,
        ),
        BcpToolSpec(
            "search_catalog",
            "Busca produtos por texto e filtros, com paginação por cursor (padrão 10).",
            SearchCatalogArgs,
            SearchResponse | ErrorResponse,
            lambda ctx, a: _ops().search_catalog(ctx, a.catalog),
        ),
        BcpToolSpec(
            "lookup_catalog",
            "Consulta produtos ou variantes por id (lote); ids desconhecidos são omitidos.",
            LookupCatalogArgs,
            LookupResponse | ErrorResponse,
            lambda ctx, a: _ops().lookup_catalog(ctx, a.catalog),
        ),
        BcpToolSpec(
            "get_product",
            "Detalhe de um produto por id ou SKU (variante pedida primeiro), com seleção de opções.",
            GetProductArgs,
            ProductResponse | ErrorResponse,
            lambda ctx, a: _ops().get_product(ctx, a.catalog),
        ),
        BcpToolSpec(
            "create_cart",
            "Cria um carrinho (montagem da compra, sem pagamento); converta com create_checkout{cart_id}.",
            CreateCartArgs,
            CartResponse | ErrorResponse,
            lambda ctx, a: _ops().create_cart(ctx, a.cart, under=("cart",)),
        ),
        BcpToolSpec(
            "get_cart",
            "Devolve um carrinho com preços e totais estimados atuais.",
            IdArgs,
            CartResponse | ErrorResponse,
            lambda ctx, a: _ops().get_cart(ctx, a.id),
        ),
        BcpToolSpec(
            "update_cart",
            "Substitui todo o estado gravável de um carrinho (linhas não listadas saem).",
            UpdateCartArgs,
            CartResponse | ErrorResponse,
            lambda ctx, a: _ops().update_cart(ctx, a.id, a.cart, under=("cart",)),
        ),
        BcpToolSpec(
            "cancel_cart",
            "Cancela um carrinho; devolve o estado anterior e depois o id passa a não existir.",
            IdArgs,
            CartResponse | ErrorResponse,
            lambda ctx, a: _ops().cancel_cart(ctx, a.id),
        ),
        BcpToolSpec(
            "create_subscription",
            "Assina um plano (extensão br.dev.bcp.shopping.subscription): pelo Pix Automático, que o comprador "
            "autoriza no app do banco, ou por cartão (`payment` com o token do gateway: o primeiro ciclo é cobrado "
            "na hora); cada ciclo pago vira um pedido.",
            CreateSubscriptionArgs,
            SubscriptionResponse | ErrorResponse,
            lambda ctx, a: _ops().create_subscription(ctx, a.subscription.model_dump(exclude_none=True)),
        ),
        BcpToolSpec(
            "get_subscription",
            "Estado de uma assinatura: autorização, próxima cobrança e pedidos de cada ciclo.",
            IdArgs,
            SubscriptionResponse | ErrorResponse,
            lambda ctx, a: _ops().get_subscription(ctx, a.id),
        ),
        BcpToolSpec(
            "cancel_subscription",
            "Cancela uma assinatura: nenhuma nova cobrança; a recorrência é cancelada no PSP (cartão: removido).",
            IdArgs,
            SubscriptionResponse | ErrorResponse,
            lambda ctx, a: _ops().cancel_subscription(ctx, a.id),
        ),
        BcpToolSpec(
            "policies.search",
            "Responde perguntas sobre as políticas da loja (trocas e devoluções, entrega, privacidade, termos) "
            "com o texto da política.",
            PoliciesSearchArgs,
            PoliciesSearchResponse | ErrorResponse,
            lambda ctx, a: _ops().search_policies(ctx, {"query": a.query, "language": a.language}),
            text=lambda body: str(body.get("answer", "")),
        ),
    ]


def _check_meta(arguments: dict[str, Any]) -> None:
    meta = arguments.get("meta")
    agent = meta.get("ucp-agent") if isinstance(meta, dict) else None
    profile = agent.get("profile") if isinstance(agent, dict) else None
    if not isinstance(profile, str) or not profile:
        raise ProtocolError(
            "invalid_profile_url", 'meta["ucp-agent"].profile com a URL do perfil da plataforma é obrigatório.'
        )


def _api_key(call: CallInfo) -> str | None:
    return api_key_from(call)


def _context(call: CallInfo, args: Args, operation: str, read_only: bool) -> Any:
    signed = None
    if call.transport == "http" and "signature-input" in call.headers:
        message = HttpMessage(
            method=call.method, authority=call.authority, path=call.path, query=call.query, headers=call.headers
        )
        signed = SignedRequest(message=message, body=call.body)
    return resolve_context(
        transport="mcp",
        profile_url=args.meta.ucp_agent.profile,
        api_key=_api_key(call),
        signed=signed,
        idempotency_key=args.meta.idempotency_key,
        language=call.headers.get("accept-language"),
        request_id=call.headers.get("request-id"),
        client_ip=call.client or None,
        operation=operation,
        counted=_rate_window(call, read_only),  # the window is only counted there
        agent_header='meta["ucp-agent"].profile',  # where an MCP call names its profile (UCP's face renames it)
    )


def _render(result: OperationResult, spec: BcpToolSpec, encoded: bytes, profile: Any) -> ToolOutcome:
    body = result.body
    if result.is_error_response and body.get("messages"):
        # Seed 000: an Error Response's text block carries the human message.
        return ToolOutcome(structured=body, text=str(body["messages"][0].get("content", "")), profile=profile)
    if spec.text is not None:
        return ToolOutcome(structured=body, text=spec.text(body), profile=profile)
    return ToolOutcome(structured=body, text=encoded.decode(), profile=profile)  # a replay: the stored text verbatim


def _bcp_runner(spec: BcpToolSpec, validate_output: Callable[..., None]) -> Callable[[CallInfo], ToolOutcome]:
    read_only = spec.name in READ_ONLY
    # A read tool's arguments found valid, by their JSON (issue 34): an agent reads the same order again and
    # again, and validation (with the control-character walks of `NoControlCharacters`) is a pure function of
    # them; the parsed arguments are only read. Refusals are not remembered: each is described again.
    valid: dict[bytes, Args] = {}

    def _validated(arguments: dict[str, Any]) -> Args:
        key = None
        if read_only:
            try:
                key = orjson.dumps(arguments)
            except orjson.JSONEncodeError:  # e.g. an integer past 64 bits: validated as before
                key = None
            if key is not None and (known := valid.get(key)) is not None:
                return known
        try:
            args = spec.args.model_validate(arguments)
        except ValidationError as exc:
            summary, fields = describe(exc)  # Portuguese, every offending key named
            raise invalid_params(f"Argumentos inválidos para {spec.name}: {summary}", fields) from None
        if key is not None:
            if len(valid) >= VALIDATED_MEMO_SIZE:
                valid.clear()  # bounded; forgetting only costs a validation
            valid[key] = args
        return args

    def run(call: CallInfo) -> ToolOutcome:
        _check_meta(call.arguments)
        if spec.key_required:  # BCP-IDEM-02: the key before the body, as over REST (`_check_meta` made meta a dict)
            key = call.arguments["meta"].get("idempotency-key")
            idempotency.check_key(key, operation=spec.name, field_name=META_KEY_FIELD)
        args = _validated(call.arguments)
        ctx = _context(call, args, spec.name, read_only)
        if spec.name in idempotency.IDEMPOTENT_OPERATIONS:
            result = idempotency.run(
                principal=ctx.principal,
                operation=spec.name,
                key=args.meta.idempotency_key,
                fingerprint=idempotency.mcp_fingerprint(spec.name, call.arguments),
                execute=lambda: spec.execute(ctx, args),
                field_name=META_KEY_FIELD,
                joinable=spec.joinable,
            )
        else:
            result = spec.execute(ctx, args)
        encoded = result.encoded  # encoded once: the validation memo's key and the text block
        if settings.BCP_CHECK_OUTPUT:  # the body is an output model's (`Produced.produce`): checked in tests only
            validate_output(result.body, encoded)
        return _render(result, spec, encoded, ctx.profile)

    return run


def _schemas(spec: BcpToolSpec) -> tuple[dict[str, Any], dict[str, Any] | None]:
    schema = input_schema(spec.args)
    if spec.key_required:
        meta = schema["$defs"]["Meta"]
        schema["$defs"] = {**schema["$defs"], "MetaWithKey": {**meta, "required": ["ucp-agent", "idempotency-key"]}}
        schema["properties"]["meta"] = {**schema["properties"]["meta"], "$ref": "#/$defs/MetaWithKey"}
    if spec.result is None:
        return schema, None
    output = TypeAdapter(spec.result).json_schema(mode="serialization")
    return schema, {"type": "object", **output}


def bcp_tools(only: set[str] | None = None, adapt: Callable[[BcpToolSpec], BcpToolSpec] = lambda s: s) -> list[McpTool]:
    """The BCP tools, or those named in `only` (the UCP face runs five of them)."""
    tools = []
    for spec in map(adapt, _specs()):
        if only is not None and spec.name not in only:
            continue
        schema, output = _schemas(spec)
        tools.append(
            McpTool(
                name=spec.name,
                description=spec.description,
                input_schema=schema,
                output_schema=output,
                run=_bcp_runner(spec, output_validator(spec.name, output)),
                read_only=spec.name in READ_ONLY,
            )
        )
    return tools


def typed_caller(call: CallInfo) -> Caller:
    """Typed tools carry no BCP profile, so only an API key identifies the caller (anonymous otherwise)."""
    language = normalize_language(call.headers.get("accept-language"))
    api_key = api_key_from(call)
    if api_key is None:
        return Caller(language=language)
    platform = platform_authenticate(api_key, client_ip=call.client or None)
    return Caller(platform_id=platform.public_id, language=language)


def all_tools() -> list[McpTool]:
    return [*bcp_tools(), *typed_tools(typed_caller)]
