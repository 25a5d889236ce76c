"""Fixtures for the freight tests: the demo's shipping table and boxes, T-shirts with real sizes, a store with a
sender address, the two fake carriers wired into the settings, and paid orders of shirts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from django.db import transaction

from orders.models import Order
from orders.services import order_place_from_checkout
from shop.demo.checkout import seed_checkout_demo
from shop.models import Category, Product, StoreSettings, Variant
from shop.models.store import STORE_ROW_ID
from tests.carriers.fake_correios import ACCESS_CODE, CARD, USER, FakeCorreios, fake_correios
from tests.carriers.fake_melhorenvio import CLIENT_SECRET, TOKEN, FakeMelhorEnvio, fake_melhorenvio
from tests.orders.conftest import make_checkout

SHIRT = "CAM-BAS-PRETA-M"


@pytest.fixture
def freight_shop(db: None) -> None:
    """The embedded default's table (PAC, SEDEX by UF, with the per-kg add-on) and boxes; a shirt and a mug."""
    seed_checkout_demo()
    category = Category.objects.create(slug="camisetas", name="Camisetas")
    shirt = Product.objects.create(title="Camiseta básica preta", slug="camiseta-basica-preta", category=category,
                                   weight_grams=180, length_cm=26, width_cm=18, height_cm=3)  # fmt: skip
    Variant.objects.create(product=shirt, sku=SHIRT, title="M", price=5990, stock=100)
    bare = Product.objects.create(title="Caneca", slug="caneca", category=category, weight_grams=0)
    Variant.objects.create(product=bare, sku="CANECA", price=3990, stock=10)  # no weight, no sizes: store defaults
    StoreSettings.objects.update_or_create(
        pk=STORE_ROW_ID,
        defaults={"postal_code": "01310-100", "street": "Avenida Paulista", "number": "1578",
                  "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP", "phone": "(11) 3333-4444",
                  "contact_email": "loja@example.com.br", "cnpj": "11.222.333/0001-81"},
    )  # fmt: skip


@pytest.fixture
def melhorenvio(settings, freight_shop: None) -> Iterator[FakeMelhorEnvio]:
    with fake_melhorenvio() as fake:
        settings.CARRIER = "melhorenvio"
        settings.MELHOR_ENVIO_BASE_URL = fake.url
        settings.MELHOR_ENVIO_TOKEN = TOKEN
        settings.MELHOR_ENVIO_CLIENT_SECRET = CLIENT_SECRET
        yield fake


@pytest.fixture
def correios(settings, freight_shop: None) -> Iterator[FakeCorreios]:
    with fake_correios() as (url, fake):
        settings.CARRIER = "correios"
        settings.CORREIOS_BASE_URL = url
        settings.CORREIOS_USER, settings.CORREIOS_ACCESS_CODE, settings.CORREIOS_POSTING_CARD = USER, ACCESS_CODE, CARD
        yield fake


def shirts_order(captured, quantity: int = 1, **kwargs: object) -> Order:  # type: ignore[no-untyped-def]
    """A paid order of `quantity` shirts to Rio de Janeiro (after-commit callbacks run, as a real commit)."""
    checkout = make_checkout(lines=[(SHIRT, 5990, quantity)], **kwargs)
    checkout = replace(checkout, destination={
        **checkout.destination, "postal_code": "20040-002", "city": "Rio de Janeiro", "state": "RJ",
        "street": "Rua da Assembleia", "number": "10",
    })  # fmt: skip
    with captured(execute=True), transaction.atomic():
        return order_place_from_checkout(checkout=checkout)
