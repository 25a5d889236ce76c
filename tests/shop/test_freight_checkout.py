"""The checkout engine's shipping options from `shop.freight` (issue 36): the carrier's services when one is
configured (asked before the checkout's lock, read from the cache under it), the table by weight otherwise, and
the table when the carrier is down. The storefront and the BCP transports share this engine."""

from __future__ import annotations

import re

import pytest

from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_create, checkout_update
from shop.checkout.types import AddressInput, CheckoutInput, LineInput
from tests.carriers.fake_melhorenvio import FakeMelhorEnvio
from tests.shop.checkout_factories import BUYER, SP_ADDRESS, shipping
from tests.shop.freight_helpers import SHIRT

pytestmark = pytest.mark.django_db
RJ = AddressInput(street="Av. Rio Branco", number="1", address_locality="Rio de Janeiro", postal_code="20040-002")


def _options(result) -> list[tuple[str, str, int]]:  # type: ignore[no-untyped-def]
    view = checkout_view(result.checkout)
    return [(o.id, o.title, o.amount) for o in view.fulfillment_methods[0].groups[0].options]


def _input(quantity: int, address: AddressInput = RJ, option: str | None = None, line_id: str | None = None):  # type: ignore[no-untyped-def]
    return CheckoutInput(lines=(LineInput(SHIRT, quantity, line_id),), buyer=BUYER,
                         fulfillment=shipping(address, option=option))  # fmt: skip


def test_the_checkout_offers_the_carrier_services_and_asks_the_carrier_once(melhorenvio: FakeMelhorEnvio) -> None:
    created = checkout_create(data=_input(1))
    assert _options(created) == [
        ("melhorenvio:1", "PAC (Correios)", 1500),
        ("melhorenvio:3", ".Package (Jadlog)", 1800),
        ("melhorenvio:2", "SEDEX (Correios)", 2200),
    ]
    line_id = created.checkout.lines.get().public_id
    updated = checkout_update(
        checkout_id=created.checkout.public_id, data=_input(1, option="melhorenvio:2", line_id=line_id)
    )
    assert updated.checkout.selected_option_id == "melhorenvio:2"
    assert [(t.type, t.amount) for t in checkout_view(updated.checkout).totals] == [
        ("subtotal", 5990), ("fulfillment", 2200), ("total", 8190),
    ]  # fmt: skip
    assert len(melhorenvio.calculations) == 1  # the update found the same parcels and CEP cached
    ten = checkout_update(
        checkout_id=created.checkout.public_id, data=_input(10, option="melhorenvio:2", line_id=line_id)
    )
    assert [(t.type, t.amount) for t in checkout_view(ten.checkout).totals][1] == ("fulfillment", 2200 + 2 * 700)
    assert len(melhorenvio.calculations) == 2


def test_a_carrier_down_leaves_the_table_by_weight_and_the_checkout_works(melhorenvio: FakeMelhorEnvio) -> None:
    melhorenvio.mode = "down"
    result = checkout_create(data=_input(10, option="sedex"))
    assert _options(result) == [("pac", "PAC", 0), ("sedex", "SEDEX", 3990 + 1380)]  # PAC free from R$ 299,00
    assert result.checkout.status == "ready_for_complete"
    assert not [m for m in result.messages if m.type == "error"]


def test_without_a_carrier_the_embedded_table_prices_ten_shirts_above_one(freight_shop: None) -> None:
    one = checkout_create(data=_input(1, SP_ADDRESS))
    ten = checkout_create(data=_input(10, SP_ADDRESS))
    assert _options(one) == [("pac", "PAC", 1890), ("sedex", "SEDEX", 3290), ("motoboy", "Motoboy", 1290)]
    # ten shirts reach PAC's free shipping (R$ 299,00) and weigh 2.916 kg cubic: SEDEX + 2 × R$ 6,90
    assert _options(ten) == [("pac", "PAC", 0), ("sedex", "SEDEX", 3290 + 1380), ("motoboy", "Motoboy", 1290)]


def _box(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<li data-option="([\w:.]+)">.*?class="option-price money">([^<]*)<', html, re.S)


def test_calcular_frete_on_the_product_page_and_the_cart_shows_the_same_carrier_services(
    client, melhorenvio: FakeMelhorEnvio
) -> None:
    html = client.get("/produtos/camiseta-basica-preta/", {"variante": SHIRT, "cep": "20040-002"}).content.decode()
    assert _box(html) == [("melhorenvio:1", "R$ 15,00"), ("melhorenvio:3", "R$ 18,00"), ("melhorenvio:2", "R$ 22,00")]
    client.post("/carrinho/adicionar", {"sku": SHIRT, "quantity": "10"})
    html = client.get("/carrinho/", {"cep": "20040-002"}).content.decode()
    # Ten shirts: R$ 599,00, past PAC's free shipping; the others priced by 2.916 kg cubic.
    assert _box(html) == [("melhorenvio:1", "Grátis"), ("melhorenvio:3", "R$ 28,00"), ("melhorenvio:2", "R$ 36,00")]


def test_the_checkout_page_names_a_carrier_service_without_double_parentheses(
    client, melhorenvio: FakeMelhorEnvio
) -> None:
    """QA walk: "Frete (PAC (Correios))": the page wrapped the option's title, which names its carrier in
    parentheses, in parentheses of its own."""
    client.post("/carrinho/adicionar", {"sku": SHIRT, "quantity": "1"})
    checkout_id = client.get("/checkout/")["Location"].rsplit("/", 1)[1]
    form = {"action": "update", "email": "ana@example.com.br", "first_name": "Ana", "last_name": "Souza",
            "phone": "(21) 98765-4321", "tax_id": "529.982.247-25", "method": "shipping", "cep": "20040-002",
            "street": "Rua da Assembleia", "number": "10", "neighborhood": "Centro", "city": "Rio de Janeiro",
            "uf": "RJ", "shipping_option": "melhorenvio:1"}  # fmt: skip
    html = client.post(f"/checkout/{checkout_id}", form, follow=True).content.decode()
    assert "<dt>Frete — PAC (Correios)</dt>" in html
    assert "(PAC (Correios))" not in html
