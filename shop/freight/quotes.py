"""Freight quotes for a set of lines to a CEP: the configured carrier's services, or the table when there is
no carrier or it does not answer within its deadline (the checkout never waits longer than that).

`quote_for` is the one function the checkout, the product page ("Calcular frete") and the BCP fulfillment
options call. It runs outside any transaction (it may reach the network). A carrier's answer is cached per
(carrier, origin, destination, parcels) for `CARRIER_QUOTE_CACHE_SECONDS`; a carrier that failed is not asked
again for `DOWN_SECONDS`, so a carrier outage costs one deadline, not one per page.

Free shipping keeps working: a table method with "frete grátis a partir de" makes the carrier service of the
same title ("PAC", "SEDEX") free from that subtotal; the option says which service it is.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from django.conf import settings
from django.core.cache import cache

import carriers
from carriers import CarrierRejected, CarrierUnavailable, Parcel, ServiceQuote
from kernel.http import Deadline
from shop.checkout.fulfillment import (
    ShippingConfig,
    cep_checked,
    days_text,
    shipping_config_load,
    shipping_options,
)
from shop.checkout.types import OptionView
from shop.freight.parcels import FreightLine, parcels_for
from shop.models import ShippingMethod
from shop.store.services import store_get

logger = logging.getLogger(__name__)

QUOTE_CACHE_KEY = "shop:freight:quote:v1:%s"
DOWN_CACHE_KEY = "shop:freight:carrier-down:v1:%s"
DOWN_SECONDS = 30
INCLUDED_GRAMS = 1000  # the table's rate covers the first kg of billable weight


@dataclass(frozen=True)
class FreightOption:
    id: str  # stable option id: "melhorenvio:1", "correios:03220", or the table method's code ("sedex")
    title: str  # "SEDEX"
    carrier: str  # "Correios", "Jadlog", "Entrega local"
    amount: int  # centavos, after free shipping
    description: str  # "Chega em 1 a 2 dias úteis"
    days_min: int | None = None
    days_max: int | None = None
    free_above: int | None = None  # the free-shipping threshold that applies to this service, if any


@dataclass(frozen=True)
class FreightOptions:
    options: tuple[FreightOption, ...]
    source: Literal["carrier", "table"]
    parcels: tuple[Parcel, ...]

    @property
    def billable_weight_g(self) -> int:
        return sum(p.billable_weight_g for p in self.parcels)

    def option_views(self) -> tuple[OptionView, ...]:
        """The options as the checkout engine and the freight box present them."""
        return tuple(
            OptionView(id=o.id, title=o.title, description=o.description, amount=o.amount, carrier=o.carrier,
                       days_min=o.days_min, days_max=o.days_max)
            for o in self.options
        )  # fmt: skip


def _cache_key(carrier: str, origin: str, destination: str, parcels: tuple[Parcel, ...]) -> str:
    shape = ";".join(f"{p.weight_g},{p.length_cm},{p.width_cm},{p.height_cm},{p.declared_value}" for p in parcels)
    digest = hashlib.sha256(f"{carrier}|{origin}|{destination}|{shape}".encode()).hexdigest()[:32]
    return QUOTE_CACHE_KEY % digest


def extra_kg_charge(method: ShippingMethod, billable_weight_g: int) -> int:
    """The table by weight: `price_per_extra_kg` for each kg, or part of one, above the first."""
    if not method.price_per_extra_kg or billable_weight_g <= INCLUDED_GRAMS:
        return 0
    extra_kg = -(-(billable_weight_g - INCLUDED_GRAMS) // 1000)
    return extra_kg * method.price_per_extra_kg


def _table(digits: str, uf: str, subtotal: int, parcels: tuple[Parcel, ...]) -> tuple[FreightOption, ...]:
    config = shipping_config_load()
    methods = {m.code: m for m in config.shipping_methods}
    weight = sum(p.billable_weight_g for p in parcels)
    options = []
    for option in shipping_options(config=config, cep=digits, uf=uf, subtotal_after_discounts=subtotal):
        method = methods[option.id]
        amount = option.amount + extra_kg_charge(method, weight) if option.amount else 0  # free stays free
        options.append(
            FreightOption(
                id=option.id, title=option.title, carrier=option.carrier, amount=amount,
                description=option.description, days_min=option.days_min, days_max=option.days_max,
                free_above=method.free_above,
            )
        )  # fmt: skip
    return tuple(options)


def _carrier_services(
    carrier: carriers.Carrier, origin: str, destination: str, parcels: tuple[Parcel, ...], *, network: bool
) -> list[ServiceQuote] | None:
    """The carrier's services (cached), or None when it failed, is known to be down, or (`network` False) was not
    asked before."""
    key = _cache_key(carrier.name, origin, destination, parcels)
    cached = cache.get(key)
    if isinstance(cached, list):
        return cached
    if not network or cache.get(DOWN_CACHE_KEY % carrier.name):
        return None
    deadline = Deadline(settings.CARRIER_QUOTE_DEADLINE_MS / 1000)
    try:
        services = carrier.quote(parcels=parcels, from_cep=origin, to_cep=destination, deadline=deadline)
    except CarrierUnavailable as exc:
        logger.warning("carrier %s did not quote (%s): table rates answer", carrier.name, exc)
        cache.set(DOWN_CACHE_KEY % carrier.name, True, DOWN_SECONDS)
        return None
    except CarrierRejected as exc:
        logger.warning("carrier %s refused the quote (%s): table rates answer", carrier.name, exc.message)
        return None
    if settings.CARRIER_QUOTE_CACHE_SECONDS:
        cache.set(key, services, settings.CARRIER_QUOTE_CACHE_SECONDS)
    return services


def _from_services(services: list[ServiceQuote], subtotal: int) -> tuple[FreightOption, ...]:
    thresholds = {
        m.title.casefold(): m.free_above for m in shipping_config_load().shipping_methods if m.free_above is not None
    }
    options = []
    for service in sorted(services, key=lambda s: (s.price, s.days_max, s.code)):
        free_above = thresholds.get(service.name.casefold())
        free = free_above is not None and subtotal >= free_above
        options.append(
            FreightOption(
                id=service.code,
                title=service.name if service.carrier in service.name else f"{service.name} ({service.carrier})",
                carrier=service.carrier,
                amount=0 if free else service.price,
                description=days_text(service.days_min, service.days_max),
                days_min=service.days_min,
                days_max=service.days_max,
                free_above=free_above,
            )
        )
    return tuple(options)


def quote_for(
    *, lines: Sequence[FreightLine], destination_cep: str, subtotal_after_discounts: int, network: bool = True
) -> FreightOptions:
    """Delivery options for `lines` to `destination_cep` (any format). Raises ValueError (`cep_checked`'s buyer
    message, the same as the table's quote) for a CEP that is malformed or does not exist. Outside any
    transaction: it may call the carrier (at most `CARRIER_QUOTE_DEADLINE_MS`), and answers with the table when
    the carrier cannot. `network=False`
    (under a lock): the carrier's cached answer or the table, never a call."""
    digits, uf = cep_checked(destination_cep)
    parcels = parcels_for(lines)
    carrier = carriers.configured()
    origin = store_get().postal_code
    if carrier is not None and parcels and len(origin) == 8:
        services = _carrier_services(carrier, origin, digits, parcels, network=network)
        if services:
            return FreightOptions(_from_services(services, subtotal_after_discounts), "carrier", parcels)
    return FreightOptions(_table(digits, uf, subtotal_after_discounts, parcels), "table", parcels)


# --- the checkout engine's side -------------------------------------------------------------------------------


def weight_matters(config: ShippingConfig) -> bool:
    """Whether the lines' parcels change the options: a carrier, or a table method priced by weight."""
    return bool(settings.CARRIER) or any(m.price_per_extra_kg for m in config.shipping_methods)


def carrier_quote_prefetch(*, lines: Sequence[FreightLine], destination_cep: str) -> None:
    """Before the checkout's lock, outside any transaction: ask the carrier for these lines and CEP, so the
    engine, under its lock, finds the answer cached (`checkout_shipping_options` never calls the carrier)."""
    if not settings.CARRIER or not lines or not destination_cep:
        return
    try:
        quote_for(lines=lines, destination_cep=destination_cep, subtotal_after_discounts=0)
    except ValueError:
        return  # a bad CEP: the engine says it, on its field


def checkout_shipping_options(
    *, config: ShippingConfig, lines: Sequence[FreightLine], cep: str, uf: str, subtotal_after_discounts: int
) -> tuple[OptionView, ...]:
    """The checkout engine's shipping options (under the checkout's lock: never the network). Without a carrier
    or a price by weight, exactly the table's, with no statement more."""
    if not weight_matters(config):
        return shipping_options(config=config, cep=cep, uf=uf, subtotal_after_discounts=subtotal_after_discounts)
    quoted = quote_for(lines=lines, destination_cep=cep, subtotal_after_discounts=subtotal_after_discounts,
                       network=False)  # fmt: skip
    return quoted.option_views()
