"""Shipping quotes: which methods serve a CEP, at what price and with which delivery estimate.

Rules (per `ShippingMethod`): a CEP-range rate wins over a UF rate (narrowest range first), a UF
rate wins over the flat price; no match = the method does not serve that CEP. A method with
`free_above` costs 0 once the subtotal after discounts reaches it. Queries are fixed: methods and
pickup locations (2), plus the rates that can apply to one CEP (1) when a CEP is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from shop.checkout.types import OptionView
from shop.models import PickupLocation, ShippingMethod, ShippingRate


@dataclass(frozen=True)
class ShippingConfig:
    shipping_methods: tuple[ShippingMethod, ...]  # kind=shipping
    pickup_methods: tuple[ShippingMethod, ...]  # kind=pickup
    pickup_locations: tuple[PickupLocation, ...]


def shipping_config_load() -> ShippingConfig:
    """Active methods and pickup locations: 2 queries."""
    methods = list(ShippingMethod.objects.filter(active=True))
    locations = tuple(PickupLocation.objects.filter(active=True))
    return ShippingConfig(
        shipping_methods=tuple(m for m in methods if m.kind == ShippingMethod.KIND_SHIPPING),
        pickup_methods=tuple(m for m in methods if m.kind == ShippingMethod.KIND_PICKUP),
        pickup_locations=locations,
    )


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
    """The rates that can apply to this CEP/UF, by method id: 1 query."""
    found: dict[int, list[ShippingRate]] = {m.pk: [] for m in methods}
    candidates = ShippingRate.objects.filter(method_id__in=list(found)).filter(
        Q(uf=uf) | Q(cep_start__lte=cep, cep_end__gte=cep)
    )
    for rate in candidates.order_by("id"):
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
