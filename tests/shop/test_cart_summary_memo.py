"""Issue 34: the cart's summary below the coupons (totals, Pix price, card installments, the freight box) is kept
per its inputs by `{% memo %}` in cart.html. What it shows must be what the same template without the memo renders,
and it must follow what the store changes (the Pix rate, the card being offered, the installment policy) at once:
those are inputs of the memo."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings
from django.template import Context, Template
from django.test import RequestFactory
from django.utils import translation

from shop.checkout.pricing import card_offered, installment_policy, pix_discount_bp
from shop.models import StoreSettings
from shop.storefront.views import freight_context
from tests.shop.checkout_factories import make_shipping, make_variant

pytestmark = pytest.mark.django_db

LOAD = "{% load i18n static money storefront pix %}"


def _summary() -> tuple[str, str]:
    """The memo tag of cart.html's summary and the fragment it keeps."""
    page = (Path(settings.BASE_DIR) / "templates/shop/cart/cart.html").read_text()
    start = page.index("{% memo ")
    tag_end = page.index("%}", start) + 2
    return page[start:tag_end], page[tag_end : page.index("{% endmemo %}", tag_end)]


def _context(*, cep: str, subtotal: int, discount: int, show_freight: bool) -> dict[str, object]:
    request = RequestFactory().get("/carrinho/", {"cep": cep} if cep else {})
    estimate = subtotal - discount
    return {
        "subtotal": subtotal,
        "discount": discount,
        "estimate": estimate,
        "pix_bp": pix_discount_bp(),
        "card_policy": (card_offered(), installment_policy()),
        "show_freight": show_freight,
        **freight_context(request, subtotal=estimate, action="/carrinho/", hidden=[]),
    }


@pytest.mark.parametrize("language", ["pt-br", "en"])
def test_the_kept_summary_is_what_the_template_renders(language: str) -> None:
    StoreSettings.objects.create(pix_discount_percent=Decimal("5"))
    make_shipping()
    tag, fragment = _summary()
    kept, general = Template(f"{LOAD}{tag}{fragment}{{% endmemo %}}"), Template(f"{LOAD}{fragment}")
    cases = [
        {"cep": "", "subtotal": 9990, "discount": 0, "show_freight": True},
        {"cep": "01001-000", "subtotal": 25000, "discount": 1000, "show_freight": True},  # a quote, free shipping
        {"cep": "123", "subtotal": 4290, "discount": 0, "show_freight": True},  # a CEP error
        {"cep": "", "subtotal": 4290, "discount": 429, "show_freight": False},
    ]
    with translation.override(language):
        for case in cases:
            context = _context(**case)  # type: ignore[arg-type]
            expected = general.render(Context(context))
            assert kept.render(Context(context)) == expected  # rendered and kept
            assert kept.render(Context(context)) == expected  # read back


def test_the_cart_summary_follows_the_pix_rate_and_the_installments_offered(client, settings) -> None:
    settings.BCP_PIX_SANDBOX = True
    store = StoreSettings.objects.create()  # 12x without interest, at least R$ 5,00 each
    make_variant(price=12000, stock=5)
    make_shipping()
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    before = client.get("/carrinho/").content.decode()
    assert "Pagamento à vista no Pix" in before and "ou 12x de R$ 10,00 sem juros" in before
    # when the merchant sets 5 % off by Pix, the same cart shows the Pix price
    store.pix_discount_percent = Decimal("5")
    store.save()
    assert '<strong data-role="pix-price">R$ 114,00</strong> no Pix' in client.get("/carrinho/").content.decode()
    # and when the merchant offers at most 6 installments without interest, the line says 6x
    store.card_interest_free_installments = 6
    store.save()
    assert "ou 6x de R$ 20,00 sem juros" in client.get("/carrinho/").content.decode()
    # and when the card is turned off, the installments line is hidden
    settings.BCP_CARD_ENABLED = False
    after = client.get("/carrinho/").content.decode()
    assert "sem juros" not in after and 'data-testid="card-installments" hidden></p>' in after
