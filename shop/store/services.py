"""Store settings reads (cached: every page shows them) and the writes that keep the cache right.

`store_get()` is read by the context processor on every storefront page, by e-mails, by the BCP
profile and by the Pix merchant name; it costs no query once cached, and saving the row in the admin
drops the cached copy (`StoreSettings.save`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from email.headerregistry import Address
from email.utils import parseaddr
from types import MappingProxyType
from typing import Any

from django.conf import settings

from kernel.br_validation import phone_display, phone_normalize, tax_id_normalize
from payments.installments import InstallmentPolicy
from shop.catalog.images import hero_thumbnail_url, logo_thumbnail_url
from shop.models.store import CACHE_KEY, STORE_KEPT, STORE_ROW_ID, StoreSettings


@dataclass(frozen=True)
class Store:
    """What pages need of the settings row, with display forms computed once."""

    trade_name: str
    legal_name: str
    cnpj: str  # formatted "12.ABC.345/01DE-35" or ""
    address_lines: tuple[str, ...]
    city: str
    state: str
    contact_email: str
    phone: str
    whatsapp: str
    whatsapp_url: str
    business_hours: str
    logo_url: str
    home_tagline: str  # "": the home says a neutral line with the trade name
    home_image_url: str  # "": no picture beside it
    terms_text: str
    privacy_text: str
    privacy_controller: str
    dpo_name: str
    dpo_email: str
    returns_text: str
    shipping_text: str
    returns_window_days: int
    terms_url: str
    privacy_url: str
    returns_url: str
    shipping_url: str
    # Who receives the Pix (BR Code merchant name and city): the row's legal name and city; without a saved
    # row (or with them empty), the PIX_MERCHANT_* settings stay in force.
    pix_name: str
    pix_city: str
    # Parcelamento no cartão (StoreSettings.card_*).
    installment_policy: InstallmentPolicy = field(default_factory=InstallmentPolicy)
    # "Pix: N % off" in basis points (5 % = 500); shop/checkout/pricing.py has the rule.
    pix_discount_bp: int = 0
    # Boleto due this many business days after the order (StoreSettings.boleto_due_business_days); 0 = not offered.
    boleto_due_business_days: int = 3
    # Freight (issue 36): where parcels leave from (8 digits, "" unset) and one unit's package when neither
    # variant nor product says: (grams, length, width, height cm).
    postal_code: str = ""
    default_package: tuple[int, int, int, int] = (300, 20, 15, 5)
    # Business days from payment to posting (StoreSettings.handling_days); 0: the estimate counts from the shipment.
    handling_days: int = 0
    # Agent trust tiers (issue 35): (permission, least trusted tier allowed or "none"), read by bcp_app's trust module.
    agent_access: tuple[tuple[str, str], ...] = ()


def cnpj_format(value: str) -> str:
    raw = tax_id_normalize(value)
    if len(raw) != 14:
        return value
    return f"{raw[:2]}.{raw[2:5]}.{raw[5:8]}/{raw[8:12]}-{raw[12:]}"


def _default_contact_email() -> str:
    # Before the settings row existed the only shop address was the sender of the buyer e-mails.
    return parseaddr(settings.DEFAULT_FROM_EMAIL)[1]


def _store_of(row: StoreSettings, *, saved: bool) -> Store:
    street = ", ".join(part for part in (row.street, row.number) if part)
    if row.complement:
        street = f"{street} — {row.complement}" if street else row.complement
    city = " / ".join(part for part in (row.city, row.state) if part)
    lines = tuple(
        line for line in (street, row.neighborhood, city, f"CEP {row.postal_code}" if row.postal_code else "") if line
    )
    whatsapp = phone_normalize(row.whatsapp) if row.whatsapp else ""
    logo_url = logo_thumbnail_url(row.logo) if row.logo else ""  # an 800 px upload for a 32 px slot otherwise
    return Store(
        trade_name=row.trade_name,
        legal_name=row.legal_name,
        cnpj=cnpj_format(row.cnpj) if row.cnpj else "",
        address_lines=lines,
        city=row.city,
        state=row.state,
        contact_email=row.contact_email or _default_contact_email(),
        phone=phone_display(phone_normalize(row.phone)) if row.phone else "",
        whatsapp=phone_display(whatsapp) if whatsapp else "",
        whatsapp_url=f"https://wa.me/{whatsapp.lstrip('+')}" if whatsapp.startswith("+") else "",
        business_hours=row.business_hours,
        logo_url=logo_url,
        home_tagline=row.home_tagline,
        home_image_url=hero_thumbnail_url(row.home_image) if row.home_image else "",
        terms_text=row.terms_text,
        privacy_text=row.privacy_text,
        privacy_controller=row.privacy_controller or row.legal_name,
        dpo_name=row.dpo_name,
        dpo_email=row.dpo_email,
        returns_text=row.returns_text,
        shipping_text=row.shipping_text,
        returns_window_days=row.returns_window_days,
        terms_url=row.terms_url,
        privacy_url=row.privacy_url,
        returns_url=row.returns_url,
        shipping_url=row.shipping_url,
        pix_name=(row.legal_name if saved else "") or settings.PIX_MERCHANT_NAME,
        pix_city=(row.city if saved else "") or settings.PIX_MERCHANT_CITY,
        installment_policy=_installment_policy(row),
        pix_discount_bp=int((row.pix_discount_percent or 0) * 100),
        boleto_due_business_days=row.boleto_due_business_days,
        postal_code="".join(c for c in row.postal_code if c.isdigit()),
        default_package=(row.default_weight_grams, row.default_length_cm, row.default_width_cm, row.default_height_cm),
        handling_days=row.handling_days,
        agent_access=(
            ("catalog.browse", row.agents_browse),
            ("checkout.create", row.agents_checkout),
            ("checkout.complete", row.agents_complete),
            ("orders.read", row.agents_orders_read),
            ("orders.act", row.agents_orders_act),
        ),
    )


def _installment_policy(row: StoreSettings) -> InstallmentPolicy:
    try:
        return InstallmentPolicy(
            max_installments=row.card_max_installments,
            interest_free=row.card_interest_free_installments,
            monthly_rate_bp=row.card_monthly_interest_bp,
            min_installment=row.card_min_installment,
        )
    except ValueError:  # a row saved around the admin's validators: no parcelamento rather than a 500
        return InstallmentPolicy(max_installments=1, interest_free=1)


def store_row() -> StoreSettings:
    """The settings row, created with today's defaults the first time it is asked for."""
    row, _created = StoreSettings.objects.get_or_create(pk=STORE_ROW_ID, defaults={"trade_name": settings.SHOP_NAME})
    return row


def store_cache_key() -> str:
    """The cache entry `store_get` reads (the version token of this process's copy), for a caller that
    prefetches it (bcp_app's request context)."""
    return CACHE_KEY


def store_get() -> Store:
    """The store settings for display: this process's copy while the row is unchanged (kernel/ops/kept.py: no
    query, nothing unpickled), else one query. Shared by the process's requests: read it, never change it."""
    return STORE_KEPT.get("store", _store_read)


# Agent trust tiers (issue 35), ordered; what each permission needs is a tier or `none` (StoreSettings.agents_*).
# The one rule: bcp_app/service/trust.py refuses an operation with it, and the shop's own completion of an
# agent's checkout (shop/checkout/settle.py) asks it for the tier of the caller that created the checkout.
AGENT_ANONYMOUS = "anonymous"
AGENT_REGISTERED = "registered"
AGENT_SIGNED = "signed"
AGENT_NOBODY = "none"
AGENT_TIERS = (AGENT_ANONYMOUS, AGENT_REGISTERED, AGENT_SIGNED)
AGENT_TIER_RANK = {AGENT_ANONYMOUS: 0, AGENT_REGISTERED: 1, AGENT_SIGNED: 2}
AGENT_COMPLETE = "checkout.complete"
AGENT_ACCESS_DEFAULTS = {
    "catalog.browse": AGENT_ANONYMOUS,
    "checkout.create": AGENT_ANONYMOUS,
    AGENT_COMPLETE: AGENT_ANONYMOUS,
    "orders.read": AGENT_REGISTERED,
    "orders.act": AGENT_REGISTERED,
}


def agent_access() -> Mapping[str, str]:
    """Permission → least trusted tier allowed (or `none`), from the cached store settings (no query); read-only,
    made once per settings copy (issue 34: every agent call asked, and two dicts were built each time)."""
    global _access_made
    stored = getattr(store_get(), "agent_access", ()) or ()
    made = _access_made
    if made[0] is stored:  # the same tuple of the same copy of the settings (held here: never another's id)
        return made[1]
    access = dict(stored)
    policy = MappingProxyType({p: access.get(p, default) for p, default in AGENT_ACCESS_DEFAULTS.items()})
    _access_made = (stored, policy)
    return policy


# The settings' `agent_access` the last policy was made of, and that policy (`()`: the defaults alone).
_access_made: tuple[object, Mapping[str, str]] = ((), MappingProxyType(dict(AGENT_ACCESS_DEFAULTS)))


def agent_tier_may(tier: str, permission: str) -> bool:
    """Whether an agent of `tier` holds `permission` under the store's settings. An unknown tier or setting
    counts as the most demanding one (nothing is granted by a typo)."""
    needed = agent_access()[permission]
    if needed == AGENT_NOBODY:
        return False
    return AGENT_TIER_RANK.get(tier, -1) >= AGENT_TIER_RANK.get(needed, AGENT_TIER_RANK[AGENT_SIGNED])


def agents_may_complete(tier: str) -> bool:
    """Whether an agent of `tier` may complete a checkout (`StoreSettings.agents_complete`): False for every
    tier when the store lets no agent complete, and for the tiers below the one it asks for. The shop then
    makes no order out of such an agent's checkout (bcp_app/service/trust.py refuses the complete itself)."""
    return agent_tier_may(tier, AGENT_COMPLETE)


def _store_read() -> Store:
    row = StoreSettings.objects.filter(pk=STORE_ROW_ID).first()
    saved = row is not None
    return _store_of(row if row is not None else StoreSettings(trade_name=settings.SHOP_NAME), saved=saved)


def pix_merchant() -> tuple[str, str]:
    """(merchant name, city) for the Pix BR Code and the handler config: the settings row's legal name and city.

    From the cached store settings like every other reader (the BCP profile and every checkout response name
    the merchant, so a query here would be paid on each of them).
    """
    store = store_get()
    return store.pix_name, store.pix_city


def email_sender() -> tuple[str, str]:
    """The shop's name as the merchant set it in the admin, and the From of its e-mails: that name with the
    configured address (DEFAULT_FROM_EMAIL), as the order e-mails send them; not the project's SHOP_NAME."""
    name = store_get().trade_name
    return name, str(Address(display_name=name, addr_spec=parseaddr(settings.DEFAULT_FROM_EMAIL)[1]))


def email_context() -> dict[str, Any]:
    """What the buyer e-mails' header and footer show (orders calls this by dotted path)."""
    store = store_get()
    context: dict[str, Any] = {"shop_name": store.trade_name, "store": store, "shop_tax_id": store.cnpj}
    if store.contact_email:
        context["shop_contact"] = store.contact_email
    return context
