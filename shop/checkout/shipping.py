"""Shipping quotes: which methods serve a CEP, at what price and with which delivery estimate.

Rules (per `ShippingMethod`): a CEP-range rate wins over a UF rate (narrowest range first), a UF
rate wins over the flat price; no match = the method does not serve that CEP. A method with
`free_above` costs 0 once the subtotal after discounts reaches it. Methods, pickup locations and rates
are read once (3 queries) and cached until one of them is saved or deleted.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from kernel.ops import request_cache
from shop.checkout.cep import cep_digits, cep_format, cep_lookup, cep_uf
from shop.checkout.outputs import OptionView
from shop.models import PickupLocation, ShippingMethod, ShippingRate


@dataclass(frozen=True)
class ShippingConfig:
    shipping_methods: tuple[ShippingMethod, ...]  # kind=shipping
    pickup_methods: tuple[ShippingMethod, ...]  # kind=pickup
    pickup_locations: tuple[PickupLocation, ...]


# Read-mostly: methods, rates and pickup locations change when the merchant edits them, and every checkout
# evaluation needs them. Cached (Django's cache: per process by default, shared with REDIS_URL) and dropped
# after any save or delete of those models commits (`shipping_cache_clear`, wired in shop/receivers.py).
CACHE_KEY = "shop:shipping:v1"
CACHE_SECONDS = 300  # a bound for caches that cannot hear another process's invalidation (local memory)


@dataclass(frozen=True)
class _Cached:
    config: ShippingConfig
    rates: tuple[ShippingRate, ...]  # every rate of the active shipping methods


def _load() -> _Cached:
    cached = request_cache.get(CACHE_KEY)  # once per request
    if isinstance(cached, _Cached):
        return cached
    methods = list(ShippingMethod.objects.filter(active=True))
    config = ShippingConfig(
        shipping_methods=tuple(m for m in methods if m.kind == ShippingMethod.KIND_SHIPPING),
        pickup_methods=tuple(m for m in methods if m.kind == ShippingMethod.KIND_PICKUP),
        pickup_locations=tuple(PickupLocation.objects.filter(active=True)),
    )
    ids = [m.pk for m in config.shipping_methods]
    rates = tuple(ShippingRate.objects.filter(method_id__in=ids).order_by("id")) if ids else ()
    loaded = _Cached(config=config, rates=rates)
    request_cache.set(CACHE_KEY, loaded, CACHE_SECONDS)
    return loaded


def shipping_cache_clear() -> None:
    request_cache.forget(CACHE_KEY)


def shipping_config_load() -> ShippingConfig:
    """Active methods and pickup locations: 3 queries (with the rates) when not cached, else none."""
    return _load().config


def days_text(days_min: int, days_max: int, *, pickup: bool = False) -> str:
    """The delivery (or pickup) estimate in the active language: the engine speaks the checkout's language."""
    if days_max == 0:
        return _("Pronto para retirada hoje") if pickup else _("Chega hoje")
    if pickup:
        if days_min == days_max:
            return ngettext(
                "Pronto para retirada em %(n)d dia útil", "Pronto para retirada em %(n)d dias úteis", days_max
            ) % {"n": days_max}
        return ngettext(
            "Pronto para retirada em %(min)d a %(max)d dia útil",
            "Pronto para retirada em %(min)d a %(max)d dias úteis",
            days_max,
        ) % {"min": days_min, "max": days_max}
    if days_min == days_max:
        return ngettext("Chega em %(n)d dia útil", "Chega em %(n)d dias úteis", days_max) % {"n": days_max}
    if days_min == 0:
        return ngettext("Chega em até %(n)d dia útil", "Chega em até %(n)d dias úteis", days_max) % {"n": days_max}
    return ngettext("Chega em %(min)d a %(max)d dia útil", "Chega em %(min)d a %(max)d dias úteis", days_max) % {
        "min": days_min,
        "max": days_max,
    }


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


def freight_quote(*, cep: str, subtotal_after_discounts: int, config: ShippingConfig | None = None) -> FreightQuote:
    """Options for `cep` (any format the buyer types). Raises ValueError with a buyer message for a bad CEP.

    The UF comes from the offline CEP table exactly as in the checkout (so the prices are the ones the checkout
    will charge); the city, when the CEP provider answers, is only shown.
    """
    digits = cep_digits(cep)
    if digits is None:
        raise ValueError(_("CEP inválido: use o formato 00000-000."))
    uf = cep_uf(digits)
    if uf is None:
        raise ValueError(_("CEP %(cep)s não existe.") % {"cep": cep_format(digits)})
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
