"""What every BCP operation shares: its texts, request validation and the common results."""

from __future__ import annotations

from typing import Any

from bcp_app.protocol.errors import error_response
from bcp_app.protocol.names import (
    CHECKOUT,
)
from bcp_app.protocol.results import OperationResult
from bcp_app.protocol.schemas.checkout import (
    CheckoutResponse,
)
from bcp_app.service import mandates, presenters
from bcp_app.service.context import RequestContext
from shop.checkout import types as ct
from shop.checkout.selectors import checkout_view

TEXTS = {
    "checkout_not_found": {"pt-br": "Checkout não encontrado.", "en": "Checkout not found."},
    "order_not_found": {"pt-br": "Pedido não encontrado.", "en": "Order not found."},
    "order_unauthorized": {
        "pt-br": "Sem autorização para acessar este pedido.",
        "en": "Not authorized to access this order.",
    },
    "product_not_found": {"pt-br": "Produto não encontrado.", "en": "Product not found."},
    "incompatible": {
        "pt-br": "A plataforma não negociou a capacidade necessária ({name}).",
        "en": "The platform did not negotiate the required capability ({name}).",
    },
    "nothing_created": {
        "pt-br": "Nenhum item pôde ser incluído no checkout.",
        "en": "None of the items could be added to a checkout.",
    },
    "unknown_id": {"pt-br": "Id não encontrado: {id}.", "en": "Unknown id: {id}."},
    "search_empty": {
        "pt-br": "Informe {prefix}query (o texto da busca) ou {prefix}filters.",
        "en": "Provide {prefix}query (the search text) or {prefix}filters.",
    },
}


def text(ctx: RequestContext, key: str, **kwargs: str) -> str:
    return TEXTS[key]["en" if ctx.language == "en" else "pt-br"].format(**kwargs)


def incompatible(ctx: RequestContext, name: str, *capabilities: str) -> OperationResult:
    return OperationResult(
        200,
        error_response(
            "capabilities_incompatible",
            text(ctx, "incompatible", name=name),
            capabilities=ctx.ucp_capabilities(*capabilities) or None,
        ),
    )


def checkout_result(ctx: RequestContext, result: ct.CheckoutResult, status: int = 200) -> OperationResult:
    body = CheckoutResponse.produce(presenters.checkout(checkout_view(result.checkout, messages=result.messages), ctx))
    return OperationResult(status, signed(ctx, body))


def signed(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    """The checkout with `ap2` while AP2 is negotiated (BCP-PAY-09), still the model's output: the signature
    covers JCS(body without `ap2`), so producing again after signing changes no signed byte."""
    out = mandates.sign_response(ctx, body)
    return out if out is body else CheckoutResponse.produce(out)


def not_found_checkout(ctx: RequestContext) -> OperationResult:
    return OperationResult(
        200,
        error_response(
            "not_found", text(ctx, "checkout_not_found"), capabilities=ctx.ucp_capabilities(CHECKOUT) or None
        ),
    )


def owned(ctx: RequestContext, checkout: Any) -> bool:
    """A checkout is visible only to who created it: its platform, else the anonymous agent's profile or the
    permalink's session (BCP-CHK-13: others get the `not_found` of an unknown id, so nothing tells it exists)."""
    return ctx.checkout_owner.owns(checkout)
