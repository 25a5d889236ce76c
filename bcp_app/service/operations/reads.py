"""Reads: an order (BCP §8) and the catalog (search, lookup, product)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bcp_app.protocol.errors import ProtocolError, error_response
from bcp_app.protocol.names import (
    CATALOG_LOOKUP,
    CATALOG_SEARCH,
    ORDER,
)
from bcp_app.protocol.results import OperationResult
from bcp_app.protocol.schemas import LookupResponse, ProductResponse, SearchResponse
from bcp_app.protocol.schemas.catalog import LOOKUP_MAX_IDS, GetProductRequest, LookupRequest, SearchRequest
from bcp_app.protocol.validation import validate
from bcp_app.service import catalog
from bcp_app.service.context import RequestContext
from bcp_app.service.operations.base import incompatible, text
from bcp_app.service.operations.order_body import live_parts, row_result
from bcp_app.service.policies import policies_json
from orders.selectors import order_row
from shop.catalog.selectors import CatalogQueryError

# --- order ----------------------------------------------------------------------------------------------


def get_order(ctx: RequestContext, order_id: str) -> OperationResult:
    """BCP §7 Get Order: only the originating platform may read it (BCP-ORD-02)."""
    if not ctx.has(ORDER):
        return incompatible(ctx, ORDER)
    caps = ctx.ucp_capabilities(ORDER)
    if not ctx.authenticated or ctx.platform_id is None:
        return OperationResult(200, error_response("unauthorized", text(ctx, "order_unauthorized"), capabilities=caps))
    row = order_row(str(order_id), whole=live_parts(ctx))  # a stored presentation's body reads a few columns
    if row is None:
        return OperationResult(200, error_response("not_found", text(ctx, "order_not_found"), capabilities=caps))
    if row.platform_id != ctx.platform_id:
        return OperationResult(200, error_response("unauthorized", text(ctx, "order_unauthorized"), capabilities=caps))
    return row_result(row, ctx)  # remembered per process while the stored order is unchanged


# --- catalog --------------------------------------------------------------------------------------------


def _catalog_ucp(ctx: RequestContext, name: str) -> dict[str, Any]:
    return {"version": ctx.capabilities.get(name, "2026-07-28"), "capabilities": ctx.ucp_capabilities(name)}


def search_catalog(ctx: RequestContext, body: SearchRequest | Mapping[str, Any]) -> OperationResult:
    request = validate(SearchRequest, body)
    if not ctx.has(CATALOG_SEARCH):
        return incompatible(ctx, CATALOG_SEARCH)
    filters = request.filters
    query = (request.query or "").strip()
    has_filters = filters is not None and (
        filters.categories or (filters.price and (filters.price.min is not None or filters.price.max is not None))
    )
    if not query and not has_filters:
        # BCP-CAT-01; the field as the caller wrote it: REST's body is the search, MCP/A2A wrap it in `catalog`.
        prefix = "" if ctx.transport == "rest" else "catalog."
        raise ProtocolError("invalid_request", text(ctx, "search_empty", prefix=prefix))
    pagination = request.pagination
    # The field as a JSONPath in what the caller sent (README "Language"): MCP/A2A wrap the search in `catalog`.
    root = "$." if ctx.transport == "rest" else "$.catalog."
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
            field = {
                "q": "query",
                "category": "filters.categories[0]",
                "price_min": "filters.price.min",
                "price_max": "filters.price.max",
                "page": "pagination.cursor",
                "per_page": "pagination.limit",
            }.get(exc.field, exc.field)
            why = exc.message  # a sentence of the storefront's ("A página 2 não existe"), continued after the colon
            why = why[:1].lower() + why[1:] if why[1:2].islower() or why[1:2] == " " else why
            raise ProtocolError("invalid_request", f"Campo inválido {root}{field}: {why}") from exc
        raise ProtocolError("invalid_request", f"Campo inválido {root}pagination.cursor: cursor desconhecido.") from exc
    body_out = {
        "ucp": _catalog_ucp(ctx, CATALOG_SEARCH),
        "products": products,
        "pagination": page_info,
        "policies": policies_json(ctx.language),
    }
    return OperationResult(200, SearchResponse.produce(body_out))


def lookup_catalog(ctx: RequestContext, body: LookupRequest | Mapping[str, Any]) -> OperationResult:
    request = validate(LookupRequest, body)
    if len(request.ids) > LOOKUP_MAX_IDS:
        raise ProtocolError("request_too_large", f"ids aceita no máximo {LOOKUP_MAX_IDS} itens.")
    if not ctx.has(CATALOG_LOOKUP):
        return incompatible(ctx, CATALOG_LOOKUP)
    products, missing = catalog.lookup(list(request.ids))
    body_out: dict[str, Any] = {
        "ucp": _catalog_ucp(ctx, CATALOG_LOOKUP),
        "products": products,
        "policies": policies_json(ctx.language),
    }
    if missing:
        body_out["messages"] = [
            {"type": "info", "code": "not_found", "content": text(ctx, "unknown_id", id=i)} for i in missing
        ]
    return OperationResult(200, LookupResponse.produce(body_out))


def get_product(ctx: RequestContext, body: GetProductRequest | Mapping[str, Any]) -> OperationResult:
    request = validate(GetProductRequest, body)
    if not ctx.has(CATALOG_LOOKUP):
        return incompatible(ctx, CATALOG_LOOKUP)
    product = catalog.get_product(request.id, [(s.name, s.label) for s in request.selected], list(request.preferences))
    if product is None:
        return OperationResult(
            200,
            error_response(
                "not_found", text(ctx, "product_not_found"), capabilities=ctx.ucp_capabilities(CATALOG_LOOKUP) or None
            ),
        )
    return OperationResult(
        200,
        ProductResponse.produce(
            {"ucp": _catalog_ucp(ctx, CATALOG_LOOKUP), "product": product, "policies": policies_json(ctx.language)}
        ),
    )
