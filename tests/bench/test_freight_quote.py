"""Benchmark: what a cached carrier quote adds to a checkout update (run with `make bench`; prints, never asserts
time). Issue 36.

Side by side, in interleaved rounds (the order reversed every other round), the median of per-round ratios:
- `update + table`: `checkout_update` (10 shirts to Rio) then `quote_for` with no carrier (the table by weight);
- `update + carrier (cached)`: the same with Melhor Envio configured (a local fake) and its quote already cached
  for these parcels and CEP, as every update after the first sees it.
The cached quote's statements are counted too (asserted: one, the variants; not a timing).
"""

from __future__ import annotations

import statistics
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from shop.checkout.services import checkout_create, checkout_update
from shop.checkout.types import CheckoutInput, LineInput
from shop.freight.parcels import FreightLine
from shop.freight.quotes import quote_for
from tests.carriers.fake_melhorenvio import CLIENT_SECRET, TOKEN, fake_melhorenvio
from tests.shop.checkout_factories import BUYER, shipping
from tests.shop.freight_helpers import SHIRT, freight_shop  # noqa: F401 (the fixture)

ROUNDS = 9
CALLS = 20
LINES = [FreightLine(SHIRT, 10, 5990)]


def _data(line_id: str | None = None) -> CheckoutInput:
    return CheckoutInput(lines=(LineInput(SHIRT, 10, line_id),), buyer=BUYER, fulfillment=shipping(option="pac"))


def _window(checkout_id: str, line_id: str) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        checkout_update(checkout_id=checkout_id, data=_data(line_id))
        quote_for(lines=LINES, destination_cep="01310-100", subtotal_after_discounts=59900)
    return (time.perf_counter() - started) / CALLS


@pytest.mark.django_db
@pytest.mark.usefixtures("freight_shop")
def test_a_cached_carrier_quote_adds_little_to_the_checkout_update(settings) -> None:
    created = checkout_create(data=_data())
    checkout_id = created.checkout.public_id
    line_id = created.checkout.lines.get().public_id
    with fake_melhorenvio() as fake:
        carrier = {"CARRIER": "melhorenvio", "MELHOR_ENVIO_BASE_URL": fake.url, "MELHOR_ENVIO_TOKEN": TOKEN,
                   "MELHOR_ENVIO_CLIENT_SECRET": CLIENT_SECRET}  # fmt: skip

        def run(case: str) -> float:
            for name, value in carrier.items():
                setattr(settings, name, value if case == "carrier" else ("" if name == "CARRIER" else value))
            return _window(checkout_id, line_id)

        run("table"), run("carrier")  # warm both: the caches, and the one carrier call
        assert len(fake.calculations) == 1
        with CaptureQueriesContext(connection) as cached:
            quote_for(lines=LINES, destination_cep="01310-100", subtotal_after_discounts=59900)
        assert len(cached.captured_queries) == 1
        ratios, times = [], {"table": [], "carrier": []}
        for index in range(ROUNDS):
            order = ("table", "carrier") if index % 2 == 0 else ("carrier", "table")
            measured = {case: run(case) for case in order}
            times["table"].append(measured["table"])
            times["carrier"].append(measured["carrier"])
            ratios.append(measured["carrier"] / measured["table"])
        assert len(fake.calculations) == 1  # every carrier window answered from the cache
    print("\nfreight — checkout update + quote_for (10 shirts), median of interleaved rounds:")
    print(f"  update + table            {statistics.median(times['table']) * 1000:7.2f} ms")
    print(f"  update + carrier (cached) {statistics.median(times['carrier']) * 1000:7.2f} ms")
    print(f"  ratio carrier/table: {statistics.median(ratios):.2f}x (range {min(ratios):.2f}–{max(ratios):.2f})")
