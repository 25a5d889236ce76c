"""`shop.freight.quote_for` (issue 36): the carrier's services for the parcels of a set of lines, cached per
(parcels, CEP); the table by weight when no carrier is configured or the carrier does not answer in time."""

from __future__ import annotations

import time

import pytest
from django.utils import translation

from carriers import Parcel
from kernel.ops import request_cache
from shop.freight.parcels import FreightLine, parcels_for
from shop.freight.quotes import FreightOption, quote_for
from shop.models import PackagingBox, StoreSettings
from shop.models.store import CACHE_KEY, STORE_ROW_ID
from tests.carriers.fake_correios import FakeCorreios
from tests.carriers.fake_melhorenvio import FakeMelhorEnvio
from tests.shop.freight_helpers import SHIRT

pytestmark = pytest.mark.django_db

ONE = [FreightLine(SHIRT, 1, 5990)]
TEN = [FreightLine(SHIRT, 10, 5990)]


def store_cache_forget() -> None:
    request_cache.forget(CACHE_KEY)


def _prices(options) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    return [(o.id, o.amount) for o in options.options]


def test_parcels_use_the_variant_product_and_store_sizes_and_the_smallest_box(freight_shop) -> None:
    assert parcels_for(ONE) == (Parcel(180 + 90, 27, 18, 9, 5990),)  # Caixa P (tipo 2)
    assert parcels_for(TEN) == (Parcel(1800 + 220, 36, 27, 18, 59900),)  # Caixa M (tipo 4)
    # A product without weight or sizes takes the store's defaults (300 g, 20 × 15 × 5 cm), which fit Caixa P.
    assert parcels_for([FreightLine("CANECA", 1)]) == (Parcel(300 + 90, 27, 18, 9, 3990),)
    assert parcels_for([FreightLine("NAO-EXISTE", 1)]) == ()


def test_the_embedded_table_prices_ten_shirts_above_one(freight_shop) -> None:
    one = quote_for(lines=ONE, destination_cep="01310-100", subtotal_after_discounts=5990)
    ten = quote_for(lines=TEN, destination_cep="01310-100", subtotal_after_discounts=0)
    assert one.source == ten.source == "table"
    assert _prices(one) == [("pac", 1890), ("sedex", 3290), ("motoboy", 1290)]
    # 2.916 kg cubic (Caixa M): two kg above the first at R$ 3,50 (PAC) and R$ 6,90 (SEDEX); the motoboy's
    # rate does not depend on weight.
    assert _prices(ten) == [("pac", 1890 + 700), ("sedex", 3290 + 1380), ("motoboy", 1290)]
    # Free shipping keeps working: PAC is free from R$ 299,00, whatever the weight.
    free = quote_for(lines=TEN, destination_cep="01310-100", subtotal_after_discounts=59900)
    assert _prices(free)[0] == ("pac", 0)


def test_a_bad_cep_is_a_portuguese_error(freight_shop) -> None:
    with pytest.raises(ValueError, match=r"CEP inválido: use o formato 00000-000\."):
        quote_for(lines=ONE, destination_cep="0131", subtotal_after_discounts=0)


def test_a_bad_or_unknown_cep_reads_as_the_checkout_says_it_in_the_buyers_language(freight_shop) -> None:
    # The product page's quote (carrier or table) and the checkout share one sentence per refusal, translated.
    with pytest.raises(ValueError, match=r"^CEP 00000-000 não existe\.$"):
        quote_for(lines=ONE, destination_cep="00000000", subtotal_after_discounts=0)
    with translation.override("en"):
        with pytest.raises(ValueError, match=r"^Invalid CEP: use the format 00000-000\.$"):
            quote_for(lines=ONE, destination_cep="0131", subtotal_after_discounts=0)
        with pytest.raises(ValueError, match=r"^CEP 00000-000 does not exist\.$"):
            quote_for(lines=ONE, destination_cep="00000-000", subtotal_after_discounts=0)


def test_melhor_envio_services_are_quoted_and_cached_per_parcels_and_cep(
    melhorenvio: FakeMelhorEnvio,
) -> None:
    one = quote_for(lines=ONE, destination_cep="20040-002", subtotal_after_discounts=5990)
    assert one.source == "carrier"
    assert one.options == (
        FreightOption("melhorenvio:1", "PAC (Correios)", "Correios", 1500, "Chega em 5 a 8 dias úteis", 5, 8, 29900),
        FreightOption("melhorenvio:3", ".Package (Jadlog)", "Jadlog", 1800, "Chega em 3 a 5 dias úteis", 3, 5, None),
        FreightOption("melhorenvio:2", "SEDEX (Correios)", "Correios", 2200, "Chega em 1 a 3 dias úteis", 1, 3, None),
    )
    ten = quote_for(lines=TEN, destination_cep="20040-002", subtotal_after_discounts=0)
    assert _prices(ten) == [("melhorenvio:1", 2300), ("melhorenvio:3", 2800), ("melhorenvio:2", 3600)]
    assert len(melhorenvio.calculations) == 2
    # The same parcels to the same CEP: from the cache, the carrier is not asked again.
    again = quote_for(lines=ONE, destination_cep="20040002", subtotal_after_discounts=5990)
    assert again == one and len(melhorenvio.calculations) == 2
    quote_for(lines=ONE, destination_cep="22250-040", subtotal_after_discounts=5990)
    assert len(melhorenvio.calculations) == 3


def test_free_shipping_of_the_table_applies_to_the_carrier_service_of_the_same_title(
    melhorenvio: FakeMelhorEnvio,
) -> None:
    options = quote_for(lines=TEN, destination_cep="20040-002", subtotal_after_discounts=59900)
    assert _prices(options)[:1] == [("melhorenvio:1", 0)]  # PAC free from R$ 299,00, the others priced
    assert options.options[0].free_above == 29900


def test_carrier_down_answers_with_the_table_and_is_not_asked_again_for_a_while(
    melhorenvio: FakeMelhorEnvio,
) -> None:
    melhorenvio.mode = "down"
    options = quote_for(lines=ONE, destination_cep="20040-002", subtotal_after_discounts=5990)
    assert options.source == "table" and _prices(options) == [("pac", 2290), ("sedex", 3990)]
    asked = len(melhorenvio.requests)
    quote_for(lines=ONE, destination_cep="30130-010", subtotal_after_discounts=5990)
    assert len(melhorenvio.requests) == asked  # known down: the table answers at once


def test_a_carrier_slower_than_the_deadline_gives_the_table_before_it_answers(
    settings,
    melhorenvio: FakeMelhorEnvio,
) -> None:
    settings.CARRIER_QUOTE_DEADLINE_MS = 300
    melhorenvio.delay = 3.0
    started = time.monotonic()
    options = quote_for(lines=ONE, destination_cep="20040-002", subtotal_after_discounts=5990)
    waited = time.monotonic() - started
    assert options.source == "table"
    assert waited < melhorenvio.delay  # not a benchmark: the fake's answer had not even been sent yet


def test_correios_quotes_several_parcels(correios: FakeCorreios) -> None:
    PackagingBox.objects.update(max_weight_grams=1500)  # boxes of at most 1.5 kg: ten shirts go in two parcels
    parcels = parcels_for(TEN)
    assert parcels == (Parcel(7 * 180 + 220, 36, 27, 18, 7 * 5990), Parcel(3 * 180 + 90, 27, 18, 9, 3 * 5990))
    options = quote_for(lines=TEN, destination_cep="20040-002", subtotal_after_discounts=0)
    assert options.source == "carrier" and options.parcels == parcels
    # PAC: 18,00 (2.916 kg cubic → +2 kg × 4,00) + 18,00 (0.729 kg); SEDEX: 25,00 + 2 × 8,00 + 25,00.
    assert _prices(options) == [("correios:03298", 1800 + 800 + 1800), ("correios:03220", 2500 + 1600 + 2500)]
    assert len([r for r in correios.requests if r[1] == "/preco/v1/nacional"]) == 1


def test_a_cached_quote_costs_one_query(melhorenvio: FakeMelhorEnvio, django_assert_max_num_queries) -> None:
    quote_for(lines=ONE, destination_cep="20040-002", subtotal_after_discounts=5990)  # warm caches
    with django_assert_max_num_queries(1):  # the variants; store, boxes, table and quote come from caches
        quote_for(lines=ONE, destination_cep="20040-002", subtotal_after_discounts=5990)


def test_without_the_store_cep_the_carrier_is_not_asked(melhorenvio: FakeMelhorEnvio) -> None:
    StoreSettings.objects.filter(pk=STORE_ROW_ID).update(postal_code="")
    store_cache_forget()
    options = quote_for(lines=ONE, destination_cep="20040-002", subtotal_after_discounts=5990)
    assert options.source == "table" and melhorenvio.requests == []
