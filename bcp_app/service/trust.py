"""Agent trust tiers (issue 35): what an anonymous agent, a registered platform and a signed platform may do.

Three tiers, ordered: `anonymous` (a profile URL and nothing else) < `registered` (an API key of a `Platform`)
< `signed` (an RFC 9421 signature verified with a key of the caller's profile, BCP §14; with or without a key).
Five permissions, each granted from a minimum tier (or to nobody) in the store settings (`StoreSettings.agents_*`,
edited in the admin; read from the cached `store_get()`, so a check costs no query):

| permission          | operations                                                    | default    |
|---------------------|---------------------------------------------------------------|------------|
| `catalog.browse`    | search_catalog, lookup_catalog, get_product, policies.search  | anonymous  |
| `checkout.create`   | create/get/update/cancel checkout, the cart operations        | anonymous  |
| `checkout.complete` | complete_checkout                                             | anonymous  |
| `orders.read`       | get_order                                                     | registered |
| `orders.act`        | cancel an order, request a return (BCP order actions)         | registered |

The defaults are what the shop did before the tiers existed (BCP §18 (4): anonymous agents browse and create
checkouts; only the originating, authenticated platform reads its order), so nothing changes until the merchant
edits them. `BCP_ALLOW_ANONYMOUS=false` / `BCP_REQUIRE_SIGNATURES=true` still refuse earlier, at identity.

Enforced in one place: `bcp_app.service.operations` wraps every exported operation with `guarded(permission)`,
so REST, MCP, A2A and the UCP REST face (which all call those operations) refuse alike. Refusals are the
spec's errors (BCP §5.4), in Portuguese: an anonymous caller → `unauthenticated` (401, `WWW-Authenticate`);
a registered platform where a signature is required → `signature_missing` (401); a permission granted to
nobody → `forbidden` (403). Order permissions answer as BCP §7 does for an order the caller may not see: the
Error Response `unauthorized` (a business outcome, HTTP 200 / `result`). The buyer's own browser (permalink
sessions) is not an agent and is never tiered. The policy is advertised in `/.well-known/bcp` as `config.access`
of every service entry (`access_config`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from bcp_app.protocol.errors import ProtocolError, error_response
from bcp_app.protocol.names import ORDER
from bcp_app.protocol.results import OperationResult
from shop.store.services import (
    AGENT_ACCESS_DEFAULTS,
    AGENT_ANONYMOUS,
    AGENT_NOBODY,
    AGENT_REGISTERED,
    AGENT_SIGNED,
    AGENT_TIERS,
    agent_access,
    agent_tier_may,
)


class Caller(Protocol):
    """What the tiers read of a request's context (`bcp_app.service.context.RequestContext`), declared here: discovery
    imports this module, and context imports discovery (through negotiation), so this one must not import context."""

    transport: str
    platform: Any
    signature_keyid: str | None
    language: str

    def ucp_capabilities(self, *names: str) -> Any: ...


# The tiers and the rule itself live in the shop (shop/store/services.py), which also applies it to the
# creator of an agent's checkout it completes on its own (shop/checkout/settle.py).
ANONYMOUS = AGENT_ANONYMOUS
REGISTERED = AGENT_REGISTERED
SIGNED = AGENT_SIGNED
NOBODY = AGENT_NOBODY
TIERS = AGENT_TIERS

BROWSE = "catalog.browse"
CHECKOUT_CREATE = "checkout.create"
CHECKOUT_COMPLETE = "checkout.complete"
ORDERS_READ = "orders.read"
ORDERS_ACT = "orders.act"
PERMISSIONS = (BROWSE, CHECKOUT_CREATE, CHECKOUT_COMPLETE, ORDERS_READ, ORDERS_ACT)
ORDER_PERMISSIONS = frozenset({ORDERS_READ, ORDERS_ACT})
DEFAULTS = AGENT_ACCESS_DEFAULTS
# What the refusal says the caller tried (the content of the error is read by the platform's developer).
_WHAT = {
    BROWSE: "consultar o catálogo",
    CHECKOUT_CREATE: "criar ou alterar checkouts",
    CHECKOUT_COMPLETE: "finalizar compras",
    ORDERS_READ: "consultar pedidos",
    ORDERS_ACT: "cancelar pedidos ou pedir devoluções",
}
# Transports whose caller is an agent; the permalink's browser session is the buyer.
_AGENT_TRANSPORTS = frozenset({"rest", "mcp", "a2a", "ucp"})

F = TypeVar("F", bound=Callable[..., OperationResult])


def tier_of(ctx: Caller) -> str:
    """The caller's tier: a verified signature is `signed` (with or without an API key), an API key alone is
    `registered`, anything else `anonymous`."""
    if ctx.signature_keyid is not None:
        return SIGNED
    return REGISTERED if ctx.platform is not None else ANONYMOUS


def policy() -> Mapping[str, str]:
    """Permission → minimum tier (or `none`), from the cached store settings."""
    return agent_access()


def allowed(ctx: Caller, permission: str) -> bool:
    return agent_tier_may(tier_of(ctx), permission)


def agent_tier(ctx: Caller) -> str:
    """The tier a checkout this caller creates records (`Checkout.creator_tier`): "" for the buyer's own
    browser (the permalink's session), which is not an agent."""
    return tier_of(ctx) if ctx.transport in _AGENT_TRANSPORTS else ""


def refusal(ctx: Caller, permission: str) -> ProtocolError | None:
    """The §5.4 protocol error refusing `permission` to this caller, None when its tier may."""
    if ctx.transport not in _AGENT_TRANSPORTS:
        return None
    return tier_refusal(tier_of(ctx), permission)


def tier_refusal(tier: str, permission: str) -> ProtocolError | None:
    """The §5.4 protocol error refusing `permission` to a caller of `tier`, None when that tier may."""
    if agent_tier_may(tier, permission):
        return None
    needed = policy()[permission]
    what = _WHAT[permission]
    if needed == NOBODY:
        return ProtocolError("forbidden", f"Esta loja não permite que agentes possam {what}.")
    if needed == SIGNED and tier == REGISTERED:
        return ProtocolError("signature_missing", f"Esta loja exige requisições assinadas (RFC 9421) para {what}.")
    if needed == SIGNED:
        return ProtocolError(
            "unauthenticated",
            f"Esta loja exige uma plataforma que assine as requisições (RFC 9421) para {what}.",
        )
    return ProtocolError(
        "unauthenticated", f"Autentique-se com uma chave de API ou uma assinatura HTTP (RFC 9421) para {what}."
    )


# An order refusal is a business outcome (BCP §7), so it speaks the caller's language like the order would.
_WHAT_EN = {ORDERS_READ: "read orders", ORDERS_ACT: "cancel orders or request returns"}
# What get_order answered an anonymous caller before the tiers existed (still the default policy's answer).
_ORDER_UNAUTHORIZED = {
    "pt-br": "Sem autorização para acessar este pedido.",
    "en": "Not authorized to access this order.",
}


def _order_refusal_text(ctx: Caller, permission: str, refused: ProtocolError) -> str:
    english = ctx.language == "en"
    if permission == ORDERS_READ and refused.code == "unauthenticated" and policy()[permission] == REGISTERED:
        return _ORDER_UNAUTHORIZED["en" if english else "pt-br"]
    if not english:
        return refused.content
    what = _WHAT_EN[permission]
    if refused.code == "forbidden":
        return f"This store does not allow agents to {what}."
    if refused.code == "signature_missing" or policy()[permission] == SIGNED:
        return f"This store requires signed requests (RFC 9421) to {what}."
    return f"Authenticate with an API key or an HTTP signature (RFC 9421) to {what}."


def check(ctx: Caller, permission: str) -> OperationResult | None:
    """None when the caller may; raises the protocol error; for order permissions, the §7 Error Response."""
    refused = refusal(ctx, permission)
    if refused is None:
        return None
    if permission in ORDER_PERMISSIONS:
        content = _order_refusal_text(ctx, permission, refused)
        body = error_response("unauthorized", content, capabilities=ctx.ucp_capabilities(ORDER) or None)
        return OperationResult(200, body)
    raise refused


def guarded(permission: str) -> Callable[[F], F]:
    """Wrap an operation `op(ctx, ...)` so it runs only for callers whose tier holds `permission`."""
    if permission not in PERMISSIONS:
        raise ValueError(f"unknown permission {permission!r}")

    def wrap(operation: F) -> F:
        @functools.wraps(operation)
        def run(ctx: Caller, *args: Any, **kwargs: Any) -> OperationResult:
            refused = check(ctx, permission)
            return refused if refused is not None else operation(ctx, *args, **kwargs)

        run.permission = permission  # type: ignore[attr-defined]  # read by tests and the docs table
        return run  # type: ignore[return-value]

    return wrap


def access_config() -> dict[str, list[str]]:
    """The policy as advertised in `/.well-known/bcp` (`config.access` of each service entry): per tier, the
    permissions it holds."""
    return {tier: [p for p in PERMISSIONS if agent_tier_may(tier, p)] for tier in TIERS}
