"""How a checkout's goods reach the buyer (BCP §9), read top to bottom: the CEP (validation, the UF table,
the address lookup), the shipping quotes by CEP, and the fulfillment evaluation of a checkout.

## CEP

CEP (Brazilian postal code): validation, the offline CEP-prefix → UF table, and the address lookup.

The table is the Correios range allocation by state: it always answers, with the UF only. The lookup asks a
CEP provider speaking ViaCEP's public JSON shape (`CEP_PROVIDER_URL`, `{cep}` replaced by the 8 digits) for
street, bairro and city, with a short total deadline and a cache; when the provider is unreachable, slow or answers
nonsense, the lookup falls back to the table, so the checkout never waits on it nor breaks because of it.

## Shipping quotes

Shipping quotes: which methods serve a CEP, at what price and with which delivery estimate.

Rules (per `ShippingMethod`): a CEP-range rate wins over a UF rate (narrowest range first), a UF
rate wins over the flat price; no match = the method does not serve that CEP. A method with
`free_above` costs 0 once the subtotal after discounts reaches it. Methods, pickup locations and rates
are read once (3 queries) and cached until one of them is saved or deleted.

## Fulfillment evaluation

Fulfillment evaluation of a checkout (BCP §9): one method (shipping or pickup) for all physical lines.

Ids are stable: methods "method_shipping"/"method_pickup", groups "group_shipping"/"group_pickup",
options = `ShippingMethod.code` ("pac", "sedex", "motoboy", "retirada"), shipping destination
`dest_…` (business-assigned, kept while the checkout has an address), pickup destinations =
`PickupLocation.public_id` (`loc_…`). A single platform-written shipping address is selected
automatically when no `selected_destination_id` is sent; options are never chosen for the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.core.cache import cache
from django.utils.translation import get_language, ngettext
from django.utils.translation import gettext as _

from kernel.cep import (
    UFS,
    cep_digits,
    cep_format,
    cep_invalid,
    cep_missing,
    cep_uf,
    uf_invalid,
    uf_not_of_cep,
)
from kernel.http import OutboundError, request
from kernel.ops.kept import KeptByToken
from orders.arrival import shipping_days_words
from shop.checkout.types import (
    AddressInput,
    CheckoutMessage,
    FulfillmentInput,
    FulfillmentMethodInput,
    OptionView,
    bounded,
)
from shop.models import Checkout, PickupLocation, ShippingMethod, ShippingRate, new_destination_id
from shop.store.services import store_get

logger = logging.getLogger(__name__)

# --- address lookup (provider boundary) --------------------------------------------------------------

_CACHE_PREFIX = "cep:v1:"
_MAX_BODY = 16 * 1024  # a ViaCEP answer is ~300 bytes; anything much larger is not one


@dataclass(frozen=True)
class CepAddress:
    """What a CEP tells: `found` False = no such CEP (the provider said so); `source` "provider" or "offline"."""

    cep: str  # "01310-100"
    uf: str
    city: str = ""
    neighborhood: str = ""
    street: str = ""
    found: bool = True
    source: str = "provider"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class _ProviderUnavailable(Exception):
    """Timeout, network error, HTTP error or an answer that is not ViaCEP's JSON: use the offline table."""


def _text(payload: dict[str, object], key: str, limit: int) -> str:
    value = payload.get(key, "")
    return value.strip()[:limit] if isinstance(value, str) else ""


def _parse(digits: str, payload: object) -> CepAddress:
    """ViaCEP shape: {"cep", "logradouro", "bairro", "localidade", "uf", …} or {"erro": true} (also "true")."""
    if not isinstance(payload, dict):
        raise _ProviderUnavailable("answer is not a JSON object")
    if payload.get("erro") in (True, "true"):
        return CepAddress(cep=cep_format(digits), uf="", found=False)
    uf = _text(payload, "uf", 2).upper()
    if uf not in UFS:
        raise _ProviderUnavailable(f"no valid UF in the answer: {uf!r}")
    return CepAddress(
        cep=cep_format(digits),
        uf=uf,
        city=_text(payload, "localidade", 100),
        neighborhood=_text(payload, "bairro", 100),
        street=_text(payload, "logradouro", 200),
    )


def _ask_provider(digits: str) -> CepAddress:
    url = settings.CEP_PROVIDER_URL.replace("{cep}", digits)
    try:
        # The kernel's client: the whole lookup (connect to last byte) within the timeout, a small body.
        # The provider is configuration, not input: no SSRF guard.
        response = request("GET", url, headers={"Accept": "application/json"}, max_bytes=_MAX_BODY,
                           deadline=settings.CEP_PROVIDER_TIMEOUT_MS / 1000, guard=False)  # fmt: skip
    except OutboundError as exc:
        raise _ProviderUnavailable(exc.kind) from exc
    if response.status_code != 200:
        raise _ProviderUnavailable(f"HTTP {response.status_code}")
    try:
        payload = response.json()
    except ValueError as exc:
        raise _ProviderUnavailable("answer is not JSON") from exc
    return _parse(digits, payload)


def _offline(digits: str) -> CepAddress:
    uf = cep_uf(digits)
    return CepAddress(cep=cep_format(digits), uf=uf or "", found=uf is not None, source="offline")


def cep_lookup(raw: str) -> CepAddress | None:
    """The address of a CEP (None when the format is wrong). Never raises for provider trouble.

    Cached: a provider answer (found or not) for `CEP_CACHE_SECONDS`; the offline fallback is not cached,
    so the next buyer gets the street again as soon as the provider is back.
    """
    digits = cep_digits(raw)
    if digits is None:
        return None
    key = _CACHE_PREFIX + digits
    cached = cache.get(key)
    if isinstance(cached, dict):
        return CepAddress(**cached)
    if not settings.CEP_PROVIDER_URL:
        return _offline(digits)
    try:
        address = _ask_provider(digits)
    except _ProviderUnavailable as exc:
        logger.warning("CEP provider unavailable for %s (%s): offline CEP table used", digits, exc)
        return _offline(digits)
    cache.set(key, address.as_dict(), settings.CEP_CACHE_SECONDS)
    return address


def cep_cache_forget(raw: str) -> None:
    """Drop a cached answer (tests, or a merchant correcting a wrong street)."""
    digits = cep_digits(raw)
    if digits is not None:
        cache.delete(_CACHE_PREFIX + digits)


@dataclass(frozen=True)
class ShippingConfig:
    shipping_methods: tuple[ShippingMethod, ...]  # kind=shipping
    pickup_methods: tuple[ShippingMethod, ...]  # kind=pickup
    pickup_locations: tuple[PickupLocation, ...]


# Read-mostly: methods, rates and pickup locations change when the merchant edits them, and every checkout
# evaluation needs them. Each process keeps its own copy under a version token in Django's cache (per process by
# default, shared with REDIS_URL; kernel/ops/kept.py), dropped after any save or delete of those models commits
# (`shipping_cache_clear`, wired in shop/receivers.py): a request reads the token, not the table (issue 34: the
# pickled table was 166 µs to unpickle in each of a purchase's three requests).
CACHE_KEY = "shop:shipping:v2"  # the token (v2: no longer the pickled table)
CACHE_SECONDS = 300  # a bound for caches that cannot hear another process's invalidation (local memory)
_KEPT = KeptByToken(CACHE_KEY, CACHE_SECONDS)


@dataclass(frozen=True)
class _Cached:
    config: ShippingConfig
    rates: tuple[ShippingRate, ...]  # every rate of the active shipping methods


def _load() -> _Cached:
    """This process's table (shared by its requests: read it, never change it); 3 queries when the token changed."""
    return _KEPT.get("table", _read)


def _read() -> _Cached:
    methods = list(ShippingMethod.objects.filter(active=True))
    config = ShippingConfig(
        shipping_methods=tuple(m for m in methods if m.kind == ShippingMethod.KIND_SHIPPING),
        pickup_methods=tuple(m for m in methods if m.kind == ShippingMethod.KIND_PICKUP),
        pickup_locations=tuple(PickupLocation.objects.filter(active=True)),
    )
    ids = [m.pk for m in config.shipping_methods]
    rates = tuple(ShippingRate.objects.filter(method_id__in=ids).order_by("id")) if ids else ()
    return _Cached(config=config, rates=rates)


def shipping_cache_clear() -> None:
    _KEPT.drop()


def shipping_config_load() -> ShippingConfig:
    """Active methods and pickup locations: 3 queries (with the rates) when not cached, else none."""
    return _load().config


def days_text(days_min: int, days_max: int, *, pickup: bool = False) -> str:
    """The delivery (or pickup) estimate in the active language: the engine speaks the checkout's language.

    Kept per language and days (issue 34): every evaluation of a checkout with an address words each option's
    estimate, and Django's `ngettext` (plural rule and catalogue lookups) was about 2 % of a purchase's CPU."""
    key = (get_language(), days_min, days_max, pickup)
    text = _DAYS_TEXTS.get(key)
    if text is None:
        if len(_DAYS_TEXTS) >= 1024:
            _DAYS_TEXTS.clear()
        text = _DAYS_TEXTS[key] = _days_text(days_min, days_max, pickup)
    return text


_DAYS_TEXTS: dict[tuple[str | None, int, int, bool], str] = {}


def _days_text(days_min: int, days_max: int, pickup: bool) -> str:
    if not pickup:
        return shipping_days_words(days_min, days_max)  # the order's words for the same promise (orders.arrival)
    if days_max == 0:
        return _("Pronto para retirada hoje")
    if days_min == days_max:
        return ngettext(
            "Pronto para retirada em %(n)d dia útil", "Pronto para retirada em %(n)d dias úteis", days_max
        ) % {"n": days_max}
    return ngettext(
        "Pronto para retirada em %(min)d a %(max)d dia útil",
        "Pronto para retirada em %(min)d a %(max)d dias úteis",
        days_max,
    ) % {"min": days_min, "max": days_max}


def _rates(methods: tuple[ShippingMethod, ...], cep: int, uf: str) -> dict[int, list[ShippingRate]]:
    """The rates that can apply to this CEP/UF, by method id (from the cached rate table)."""
    found: dict[int, list[ShippingRate]] = {m.pk: [] for m in methods}
    for rate in _load().rates:
        if rate.method_id not in found:
            continue
        by_uf = bool(rate.uf) and rate.uf == uf
        by_range = rate.cep_start is not None and rate.cep_end is not None and rate.cep_start <= cep <= rate.cep_end
        if by_uf or by_range:
            found[rate.method_id].append(rate)
    return found


def _rate_for(method: ShippingMethod, rates: list[ShippingRate], cep: int, uf: str) -> tuple[int, int, int] | None:
    """(price, days_min, days_max) of the rule that applies, or None."""
    by_range = [r for r in rates if r.cep_start is not None and r.cep_start <= cep <= (r.cep_end or -1)]
    if by_range:
        rate = min(by_range, key=lambda r: ((r.cep_end or 0) - (r.cep_start or 0), r.id))
    else:
        by_uf = [r for r in rates if r.uf and r.uf == uf]
        rate = by_uf[0] if by_uf else None
    if rate is not None:
        days_min = rate.days_min if rate.days_min is not None else method.days_min
        days_max = rate.days_max if rate.days_max is not None else method.days_max
        return rate.price, days_min, days_max
    if method.flat_price is not None:
        return method.flat_price, method.days_min, method.days_max
    return None


def _price_after_threshold(method: ShippingMethod, price: int, subtotal_after_discounts: int) -> int:
    if method.free_above is not None and subtotal_after_discounts >= method.free_above:
        return 0
    return price


def shipping_options(
    *, config: ShippingConfig, cep: str, uf: str, subtotal_after_discounts: int
) -> tuple[OptionView, ...]:
    """Options for a delivery to `cep` (8 digits) in `uf`; empty when no method serves it."""
    cep_int = int(cep)
    rates = _rates(config.shipping_methods, cep_int, uf) if config.shipping_methods else {}
    options: list[OptionView] = []
    for method in config.shipping_methods:
        rule = _rate_for(method, rates.get(method.pk, []), cep_int, uf)
        if rule is None:
            continue
        price, days_min, days_max = rule
        options.append(
            OptionView(
                id=method.code,
                title=method.title,
                description=days_text(days_min, days_max),
                amount=_price_after_threshold(method, price, subtotal_after_discounts),
                carrier=method.carrier,
                days_min=days_min,
                days_max=days_max,
            )
        )
    return tuple(options)


def pickup_options(*, config: ShippingConfig, location: PickupLocation | None) -> tuple[OptionView, ...]:
    """Options of the pickup method (usually one, free: "Retirada na loja")."""
    days = location.preparation_days if location is not None else 1
    return tuple(
        OptionView(
            id=method.code,
            title=method.title,
            description=days_text(days, days, pickup=True),
            amount=method.flat_price or 0,
            carrier=method.carrier,
        )
        for method in config.pickup_methods
    )


# --- freight before checkout (product page, cart) ----------------------------------------------------


@dataclass(frozen=True)
class FreightQuote:
    """What "Calcular frete" shows: the same options the checkout will offer for this CEP and subtotal."""

    cep: str  # "01310-100"
    uf: str
    city: str
    options: tuple[OptionView, ...]
    free_above: int | None  # lowest free-shipping threshold among the methods serving this CEP
    missing_for_free: int  # centavos still missing for it (0 when reached or without a threshold)


def free_shipping_threshold(config: ShippingConfig) -> int | None:
    """The lowest "frete grátis a partir de" among active shipping methods (for the notice), or None."""
    thresholds = [m.free_above for m in config.shipping_methods if m.free_above is not None]
    return min(thresholds) if thresholds else None


def free_shipping_methods(config: ShippingConfig, threshold: int | None) -> str:
    """The titles of the methods free from `threshold` ("PAC"): the notice says which one is free, since the
    others (SEDEX, motoboy) still cost."""
    if threshold is None:
        return ""
    return ", ".join(m.title for m in config.shipping_methods if m.free_above == threshold)


def cep_checked(cep: str) -> tuple[str, str]:
    """(8 digits, UF) of a CEP the buyer typed in any format, for a freight quote. Raises ValueError with the
    buyer's message, in the active language, for a malformed CEP or one the table does not know."""
    digits = cep_digits(cep)
    if digits is None:
        raise ValueError(cep_invalid())
    uf = cep_uf(digits)
    if uf is None:
        raise ValueError(cep_missing(digits))
    return digits, uf


def freight_quote(*, cep: str, subtotal_after_discounts: int, config: ShippingConfig | None = None) -> FreightQuote:
    """Options for `cep` (any format the buyer types). Raises ValueError with a buyer message for a bad CEP.

    The UF comes from the offline CEP table exactly as in the checkout (so the prices are the ones the checkout
    will charge); the city, when the CEP provider answers, is only shown.
    """
    digits, uf = cep_checked(cep)
    config = config or shipping_config_load()
    options = shipping_options(config=config, cep=digits, uf=uf, subtotal_after_discounts=subtotal_after_discounts)
    serving = {option.id for option in options}
    thresholds = [m.free_above for m in config.shipping_methods if m.code in serving and m.free_above is not None]
    free_above = min(thresholds) if thresholds else None
    address = cep_lookup(digits)
    return FreightQuote(
        cep=cep_format(digits),
        uf=uf,
        city=address.city if address is not None and address.found else "",
        options=options,
        free_above=free_above,
        missing_for_free=max(0, free_above - subtotal_after_discounts) if free_above is not None else 0,
    )


M0 = "$.fulfillment.methods[0]"
DEST0 = f"{M0}.destinations[0]"
SEL_DEST = f"{M0}.selected_destination_id"
SEL_OPT = f"{M0}.groups[0].selected_option_id"

METHOD_IDS = {"shipping": "method_shipping", "pickup": "method_pickup"}
GROUP_IDS = {"shipping": "group_shipping", "pickup": "group_pickup"}

EMPTY_FIELDS: dict[str, str] = {
    "fulfillment_type": "",
    "ship_destination_id": "",
    "ship_first_name": "",
    "ship_last_name": "",
    "ship_phone": "",
    "ship_cep": "",
    "ship_uf": "",
    "ship_city": "",
    "ship_street": "",
    "ship_number": "",
    "ship_complement": "",
    "ship_neighborhood": "",
    "ship_country": "",
    "selected_destination_id": "",
    "selected_option_id": "",
}


def _err(code: str, content: str, path: str) -> CheckoutMessage:
    return CheckoutMessage(type="error", code=code, content=content, severity="recoverable", path=path)


@dataclass
class FulfillmentEvaluation:
    fields: dict[str, str]  # Checkout model columns
    snapshot: dict[str, object]  # {"methods": [...], "available_methods": [...]} in BCP shape
    messages: list[CheckoutMessage] = field(default_factory=list)
    rejections: list[CheckoutMessage] = field(default_factory=list)  # update → unchanged checkout
    selected_option: OptionView | None = None


def split_street_address(value: str) -> tuple[str, str]:
    """ "Rua das Flores, 123" → ("Rua das Flores", "123")."""
    street, sep, number = value.rpartition(",")
    if sep and number.strip():
        return street.strip(), number.strip()
    return value.strip(), ""


def split_extended_address(value: str) -> tuple[str, str]:
    """ "Apto 45 - Jardim Paulista" → ("Apto 45", "Jardim Paulista"); one part is the complement."""
    complement, sep, neighborhood = value.partition(" - ")
    return (complement.strip(), neighborhood.strip()) if sep else (value.strip(), "")


def join_street_address(street: str, number: str) -> str:
    return f"{street}, {number}" if number else street


def join_extended_address(complement: str, neighborhood: str) -> str:
    return " - ".join(part for part in (complement, neighborhood) if part)


def location_destination(location: PickupLocation) -> dict[str, object]:
    return {
        "id": location.public_id,
        "type": "business_location",
        "name": location.name,
        "street_address": join_street_address(location.street, location.number),
        "extended_address": join_extended_address(location.complement, location.neighborhood),
        "address_locality": location.city,
        "address_region": location.uf,
        "postal_code": location.cep,
        "address_country": "BR",
        "opening_hours": location.opening_hours,
    }


def _option_dict(option: OptionView) -> dict[str, object]:
    shown: dict[str, object] = {
        "id": option.id,
        "title": option.title,
        "description": option.description,
        "amount": option.amount,
        "carrier": option.carrier,
    }
    if option.days_min is not None and option.days_max is not None:
        # for the order (complete.place_order), not for the platform: the presenters read only the members above
        shown["days_min"], shown["days_max"] = option.days_min, option.days_max
    return shown


def _address_fields(address: AddressInput, *, destination_id: str, buyer_first: str, buyer_last: str) -> dict[str, str]:
    def b(value: str, limit: int, member: str) -> str:
        return bounded(value, limit, f"{DEST0}.{member}")

    street, number = b(address.street, 200, "street_address"), b(address.number, 20, "street_address")
    if not street and not number and address.street_address:
        street, number = split_street_address(b(address.street_address, 222, "street_address"))
        street, number = b(street, 200, "street_address"), b(number, 20, "street_address")
    complement = b(address.complement, 100, "extended_address")
    neighborhood = b(address.neighborhood, 100, "extended_address")
    if not complement and not neighborhood and address.extended_address:
        complement, neighborhood = split_extended_address(b(address.extended_address, 203, "extended_address"))
        complement, neighborhood = b(complement, 100, "extended_address"), b(neighborhood, 100, "extended_address")
    raw_cep = b(address.postal_code, 12, "postal_code")
    digits = cep_digits(raw_cep)
    return {
        "ship_destination_id": destination_id,
        "ship_first_name": b(address.first_name, 100, "first_name") or buyer_first,
        "ship_last_name": b(address.last_name, 100, "last_name") or buyer_last,
        "ship_phone": b(address.phone_number, 20, "phone_number"),
        "ship_cep": cep_format(digits) if digits else raw_cep[:9],
        "ship_uf": b(address.address_region, 30, "address_region").upper()[:2],
        "ship_city": b(address.address_locality, 100, "address_locality"),
        "ship_street": street,
        "ship_number": number,
        "ship_complement": complement,
        "ship_neighborhood": neighborhood,
        "ship_country": b(address.address_country or "BR", 2, "address_country").upper(),
    }


def shipping_destination_dict(fields: dict[str, str]) -> dict[str, object]:
    return {
        "id": fields["ship_destination_id"],
        "type": "shipping_address",
        "first_name": fields["ship_first_name"],
        "last_name": fields["ship_last_name"],
        "phone_number": fields["ship_phone"],
        "street_address": join_street_address(fields["ship_street"], fields["ship_number"]),
        "extended_address": join_extended_address(fields["ship_complement"], fields["ship_neighborhood"]),
        "address_locality": fields["ship_city"],
        "address_region": fields["ship_uf"],
        "postal_code": fields["ship_cep"],
        "address_country": fields["ship_country"] or "BR",
    }


def _validate_address(fields: dict[str, str]) -> tuple[list[CheckoutMessage], str | None]:
    """Messages for the stored address, and the CEP digits when the CEP is usable for quotes."""
    messages: list[CheckoutMessage] = []
    digits = cep_digits(fields["ship_cep"])
    usable: str | None = None
    if fields["ship_country"] not in ("", "BR"):
        messages.append(_err("address_undeliverable", _("Entregamos apenas no Brasil."), f"{DEST0}.address_country"))
    if not fields["ship_cep"]:
        messages.append(_err("field_required", _("Informe o CEP."), f"{DEST0}.postal_code"))
    elif digits is None:
        messages.append(_err("field_invalid", cep_invalid(), f"{DEST0}.postal_code"))
    elif cep_uf(digits) is None:
        messages.append(_err("field_invalid", cep_missing(digits), f"{DEST0}.postal_code"))
    else:
        uf = cep_uf(digits) or ""
        if not fields["ship_uf"]:
            fields["ship_uf"] = uf
            messages.append(
                CheckoutMessage(
                    type="info",
                    code="address_region_filled",
                    content=_("UF %(uf)s preenchida pelo CEP.") % {"uf": uf},
                    path=f"{DEST0}.address_region",
                )
            )
            usable = digits
        elif fields["ship_uf"] not in UFS:
            messages.append(_err("field_invalid", uf_invalid(), f"{DEST0}.address_region"))
        elif fields["ship_uf"] != uf:
            messages.append(_err("field_invalid", uf_not_of_cep(uf), f"{DEST0}.address_region"))
        else:
            usable = digits
    if not fields["ship_street"]:
        messages.append(_err("field_required", _("Informe a rua."), f"{DEST0}.street_address"))
    elif not fields["ship_number"]:
        messages.append(_err("field_required", _("Informe o número (ou S/N)."), f"{DEST0}.street_address"))
    if not fields["ship_city"]:
        messages.append(_err("field_required", _("Informe a cidade."), f"{DEST0}.address_locality"))
    return messages, usable


def evaluate_fulfillment(
    *,
    checkout: Checkout | None,
    data: FulfillmentInput | None,
    physical_line_ids: list[str],
    config: ShippingConfig,
    subtotal_after_discounts: int,
    buyer_first: str,
    buyer_last: str,
    shipping_quote: Callable[[str, str, int], tuple[OptionView, ...]] | None = None,
) -> FulfillmentEvaluation:
    """Method → destination → options → selected option → snapshot, one function per step. `shipping_quote(cep,
    uf, subtotal)` gives the shipping options (the carriers' or the table by weight, `shop.freight`); None: the
    table alone."""
    fields = dict(EMPTY_FIELDS)
    result = FulfillmentEvaluation(fields=fields, snapshot={"methods": [], "available_methods": []})
    if not physical_line_ids:
        return result  # digital-only: nothing to fulfill physically
    chosen = _choose_method(data, config, physical_line_ids, result)
    if chosen is None:
        return result
    fields["fulfillment_type"] = chosen.type
    if chosen.type == "shipping":
        selected_destination = _shipping_destination(chosen, checkout, buyer_first, buyer_last, result)
        destinations, options = _shipping_quote(config, subtotal_after_discounts, result, shipping_quote)
    else:
        destinations, selected_destination, options = _pickup_destination(chosen, config, result)
    fields["selected_destination_id"] = selected_destination or ""
    result.selected_option = _select_option(chosen, options, selected_destination, result)
    fields["selected_option_id"] = result.selected_option.id if result.selected_option else ""
    method = _method_snapshot(chosen, physical_line_ids, destinations, selected_destination, options, fields)
    if chosen.type == "shipping":
        # The store's "prazo de postagem" the options are shown with (bcp_app's presenters and the storefront add it
        # to each promise, orders.arrival.promise_words): a complete compares it with the one in force then.
        method["handling_days"] = store_get().handling_days
    result.snapshot["methods"] = [method]
    return result


def _choose_method(
    data: FulfillmentInput | None, config: ShippingConfig, physical_line_ids: list[str], result: FulfillmentEvaluation
) -> FulfillmentMethodInput | None:
    """The one method asked for, if the shop offers it; the others are listed as available."""
    can_ship = bool(config.shipping_methods)
    can_pickup = bool(config.pickup_methods and config.pickup_locations)
    methods = data.methods if data is not None else ()
    chosen = methods[0] if methods else None
    for index in range(1, len(methods)):
        result.rejections.append(
            _err(
                "fulfillment_method_unsupported",
                _("Use um único método de entrega para todos os itens."),
                f"$.fulfillment.methods[{index}]",
            )
        )
    refused = chosen is not None and not (
        (chosen.type == "shipping" and can_ship) or (chosen.type == "pickup" and can_pickup)
    )
    if chosen is not None and refused:
        # QA walk: "Método 'pickup' não disponível." (a Python repr) beside a field_required that offered the
        # very pickup just refused. Now one message naming the option and what is left to choose.
        result.rejections.append(
            _err(
                "fulfillment_method_unsupported",
                _method_refused(chosen.type, config, can_ship, can_pickup),
                f"{M0}.type",
            )
        )
        chosen = None
    available = []
    if can_ship and (chosen is None or chosen.type != "shipping"):
        available.append({"type": "shipping", "description": "Entrega no endereço (Correios ou motoboy)"})
    if can_pickup and (chosen is None or chosen.type != "pickup"):
        n = len(config.pickup_locations)
        available.append({"type": "pickup", "description": f"Retirada grátis em {n} loja{'s' if n > 1 else ''}"})
    result.snapshot["available_methods"] = [
        {**a, "line_item_ids": list(physical_line_ids), "fulfillable_on": "now"} for a in available
    ]
    if chosen is None and not refused:
        result.messages.append(
            _err("field_required", _("Informe o endereço de entrega ou escolha retirada na loja."), "$.fulfillment")
        )
    return chosen


def _method_refused(method: str, config: ShippingConfig, can_ship: bool, can_pickup: bool) -> str:
    """The method asked for is not offered (now): named by its title, with what the buyer can do instead."""
    if method not in ("shipping", "pickup"):
        # A platform's own type (BCP §9 allows custom ones, e.g. `curbside`) is no shipping that is "unavailable
        # at the moment": say the type is not served here and which types are.
        if can_ship and can_pickup:
            text = _("O tipo de entrega “%(type)s” não é atendido por esta loja; use shipping ou pickup.")
        elif can_ship:
            text = _("O tipo de entrega “%(type)s” não é atendido por esta loja; use shipping.")
        elif can_pickup:
            text = _("O tipo de entrega “%(type)s” não é atendido por esta loja; use pickup.")
        else:
            text = _("O tipo de entrega “%(type)s” não é atendido por esta loja.")
        return text % {"type": method}
    if method == "pickup":
        title = config.pickup_methods[0].title if config.pickup_methods else _("Retirada na loja")
        if can_ship:
            return _("%(title)s não está disponível no momento; informe um endereço de entrega.") % {"title": title}
    else:
        title = _("Entrega no endereço")
        if can_pickup:
            return _("%(title)s não está disponível no momento; escolha a retirada na loja.") % {"title": title}
    return _("%(title)s não está disponível no momento.") % {"title": title}


def _shipping_destination(
    chosen: FulfillmentMethodInput,
    checkout: Checkout | None,
    buyer_first: str,
    buyer_last: str,
    result: FulfillmentEvaluation,
) -> str | None:
    """The delivery address (given now, or the stored one referenced by id) into `fields`; its id if selected."""
    fields = result.fields
    wanted_dest = chosen.selected_destination_id or None
    stored_id = checkout.ship_destination_id if checkout is not None else ""
    if len(chosen.destinations) > 1:
        result.rejections.append(
            _err("field_invalid", _("Informe um único endereço de entrega."), f"{M0}.destinations[1]")
        )
    if chosen.destinations:
        given = chosen.destinations[0]
        dest_id = stored_id or new_destination_id()
        fields.update(_address_fields(given, destination_id=dest_id, buyer_first=buyer_first, buyer_last=buyer_last))
        if wanted_dest is None or wanted_dest in (dest_id, given.id):
            return dest_id
        result.rejections.append(_err("field_invalid", _("Destino de entrega desconhecido."), SEL_DEST))
    elif wanted_dest is not None and checkout is not None and stored_id and wanted_dest == stored_id:
        # The caller references the address it wrote earlier by its id (BCP §9 selection).
        for key in EMPTY_FIELDS:
            if key.startswith("ship_"):
                fields[key] = getattr(checkout, key)
        return stored_id
    elif wanted_dest is not None:
        result.rejections.append(_err("field_invalid", _("Destino de entrega desconhecido."), SEL_DEST))
    return None


def _shipping_quote(
    config: ShippingConfig,
    subtotal_after_discounts: int,
    result: FulfillmentEvaluation,
    quote: Callable[[str, str, int], tuple[OptionView, ...]] | None,
) -> tuple[list[dict[str, object]], tuple[OptionView, ...]]:
    """The address checked and presented, and the shipping options for its CEP."""
    fields = result.fields
    if not fields["ship_destination_id"]:
        result.messages.append(_err("field_required", _("Informe o endereço de entrega."), f"{M0}.destinations"))
        return [], ()
    address_messages, usable_cep = _validate_address(fields)
    result.messages.extend(address_messages)
    destinations = [shipping_destination_dict(fields)]
    if usable_cep is None:
        return destinations, ()
    if quote is not None:
        options = quote(usable_cep, fields["ship_uf"], subtotal_after_discounts)
    else:
        options = shipping_options(
            config=config, cep=usable_cep, uf=fields["ship_uf"], subtotal_after_discounts=subtotal_after_discounts
        )
    if not options:
        result.messages.append(
            _err("address_undeliverable", _("Não entregamos no CEP %(cep)s.") % {"cep": fields["ship_cep"]}, DEST0)
        )
    return destinations, options


def _pickup_destination(
    chosen: FulfillmentMethodInput, config: ShippingConfig, result: FulfillmentEvaluation
) -> tuple[list[dict[str, object]], str | None, tuple[OptionView, ...]]:
    """Every pickup location as a destination, the chosen one, and its pickup options."""
    wanted_dest = chosen.selected_destination_id or None
    destinations = [location_destination(loc) for loc in config.pickup_locations]
    location = next((loc for loc in config.pickup_locations if loc.public_id == wanted_dest), None)
    selected: str | None = None
    if wanted_dest is not None and location is None:
        # A point the store closed since the platform chose it is not "unknown" to it (QA walk): say it closed.
        closed = PickupLocation.objects.filter(public_id=wanted_dest).values_list("name", flat=True).first()
        said = (
            _("A loja de retirada %(name)s não está mais disponível; escolha outra.") % {"name": closed}
            if closed
            else _("Loja de retirada desconhecida.")
        )
        result.rejections.append(_err("field_invalid", said, SEL_DEST))
    elif location is not None:
        selected = location.public_id
    else:
        result.messages.append(_err("field_required", _("Escolha a loja para retirada."), SEL_DEST))
    return destinations, selected, pickup_options(config=config, location=location)


def _select_option(
    chosen: FulfillmentMethodInput,
    options: tuple[OptionView, ...],
    selected_destination: str | None,
    result: FulfillmentEvaluation,
) -> OptionView | None:
    """The option asked for, when it is offered for the selected destination."""
    wanted_option = chosen.groups[0].selected_option_id if chosen.groups else None
    selected_option = next((o for o in options if o.id == wanted_option), None) if wanted_option else None
    if wanted_option and selected_option is None:
        result.rejections.append(_err("field_invalid", _("Opção de entrega indisponível para este destino."), SEL_OPT))
    elif selected_option is None and options and selected_destination:
        result.messages.append(_err("field_required", _("Escolha a forma de entrega."), SEL_OPT))
    if selected_option is not None and not selected_destination:
        return None  # an option only counts for a selected destination
    return selected_option


def _method_snapshot(
    chosen: FulfillmentMethodInput,
    physical_line_ids: list[str],
    destinations: list[dict[str, object]],
    selected_destination: str | None,
    options: tuple[OptionView, ...],
    fields: dict[str, str],
) -> dict[str, object]:
    group = {
        "id": GROUP_IDS[chosen.type],
        "line_item_ids": list(physical_line_ids),
        "options": [_option_dict(o) for o in options],
        "selected_option_id": fields["selected_option_id"] or None,
    }
    return {
        "id": METHOD_IDS[chosen.type],
        "type": chosen.type,
        "line_item_ids": list(physical_line_ids),
        "destinations": destinations,
        "selected_destination_id": selected_destination,
        "groups": [group],
    }
