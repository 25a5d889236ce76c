"""Our business profile (`GET /.well-known/bcp`, BCP §2) built from settings and the enabled transports.

The same registries feed negotiation (what we offer) and every response's `ucp` envelope.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import orjson
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.urls import reverse

from bcp_app.protocol import keys, ucp
from bcp_app.protocol.names import (
    AP2_MANDATE,
    BOLETO_HANDLER,
    BUYER_CONSENT,
    CART,
    CATALOG_FEED,
    CATALOG_LOOKUP,
    CATALOG_SEARCH,
    CHECKOUT,
    DISCOUNT,
    FISCAL_DOCUMENT,
    FULFILLMENT,
    ORDER,
    ORDER_ACTIONS,
    PERMALINK,
    PIX_HANDLER,
    PROTOCOL_VERSION,
    SCHEMA_BASE,
    SERVICE,
    SERVICES_BASE,
    SPEC_BASE,
    SUBSCRIPTION,
)
from bcp_app.protocol.permalink import endpoint_url
from bcp_app.service.trust import access_config
from payments.merchant import pix_merchant_as_shown
from shop.checkout.services import boleto_offered
from shop.store.services import store_get

CARD_HANDLER = "com.google.pay"
PIX_SPEC = f"{SPEC_BASE}/payment/pix"  # PIX.md §10 D2
PIX_SCHEMA = f"{SCHEMA_BASE}/payment/pix.json"
BOLETO_SPEC = f"{SPEC_BASE}/payment/boleto"  # this shop's handler, specified in README "Boleto"
BOLETO_SCHEMA = f"{SCHEMA_BASE}/shopping/boleto.json"


def public_url(path: str = "") -> str:
    return f"{settings.BCP_PUBLIC_URL.rstrip('/')}{path}"


def store_trade_name() -> str:
    """The store's name as the merchant set it in "Dados da loja" (not the project's SHOP_NAME, only the default of
    a store never saved): how the A2A card and the MCP server name the business. From the store settings each
    process keeps under their version token (no query while the row is unchanged; a save reaches every process)."""
    return store_get().trade_name


def profile_url() -> str:
    return public_url("/.well-known/bcp")


def capability_registry() -> dict[str, list[dict[str, Any]]]:
    """Every capability and extension the shop offers (name → entries), in display order."""

    def entry(spec: str, schema: str, extends: str | list[str] | None = None) -> dict[str, Any]:
        item: dict[str, Any] = {
            "version": PROTOCOL_VERSION,
            "spec": f"{SPEC_BASE}/{spec}",
            "schema": f"{SCHEMA_BASE}/{schema}",
        }
        if extends:
            item["extends"] = extends
        return item

    registry = {
        CHECKOUT: [entry("shopping/checkout", "shopping/checkout.json")],
        FULFILLMENT: [entry("fulfillment", "shopping/fulfillment.json", CHECKOUT)],
        CART: [entry("cart", "shopping/cart.json")],
        DISCOUNT: [entry("discount", "shopping/discount.json", [CHECKOUT, CART])],
        BUYER_CONSENT: [entry("buyer-consent", "shopping/buyer_consent.json", [CHECKOUT, CART])],
        ORDER: [entry("order", "shopping/order.json")],
        FISCAL_DOCUMENT: [entry("fiscal-document", "shopping/fiscal_document.json", ORDER)],
        ORDER_ACTIONS: [entry("order-actions", "shopping/order_actions.json", ORDER)],
        SUBSCRIPTION: [entry("subscription", "shopping/subscription.json", [CHECKOUT, ORDER])],
        CATALOG_SEARCH: [entry("catalog/search", "shopping/catalog_search.json")],
        CATALOG_LOOKUP: [entry("catalog/lookup", "shopping/catalog_lookup.json")],
    }
    # The public feeds (shop/storefront/discovery.py) for agents that want the whole catalog in one GET.
    feeds = {
        "endpoint": public_url(reverse("shop:catalog_feed")),
        "merchant_feed": public_url(reverse("shop:merchant_feed")),
        "sitemap": public_url(reverse("shop:sitemap")),
    }
    registry[CATALOG_FEED] = [{**entry("catalog/feed", "shopping/catalog_feed.json"), "config": feeds}]
    if getattr(settings, "BCP_PERMALINK_ENABLED", True):
        config = {"endpoint": endpoint_url(settings.BCP_PUBLIC_URL)}
        registry[PERMALINK] = [{**entry("permalink", "shopping/permalink.json"), "config": config}]
    if getattr(settings, "BCP_AP2_ENABLED", False):
        registry[AP2_MANDATE] = [entry("ap2-mandates", "shopping/ap2_mandate.json", CHECKOUT)]
    return registry


# What no A2A message serves: the catalog's search and lookup are REST endpoints and MCP tools (an A2A intent finds
# its product inside the conversation), and the feed and the permalinks are plain GETs outside every binding.
NOT_ON_A2A = frozenset({CATALOG_SEARCH, CATALOG_LOOKUP, CATALOG_FEED, PERMALINK})


def a2a_capability_registry() -> dict[str, list[dict[str, Any]]]:
    """The profile's capabilities that the A2A binding serves (its Agent Card lists these): the profile's own
    registry minus `NOT_ON_A2A`, so a capability added to the profile reaches the card too."""
    return {name: entries for name, entries in capability_registry().items() if name not in NOT_ON_A2A}


@lru_cache(maxsize=64)  # a function of the key alone, asked on every checkout answer (issue 34)
def _pix_key_type(key: str) -> str:
    digits = "".join(ch for ch in key if ch.isdigit())
    if "@" in key:
        return "email"
    if key.startswith("+"):
        return "phone"
    if len(key) == 36 and key.count("-") == 4:
        return "evp"
    return {11: "cpf", 14: "cnpj"}.get(len(digits), "evp")


def pix_discount_config() -> dict[str, Any] | None:
    """The shop's "Pix: N % off" as handler config (issue 17), so an agent sees it before choosing Pix.

    A BCP extension of the PIX.md §1.1 config: `basis_points` (500 = 5 %) of the items after coupons,
    freight excluded, rounded half to even per centavo (shop/checkout/pricing.py). Absent when the shop gives none.
    """
    bp = store_get().pix_discount_bp
    if bp <= 0:
        return None
    return {"type": "percentage", "basis_points": bp, "applies_to": "items_after_discounts", "rounding": "half_even"}


@lru_cache(maxsize=64)  # a function of its arguments alone, asked twice on every checkout answer (issue 34)
def pix_handler_id() -> str:
    return settings.PIX_HANDLER_ID


def card_handler_id() -> str:
    return getattr(settings, "BCP_CARD_HANDLER_ID", "gpay")


def boleto_handler_id() -> str:
    return getattr(settings, "BCP_BOLETO_HANDLER_ID", "br.dev.bcp.boleto")


def pix_handler_entry() -> dict[str, Any]:
    return _kept_entry(_pix_entry)


def _pix_entry() -> dict[str, Any]:
    """PIX.md §1.1 declaration; `config` is also what checkout responses resolve (§1.3)."""
    merchant_name, merchant_city = pix_merchant_as_shown()
    entry: dict[str, Any] = {
        "id": pix_handler_id(),
        "version": PROTOCOL_VERSION,
        "spec": PIX_SPEC,
        "schema": PIX_SCHEMA,
        "available_instruments": [{"type": "pix"}],
        "config": {
            "environment": "sandbox" if settings.BCP_PIX_SANDBOX else "production",
            "charge_kind": "cob",
            "key_type": _pix_key_type(settings.PIX_KEY),
            "expiration_seconds": settings.PIX_EXPIRATION_SECONDS,
            "merchant_name": merchant_name,
            "merchant_city": merchant_city,
            "min_amount": settings.PIX_MIN_AMOUNT,
            "max_amount": settings.PIX_MAX_AMOUNT,
        },
    }
    discount = pix_discount_config()
    if discount is not None:
        entry["config"]["discount"] = discount
    return entry


def card_handler_entry() -> dict[str, Any]:
    return _kept_entry(_card_entry)


def _card_entry() -> dict[str, Any]:
    """A Google Pay style card handler (seed 004): the platform sends a gateway token at complete."""
    return {
        "id": card_handler_id(),
        "version": "2026-01-11",
        "spec": "https://pay.google.com/gp/p/ucp/2026-01-11/",
        "schema": "https://pay.google.com/gp/p/ucp/2026-01-11/schemas/gpay_config.json",
        "available_instruments": [{"type": "card"}],
        "config": {
            "api_version": 2,
            "api_version_minor": 0,
            "environment": "TEST" if settings.BCP_PIX_SANDBOX else "PRODUCTION",
            "merchant_info": {"merchant_name": store_get().trade_name},
            "allowed_payment_methods": [
                {
                    "type": "CARD",
                    "parameters": {
                        "allowed_auth_methods": ["PAN_ONLY", "CRYPTOGRAM_3DS"],
                        "allowed_card_networks": ["VISA", "MASTERCARD", "ELO", "AMEX"],
                    },
                    "tokenization_specification": {
                        "type": "PAYMENT_GATEWAY",
                        "parameters": {"gateway": _card_gateway_name(), "gatewayMerchantId": "loja-exemplo"},
                    },
                }
            ],
            # Parcelamento (README "Connecting an agent"): the instrument's `installments` picks a plan;
            # above `interest_free_installments` the interest is a `fee` total (Price table, half-up centavos).
            "installments": _installments_config(),
        },
    }


def _card_gateway_name() -> str:
    return "pagarme" if "pagarme" in getattr(settings, "PAYMENTS_CARD_GATEWAY", "") else "sandbox"


def _installments_config() -> dict[str, int]:
    policy = store_get().installment_policy
    return {
        "max_installments": policy.max_installments,
        "interest_free_installments": policy.interest_free,
        "monthly_interest_rate_bp": policy.monthly_rate_bp,
        "min_installment_amount": policy.min_installment,
    }


def boleto_handler_entry() -> dict[str, Any]:
    return _kept_entry(_boleto_entry)


def _boleto_entry() -> dict[str, Any]:
    """The boleto handler (issue 37, README "Boleto"): the platform selects an instrument of type "boleto" (no
    credential; the buyer's CPF/CNPJ is required) and, after complete, the checkout's instrument carries the
    `boleto` (line, barcode, PDF, due date); the order is placed when the bank's payment is confirmed."""
    store = store_get()
    return {
        "id": boleto_handler_id(),
        "version": PROTOCOL_VERSION,
        "spec": BOLETO_SPEC,
        "schema": BOLETO_SCHEMA,
        "available_instruments": [{"type": "boleto"}],
        "config": {
            "environment": "sandbox" if _card_gateway_name() == "sandbox" else "production",
            "gateway": _card_gateway_name(),
            "due_business_days": store.boleto_due_business_days,
            "expiry_grace_days": int(getattr(settings, "BOLETO_EXPIRY_GRACE_DAYS", 3)),
            "min_amount": int(getattr(settings, "BOLETO_MIN_AMOUNT", 500)),
            "requires_buyer_tax_id": True,
        },
    }


# Each handler entry is a function of the settings and the store settings alone, and was built again on every
# create, update and complete (a dozen settings read, the store asked several times; issue 34): its JSON text is
# made once per copy of the store settings (`store_get`: a save makes a new copy, in every process) and per
# settings (a test's change forgets it). Parsed anew on each call: a caller resolves its checkout's own members in
# the entry, and no answer shares a dict with another.
_ENTRIES: dict[Callable[[], dict[str, Any]], tuple[object, bytes]] = {}


def _kept_entry(build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    store = store_get()
    kept = _ENTRIES.get(build)
    if kept is None or kept[0] is not store:  # the copy itself is held here, so its identity is never another's
        kept = _ENTRIES[build] = (store, orjson.dumps(build()))
    entry: dict[str, Any] = orjson.loads(kept[1])
    return entry


@receiver(setting_changed)
def _settings_changed(**_kwargs: object) -> None:
    _ENTRIES.clear()


def payment_handler_registry() -> dict[str, list[dict[str, Any]]]:
    registry: dict[str, list[dict[str, Any]]] = {PIX_HANDLER: [pix_handler_entry()]}
    if getattr(settings, "BCP_CARD_ENABLED", True):
        registry[CARD_HANDLER] = [card_handler_entry()]
    if boleto_offered():
        registry[BOLETO_HANDLER] = [boleto_handler_entry()]
    return registry


def service_entries() -> list[dict[str, Any]]:
    mounts = getattr(settings, "ASGI_MOUNTS", {}) or {}
    spec = f"{SPEC_BASE}/overview"
    services = [
        {
            "version": PROTOCOL_VERSION,
            "spec": spec,
            "transport": "rest",
            "endpoint": public_url("/bcp/v1"),
            "schema": f"{SERVICES_BASE}/rest.openapi.json",
        }
    ]
    if "/bcp/mcp" in mounts:
        services.append(
            {
                "version": PROTOCOL_VERSION,
                "spec": spec,
                "transport": "mcp",
                "endpoint": public_url("/bcp/mcp"),
                "schema": f"{SERVICES_BASE}/mcp.openrpc.json",
            }
        )
    if "/bcp/a2a" in mounts or "/.well-known/agent-card.json" in mounts:
        services.append(
            {
                "version": PROTOCOL_VERSION,
                "spec": spec,
                "transport": "a2a",
                "endpoint": public_url("/.well-known/agent-card.json"),
            }
        )
    # The agent trust tiers (issue 35): what each kind of caller may do here, in the entity's open `config`.
    access = access_config()
    return [{**service, "config": {"access": access}} for service in services]


def business_profile() -> dict[str, Any]:
    return {
        "ucp": {
            "version": PROTOCOL_VERSION,
            "services": {SERVICE: service_entries()},
            "capabilities": capability_registry(),
            "payment_handlers": payment_handler_registry(),
        },
        "keys": keys.published_jwks(),
    }


# --- the UCP face (issue 35): the same profile through the name map of bcp_app/protocol/ucp.py -----------------


def ucp_profile_url(version: str | None = None) -> str:
    return public_url("/.well-known/ucp" + (f"/{version}" if version else ""))


def ucp_default_version() -> str:
    """The version `/.well-known/ucp` itself serves (`UCP_DISCOVERY_VERSION`); the others are at
    `/.well-known/ucp/{version}` and named in `supported_versions`."""
    return getattr(settings, "UCP_DISCOVERY_VERSION", ucp.UCP_2026_01_11)


def ucp_business_profile(version: str) -> dict[str, Any]:
    """Our business profile as UCP `version` (one of `ucp.UCP_VERSIONS`), from the same registries as BCP's."""
    supported = {v: ucp_profile_url(v) for v in ucp.UCP_VERSIONS if v != version}
    profile = business_profile()
    # The boleto handler (issue 37) is advertised to BCP platforms only: the UCP face's checkout (ucp/v1) was not
    # taught to present a boleto, so UCP platforms are not offered one they could not be shown.
    profile["ucp"]["payment_handlers"].pop(BOLETO_HANDLER, None)
    if version == ucp.UCP_2026_08_25:
        return ucp.discovery_2026_08_25(profile, supported_versions=supported)
    # REST, MCP and A2A (the agent's UCP extension) speak UCP 2026-01-11's shapes.
    endpoints = {"rest": public_url("/ucp/v1")}
    mounts = getattr(settings, "ASGI_MOUNTS", {}) or {}
    if "/ucp/mcp" in mounts:
        endpoints["mcp"] = public_url("/ucp/mcp")
    if "/bcp/a2a" in mounts:  # checkout-a2a.md: the service names the Agent Card, which lists UCP's extension
        endpoints["a2a"] = public_url("/.well-known/agent-card.json")
    return ucp.discovery_2026_01_11(profile, endpoints=endpoints, supported_versions=supported)
