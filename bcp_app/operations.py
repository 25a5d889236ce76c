"""Transport-neutral BCP operations: REST, MCP and A2A call exactly these and only render the result.

Contract (for every transport):

    op(ctx: RequestContext, ...) -> OperationResult(status_code, body, headers, replayed)

* `ctx` comes from `bcp_app.context.resolve_context` (negotiated capabilities, caller, language,
  idempotency key). Operations never look at HTTP, JSON-RPC or A2A envelopes.
* Request bodies may be passed as the pydantic request model or as a plain mapping (validated
  here, unknown members ignored per BCP §1); a type error raises `ProtocolError("invalid_request")`
  naming the field, e.g. `line_items[0].quantity`.
* A business outcome is always an `OperationResult`: `body` is the BCP object (checkout, order,
  catalog response) or the §5.3 Error Response (`not_found`, `unauthorized`,
  `capabilities_incompatible`, impossible create); `status_code` is 201 for a created checkout and
  200 otherwise (REST uses it; MCP/A2A ignore it).
* A protocol failure raises `bcp_app.errors.ProtocolError` (nothing changed); transports map it
  to their error shape (REST status + `{code, content}`, JSON-RPC code + `data`).
* Idempotency is applied by the transport around the call with `bcp_app.idempotency.run` because
  the fingerprint is transport-specific (REST raw body, MCP JCS of name+arguments, A2A messageId);
  `idempotency.KEY_REQUIRED` says which operations need a key.

Operations: create_checkout, get_checkout, update_checkout, complete_checkout, cancel_checkout,
get_order, search_catalog, lookup_catalog, get_product; and for the agent tools that are not BCP
objects (A2A intents, seed 002 tools): find_products, stock_check, order_state (written in
operations_agent.py). Synchronous (ORM); async transports call them through `asgiref.sync.sync_to_async`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from bcp_app import ap2, catalog, presenters, ratelimit
from bcp_app.carts import cancel_cart, checkout_from_cart, create_cart, get_cart, link_cart, update_cart
from bcp_app.constants import (
    AP2_MANDATE,
    CART,
    CATALOG_LOOKUP,
    CATALOG_SEARCH,
    CHECKOUT,
    DISCOUNT,
    FULFILLMENT,
    ORDER,
)
from bcp_app.context import RequestContext
from bcp_app.errors import ProtocolError, error_response
from bcp_app.inputs import buyer_input, context_input, line_inputs
from bcp_app.policies import policies_json, search_policies
from bcp_app.results import OperationResult
from bcp_app.schemas import LookupResponse, ProductResponse, SearchResponse
from bcp_app.schemas.catalog import LOOKUP_MAX_IDS, GetProductRequest, LookupRequest, SearchRequest
from bcp_app.schemas.checkout import (
    CheckoutCancelRequest,
    CheckoutCompleteRequest,
    CheckoutCreateRequest,
    CheckoutResponse,
    CheckoutUpdateRequest,
    CheckoutWrite,
)
from bcp_app.schemas.order import OrderResponse
from bcp_app.schemas.payment import PaymentIn
from shop.checkout import types as ct

__all__ = [
    "OperationResult",
    "StockLine",
    "cancel_cart",
    "cancel_checkout",
    "complete_checkout",
    "create_cart",
    "create_checkout",
    "find_products",
    "get_cart",
    "get_checkout",
    "get_order",
    "get_product",
    "lookup_catalog",
    "order_state",
    "search_catalog",
    "search_policies",
    "stock_check",
    "update_cart",
    "update_checkout",
]

TEXTS = {
    "checkout_not_found": {"pt-br": "Checkout não encontrado.", "en": "Checkout not found."},
    "order_not_found": {"pt-br": "Pedido não encontrado.", "en": "Order not found."},
    "order_unauthorized": {"pt-br": "Sem autorização para acessar este pedido.",
                           "en": "Not authorized to access this order."},
    "product_not_found": {"pt-br": "Produto não encontrado.", "en": "Product not found."},
    "incompatible": {"pt-br": "A plataforma não negociou a capacidade necessária ({name}).",
                     "en": "The platform did not negotiate the required capability ({name})."},
    "nothing_created": {"pt-br": "Nenhum item pôde ser incluído no checkout.",
                        "en": "None of the items could be added to a checkout."},
    "unknown_id": {"pt-br": "Id não encontrado: {id}.", "en": "Unknown id: {id}."},
}


def _text(ctx: RequestContext, key: str, **kwargs: str) -> str:
    return TEXTS[key]["en" if ctx.language == "en" else "pt-br"].format(**kwargs)


def field_path(loc: tuple[Any, ...]) -> str:
    """pydantic `loc` → `line_items[0].quantity`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(corpo)"


def validate[M: BaseModel](model: type[M], body: M | Mapping[str, Any] | None, *, prefix: str = "") -> M:
    if isinstance(body, model):
        return body
    if body is None:
        body = {}
    if not isinstance(body, Mapping):
        raise ProtocolError("invalid_request", f"{prefix or 'O corpo'} deve ser um objeto JSON.")
    try:
        return model.model_validate(dict(body))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = field_path(tuple(first["loc"]))
        where = f"{prefix}.{where}" if prefix else where
        raise ProtocolError("invalid_request", f"Campo inválido {where}: {first['msg']}") from exc


def _incompatible(ctx: RequestContext, name: str, *capabilities: str) -> OperationResult:
    return OperationResult(
        200,
        error_response("capabilities_incompatible", _text(ctx, "incompatible", name=name),
                       capabilities=ctx.ucp_capabilities(*capabilities) or None),
    )


def _checkout_result(ctx: RequestContext, result: ct.CheckoutResult, status: int = 200) -> OperationResult:
    from shop.checkout.selectors import checkout_view

    body = CheckoutResponse.produce(presenters.checkout(checkout_view(result.checkout, messages=result.messages), ctx))
    return OperationResult(status, ap2.sign_response(ctx, body))  # AP2: merchant_authorization (BCP-PAY-09)


def _not_found_checkout(ctx: RequestContext) -> OperationResult:
    return OperationResult(200, error_response("not_found", _text(ctx, "checkout_not_found"),
                                               capabilities=ctx.ucp_capabilities(CHECKOUT) or None))


# --- request model → engine input ---------------------------------------------------------------------


def _payment(payment: PaymentIn | None) -> ct.PaymentInput | None:
    if payment is None:
        return None
    return ct.PaymentInput(instruments=tuple(
        ct.InstrumentInput(
            id=i.id, handler_id=i.handler_id, type=i.type, selected=i.selected,
            credential=({"type": i.credential.type, "token": i.credential.token} if i.credential else None),
            installments=i.installments or 1,
        )
        for i in payment.instruments
    ))


def _checkout_input(ctx: RequestContext, body: CheckoutWrite, *, update: bool) -> ct.CheckoutInput:
    fulfillment = None
    if ctx.has(FULFILLMENT):  # BCP-NEG-08: inputs of inactive extensions are ignored
        methods = []
        for m in (body.fulfillment.methods if body.fulfillment else []):
            destinations = tuple(
                ct.AddressInput(
                    id=d.id, first_name=d.first_name, last_name=d.last_name, phone_number=d.phone_number,
                    street_address=d.street_address, extended_address=d.extended_address,
                    address_locality=d.address_locality, address_region=d.address_region,
                    postal_code=d.postal_code, address_country=d.address_country or "BR",
                )
                for d in m.destinations
                if d.type == "shipping_address"  # BCP-FUL-03: platform-written pickup destinations ignored
            )
            methods.append(ct.FulfillmentMethodInput(
                type=m.type,  # type: ignore[arg-type]  # the engine rejects unknown method types
                id=m.id, line_item_ids=tuple(m.line_item_ids), destinations=destinations,
                selected_destination_id=m.selected_destination_id,
                groups=tuple(ct.GroupInput(id=g.id, selected_option_id=g.selected_option_id) for g in m.groups),
            ))
        fulfillment = ct.FulfillmentInput(methods=tuple(methods))
    codes = None
    if ctx.has(DISCOUNT):
        codes = tuple(body.discounts.codes) if body.discounts else ()
    return ct.CheckoutInput(
        lines=line_inputs(body, update=update), buyer=buyer_input(ctx, body.buyer), fulfillment=fulfillment,
        discount_codes=codes, payment=_payment(body.payment), context=context_input(body.context),
        signals=dict(body.signals or {}),
    )


def _language(ctx: RequestContext, body: CheckoutWrite) -> str:
    if body.context is not None and body.context.language:
        return "en" if body.context.language.lower().startswith("en") else "pt-br"
    return ctx.language


def _input_error(exc: Exception) -> ProtocolError:
    path = getattr(exc, "path", "") or ""
    content = getattr(exc, "content", str(exc))
    return ProtocolError("invalid_request", f"{path}: {content}" if path else content)


def _owned(ctx: RequestContext, checkout: Any) -> bool:
    """A checkout created by a platform is visible only to that platform (others get `not_found`)."""
    return not checkout.platform_id or checkout.platform_id == ctx.platform_id


# --- checkout -------------------------------------------------------------------------------------------


def create_checkout(ctx: RequestContext, body: CheckoutCreateRequest | Mapping[str, Any]) -> OperationResult:
    from shop import services

    request = validate(CheckoutCreateRequest, body)
    if not ctx.has(CHECKOUT):
        return _incompatible(ctx, CHECKOUT)
    # Every transport creates checkouts here, so one budget covers REST, MCP and A2A alike.
    ratelimit.enforce_checkout_create(platform_id=ctx.platform_id, client_ip=ctx.extra.get("client_ip"))
    data = _checkout_input(ctx, request, update=False)
    if request.cart_id is not None and ctx.has(CART):  # BCP §4.3: the cart wins; its incomplete checkout is reused
        converted = checkout_from_cart(ctx, request.cart_id, data)
        if isinstance(converted, str):
            return get_checkout(ctx, converted)
        if isinstance(converted, OperationResult):
            return converted
        data = converted
    try:
        result = services.checkout_create(data=data, platform_id=ctx.platform_id, language=_language(ctx, request),
                                          session_key=ctx.extra.get("session_key") or "",  # permalinks
                                          mandate_required=ctx.has(AP2_MANDATE))  # PIX.md §7: locked to AP2
    except services.CheckoutCreateImpossible as exc:
        reasons = [{**message, "severity": "unrecoverable"} for message in presenters.messages(exc.messages)]
        return OperationResult(200, error_response("item_unavailable", _text(ctx, "nothing_created"),
                                                   capabilities=ctx.ucp_capabilities(CHECKOUT) or None,
                                                   messages=reasons or None))
    except services.CheckoutInputError as exc:
        raise _input_error(exc) from exc
    if request.cart_id is not None and ctx.has(CART):
        link_cart(request.cart_id, result.checkout.public_id)
    return _checkout_result(ctx, result, status=201)


def get_checkout(ctx: RequestContext, checkout_id: str) -> OperationResult:
    from shop import services

    if not ctx.has(CHECKOUT):
        return _incompatible(ctx, CHECKOUT)
    try:
        result = services.checkout_get(checkout_id=str(checkout_id))
    except services.CheckoutNotFound:
        return _not_found_checkout(ctx)
    if not _owned(ctx, result.checkout):
        return _not_found_checkout(ctx)
    return _checkout_result(ctx, result)


def update_checkout(
    ctx: RequestContext, checkout_id: str, body: CheckoutUpdateRequest | Mapping[str, Any]
) -> OperationResult:
    from shop import services

    request = validate(CheckoutUpdateRequest, body)
    if not ctx.has(CHECKOUT):
        return _incompatible(ctx, CHECKOUT)
    try:
        result = services.checkout_update(checkout_id=str(checkout_id), owner=ctx.platform_id,
                                          data=_checkout_input(ctx, request, update=True))
    except services.CheckoutNotFound:
        return _not_found_checkout(ctx)
    except services.CheckoutInputError as exc:
        raise _input_error(exc) from exc
    return _checkout_result(ctx, result)


def complete_checkout(
    ctx: RequestContext, checkout_id: str, body: CheckoutCompleteRequest | Mapping[str, Any]
) -> OperationResult:
    from shop import services

    request = validate(CheckoutCompleteRequest, body)
    if not ctx.has(CHECKOUT):
        return _incompatible(ctx, CHECKOUT)
    if ctx.has(AP2_MANDATE):  # AP2 (PIX.md §7.3): the checkout mandate is verified before any payment
        seen = get_checkout(ctx, checkout_id)
        if "id" not in seen.body:  # not found, or another platform's: that answer, before any mandate check
            return seen
        current = seen.body
        if (refusal := ap2.mandate_refusal(ctx, current, request.ap2)) is not None:
            return OperationResult(200, refusal)
    payment = _payment(request.payment) or ct.PaymentInput()
    # BCP §11.2 / BCP-PAY-03: the instrument's handler must be one this checkout offers this platform.
    offered = tuple(entry["id"] for entries in presenters.payment_handlers(None, ctx).values() for entry in entries)
    data = ct.CompleteInput(payment=payment, signals=dict(request.signals or {}), offered_handler_ids=offered)
    try:
        result = services.checkout_complete(checkout_id=str(checkout_id), owner=ctx.platform_id, data=data)
    except services.CheckoutNotFound:
        return _not_found_checkout(ctx)
    except services.CheckoutInputError as exc:
        raise _input_error(exc) from exc
    return _checkout_result(ctx, result)


def cancel_checkout(
    ctx: RequestContext, checkout_id: str, body: CheckoutCancelRequest | Mapping[str, Any] | None = None
) -> OperationResult:
    from shop import services

    validate(CheckoutCancelRequest, body)
    if not ctx.has(CHECKOUT):
        return _incompatible(ctx, CHECKOUT)
    try:
        result = services.checkout_cancel(checkout_id=str(checkout_id), owner=ctx.platform_id)
    except services.CheckoutNotFound:
        return _not_found_checkout(ctx)
    return _checkout_result(ctx, result)


# --- order ----------------------------------------------------------------------------------------------


def get_order(ctx: RequestContext, order_id: str) -> OperationResult:
    """BCP §7 Get Order: only the originating platform may read it (BCP-ORD-02)."""
    from orders.selectors import order_presented

    if not ctx.has(ORDER):
        return _incompatible(ctx, ORDER)
    caps = ctx.ucp_capabilities(ORDER)
    if not ctx.authenticated or ctx.platform_id is None:
        return OperationResult(200, error_response("unauthorized", _text(ctx, "order_unauthorized"), capabilities=caps))
    order = order_presented(str(order_id))
    if order is None:
        return OperationResult(200, error_response("not_found", _text(ctx, "order_not_found"), capabilities=caps))
    if order.platform_id != ctx.platform_id:
        return OperationResult(200, error_response("unauthorized", _text(ctx, "order_unauthorized"), capabilities=caps))
    return OperationResult(200, OrderResponse.produce(presenters.order(order, ctx)))


# --- catalog --------------------------------------------------------------------------------------------


def _catalog_ucp(ctx: RequestContext, name: str) -> dict[str, Any]:
    return {"version": ctx.capabilities.get(name, "2026-07-28"), "capabilities": ctx.ucp_capabilities(name)}


def search_catalog(ctx: RequestContext, body: SearchRequest | Mapping[str, Any]) -> OperationResult:
    from shop.selectors import CatalogQueryError

    request = validate(SearchRequest, body)
    if not ctx.has(CATALOG_SEARCH):
        return _incompatible(ctx, CATALOG_SEARCH)
    filters = request.filters
    query = (request.query or "").strip()
    has_filters = filters is not None and (filters.categories or (filters.price and (
        filters.price.min is not None or filters.price.max is not None)))
    if not query and not has_filters:
        raise ProtocolError("invalid_request", "Informe query ou filters (BCP-CAT-01).")
    pagination = request.pagination
    try:
        products, page_info = catalog.search(
            query=query,
            categories=list(filters.categories) if filters else [],
            price_min=filters.price.min if filters and filters.price else None,
            price_max=filters.price.max if filters and filters.price else None,
            cursor=pagination.cursor if pagination else None,
            limit=pagination.limit if pagination else 10,
        )
    except ValueError as exc:
        if isinstance(exc, CatalogQueryError):
            field = {"q": "query", "category": "filters.categories[0]", "price_min": "filters.price.min",
                     "price_max": "filters.price.max", "page": "pagination.cursor",
                     "per_page": "pagination.limit"}.get(exc.field, exc.field)
            raise ProtocolError("invalid_request", f"Campo inválido {field}: {exc.message}") from exc
        raise ProtocolError("invalid_request", "Campo inválido pagination.cursor: cursor desconhecido.") from exc
    body_out = {"ucp": _catalog_ucp(ctx, CATALOG_SEARCH), "products": products, "pagination": page_info,
                "policies": policies_json(ctx.language)}
    return OperationResult(200, SearchResponse.produce(body_out))


def lookup_catalog(ctx: RequestContext, body: LookupRequest | Mapping[str, Any]) -> OperationResult:
    request = validate(LookupRequest, body)
    if len(request.ids) > LOOKUP_MAX_IDS:
        raise ProtocolError("request_too_large", f"ids aceita no máximo {LOOKUP_MAX_IDS} itens.")
    if not ctx.has(CATALOG_LOOKUP):
        return _incompatible(ctx, CATALOG_LOOKUP)
    products, missing = catalog.lookup(list(request.ids))
    body_out: dict[str, Any] = {"ucp": _catalog_ucp(ctx, CATALOG_LOOKUP), "products": products,
                                "policies": policies_json(ctx.language)}
    if missing:
        body_out["messages"] = [{"type": "info", "code": "not_found", "content": _text(ctx, "unknown_id", id=i)}
                                for i in missing]
    return OperationResult(200, LookupResponse.produce(body_out))


def get_product(ctx: RequestContext, body: GetProductRequest | Mapping[str, Any]) -> OperationResult:
    request = validate(GetProductRequest, body)
    if not ctx.has(CATALOG_LOOKUP):
        return _incompatible(ctx, CATALOG_LOOKUP)
    product = catalog.get_product(request.id, [(s.name, s.label) for s in request.selected],
                                  list(request.preferences))
    if product is None:
        return OperationResult(200, error_response("not_found", _text(ctx, "product_not_found"),
                                                   capabilities=ctx.ucp_capabilities(CATALOG_LOOKUP) or None))
    return OperationResult(200, ProductResponse.produce({"ucp": _catalog_ucp(ctx, CATALOG_LOOKUP), "product": product,
                                                         "policies": policies_json(ctx.language)}))


# The agent tools' operations (A2A intents, seed 002 tools) live beside this module; they are part of it.
from bcp_app.operations_agent import StockLine, find_products, order_state, stock_check  # noqa: E402
