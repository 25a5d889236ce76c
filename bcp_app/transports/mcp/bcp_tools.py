"""BCP §13.2 tools over `bcp_app.service.operations`: parse → resolve the caller → operation → render.

Arguments are strict at the top level (an unknown or misspelled key is -32602 naming it), tolerant
inside `meta` and inside BCP entity bodies (BCP §1: unknown members are ignored). A missing
`meta["ucp-agent"].profile` is -32001 `invalid_profile_url` (BCP-MCP-03, seed 000 conformance).
Mutations honour `meta["idempotency-key"]` with the MCP fingerprint of §12 (SHA-256 of
JCS({name, arguments})). Business outcomes, including Error Responses, are `structuredContent` +
one text block; never JSON-RPC errors and never `isError` (BCP-MCP-06).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import ConfigDict, Field, StrictStr, TypeAdapter, ValidationError

from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.field_errors import describe
from bcp_app.protocol.results import OperationResult
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
from bcp_app.protocol.schemas.policies import PoliciesSearchResponse
from bcp_app.protocol.schemas.text import NoControlCharacters
from bcp_app.protocol.signatures import HttpMessage
from bcp_app.service import idempotency, operations
from bcp_app.service.catalogue.contracts import input_schema
from bcp_app.service.context import SignedRequest, resolve_context
from bcp_app.transports.mcp.core import CallInfo, McpTool, ToolOutcome, api_key_from, output_validator
from bcp_app.transports.mcp.typed_tools import invalid_params

META_KEY_FIELD = 'meta["idempotency-key"]'
READ_ONLY = frozenset({"get_checkout", "get_order", "search_catalog", "lookup_catalog", "get_product",
                       "policies.search", "get_cart"})
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
        description="UUID para repetir com segurança (BCP §12); obrigatório em complete_checkout e cancel_checkout.",
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


class PoliciesSearchArgs(Args):
    query: Annotated[StrictStr, Field(min_length=1, max_length=500)] = Field(
        description="A pergunta do comprador sobre as políticas da loja, ex. \"qual é a política de trocas?\"."
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
            "Conclui o checkout com um instrumento de pagamento (Pix); exige meta['idempotency-key'].",
            CompleteCheckoutArgs,
            CheckoutResult,
            lambda ctx, a: _ops().complete_checkout(ctx, a.id, a.checkout),
            key_required=True,
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
            lambda ctx, a: _ops().create_cart(ctx, a.cart),
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
            lambda ctx, a: _ops().update_cart(ctx, a.id, a.cart),
        ),
        BcpToolSpec(
            "cancel_cart",
            "Cancela um carrinho; devolve o estado anterior e depois o id passa a não existir.",
            IdArgs,
            CartResponse | ErrorResponse,
            lambda ctx, a: _ops().cancel_cart(ctx, a.id),
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


def _context(call: CallInfo, args: Args, operation: str) -> Any:
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
        counted=call.counted,
    )


def _render(result: OperationResult, spec: BcpToolSpec, encoded: bytes) -> ToolOutcome:
    body = result.body
    if result.is_error_response and body.get("messages"):
        # Seed 000: an Error Response's text block carries the human message.
        return ToolOutcome(structured=body, text=str(body["messages"][0].get("content", "")))
    if spec.text is not None:
        return ToolOutcome(structured=body, text=spec.text(body))
    return ToolOutcome(structured=body, text=encoded.decode())  # a replay: the stored text verbatim


def _runner(spec: BcpToolSpec, validate_output: Callable[..., None]) -> Callable[[CallInfo], ToolOutcome]:
    def run(call: CallInfo) -> ToolOutcome:
        _check_meta(call.arguments)
        if spec.key_required:  # BCP-IDEM-02: the key before the body, as over REST (`_check_meta` made meta a dict)
            key = call.arguments["meta"].get("idempotency-key")
            idempotency.check_key(key, operation=spec.name, field_name=META_KEY_FIELD)
        try:
            args = spec.args.model_validate(call.arguments)
        except ValidationError as exc:
            summary, fields = describe(exc)  # Portuguese, every offending key named
            raise invalid_params(f"Argumentos inválidos para {spec.name}: {summary}", fields) from None
        ctx = _context(call, args, spec.name)
        if spec.name in idempotency.IDEMPOTENT_OPERATIONS:
            result = idempotency.run(
                principal=ctx.principal,
                operation=spec.name,
                key=args.meta.idempotency_key,
                fingerprint=idempotency.mcp_fingerprint(spec.name, call.arguments),
                execute=lambda: spec.execute(ctx, args),
                field_name=META_KEY_FIELD,
            )
        else:
            result = spec.execute(ctx, args)
        encoded = result.encoded  # encoded once: the validation memo's key and the text block
        validate_output(result.body, encoded)
        return _render(result, spec, encoded)

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


def bcp_tools() -> list[McpTool]:
    tools = []
    for spec in _specs():
        schema, output = _schemas(spec)
        tools.append(
            McpTool(
                name=spec.name,
                description=spec.description,
                input_schema=schema,
                output_schema=output,
                run=_runner(spec, output_validator(spec.name, output)),
                read_only=spec.name in READ_ONLY,
            )
        )
    return tools
