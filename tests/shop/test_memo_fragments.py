"""`{% memo %}` (shop/templatetags/storefront.py, issue 34): a fragment rendered once per distinct value of its
named inputs, seeing nothing else; the checkout's payment choice is one, and every buyer still sees their own
prices, plans and chosen method."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest
from django.template import Context, Template, TemplateSyntaxError
from django.test import Client
from django.utils import translation
from django.utils.safestring import mark_safe

from shop.models import StoreSettings
from shop.templatetags.storefront import MemoNode
from tests.shop.checkout_factories import FORM_ADDRESS, FORM_CONTACT, make_shipping, make_variant

TEXT = (
    '{% load i18n storefront %}{% memo a=x b=y.z %}[{{ a }}|{{ b }}|{{ other }}|{% translate "Carrinho" %}]'
    "{% endmemo %}"
)


@dataclass(frozen=True)
class Choice:
    code: str
    selected: bool


def _node(template: Template) -> MemoNode:
    return next(iter(template.nodelist.get_nodes_by_type(MemoNode)))


def test_a_memo_sees_only_its_inputs_and_is_kept_per_their_values() -> None:
    template = Template(TEXT)
    with translation.override("pt-br"):
        assert template.render(Context({"x": 1, "y": {"z": "<b>"}, "other": "fora"})) == "[1|&lt;b&gt;||Carrinho]"
        assert template.render(Context({"x": 2, "y": {"z": "<b>"}})) == "[2|&lt;b&gt;||Carrinho]"
        assert template.render(Context({"x": 1, "y": {"z": "<b>"}})) == "[1|&lt;b&gt;||Carrinho]"
        assert len(_node(template).rendered) == 2  # the third render was the first one's
    with translation.override("en"):
        assert template.render(Context({"x": 1, "y": {"z": "<b>"}})) == "[1|&lt;b&gt;||Cart]"


def test_inputs_that_render_differently_are_different_keys() -> None:
    template = Template("{% load storefront %}{% memo a=x %}{{ a }}{% endmemo %}")
    assert template.render(Context({"x": "<i>"})) == "&lt;i&gt;"
    assert template.render(Context({"x": mark_safe("<i>")})) == "<i>"
    assert template.render(Context({"x": 1})) == "1"
    assert template.render(Context({"x": True})) == "True"
    listed = Template(
        "{% load storefront %}{% memo a=x %}{% for c in a %}{{ c.code }}{{ c.selected }} {% endfor %}{% endmemo %}"
    )
    assert listed.render(Context({"x": [Choice("pix", True), Choice("card", False)]})) == "pixTrue cardFalse "
    assert listed.render(Context({"x": [Choice("pix", False), Choice("card", True)]})) == "pixFalse cardTrue "


def test_an_input_that_is_no_plain_value_is_rendered_every_time() -> None:
    template = Template("{% load storefront %}{% memo a=x %}{{ a.n }}{% endmemo %}")

    class Box:
        def __init__(self, n: int) -> None:
            self.n = n

    assert template.render(Context({"x": Box(1)})) == "1"
    assert template.render(Context({"x": Box(2)})) == "2"
    assert not _node(template).rendered


@pytest.mark.parametrize("bits", ["x", "a=x a=y", "1a=x"])
def test_inputs_are_named_once(bits: str) -> None:
    with pytest.raises(TemplateSyntaxError):
        Template("{% load storefront %}{% memo " + bits + " %}{% endmemo %}")


def _checkout_page(quantity: int) -> tuple[Client, str]:
    client = Client()
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": str(quantity)})
    url = client.get("/checkout/")["Location"]
    client.post(url, {**FORM_CONTACT, **FORM_ADDRESS, "shipping_option": "pac", "action": "shipping"})
    return client, url


@pytest.mark.django_db
def test_every_buyer_sees_their_own_payment_prices_and_the_current_pix_rate() -> None:
    StoreSettings.objects.create(pix_discount_percent=Decimal("5"))
    make_variant(price=9990, stock=50)
    make_shipping()
    one, one_url = _checkout_page(1)
    two, two_url = _checkout_page(2)
    first = one.get(one_url).content.decode()
    second = two.get(two_url).content.decode()
    # 99,90 + 18,90 = 118,80 (Pix: 5 % of the items, 4,995 → 5,00 half to even, 113,80);
    # 199,80 + 18,90 = 218,70 (Pix: 208,71)
    assert '<input type="hidden" name="shown_card_total" value="11880">' in first
    assert '<strong data-role="pix-price">R$ 113,80</strong> no Pix' in first
    assert '<input type="hidden" name="shown_card_total" value="21870">' in second
    assert '<strong data-role="pix-price">R$ 208,71</strong> no Pix' in second
    assert one.get(one_url).content.decode().count("R$ 113,80") == first.count("R$ 113,80")  # kept: the same
    # when the shop changes its Pix rate, the next view shows the new Pix price
    store = StoreSettings.objects.get()
    store.pix_discount_percent = Decimal("10")
    store.save()
    again = one.get(one_url).content.decode()
    assert '<strong data-role="pix-price">R$ 108,81</strong> no Pix' in again and "R$ 113,80" not in again


@pytest.mark.django_db
def test_every_buyer_sees_their_own_delivery_method_and_its_error() -> None:
    """The delivery-method choice is kept by {% memo %} per its state: each buyer's own choice is checked, an
    error shows to the buyer who made it only."""
    make_variant(price=9990, stock=50)
    make_shipping()
    one, one_url = _checkout_page(1)
    two, two_url = _checkout_page(1)
    shipping = one.get(one_url).content.decode()
    assert (
        'value="shipping" data-role="method" checked>' in shipping and 'value="pickup" data-role="method">' in shipping
    )
    # a re-rendered form (the UF is too long) keeps the buyer's "Retirar na loja"
    picked = two.post(two_url, {**FORM_CONTACT, **FORM_ADDRESS, "method": "pickup", "uf": "SPX"})
    assert picked.status_code == 400
    page = picked.content.decode()
    assert 'value="pickup" data-role="method" checked>' in page and 'value="shipping" data-role="method">' in page
    refused = two.post(two_url, {**FORM_CONTACT, **FORM_ADDRESS, "method": "voo"}).content.decode()
    assert 'class="method-choice field-invalid"' in refused and 'data-testid="error-method"' in refused
    again = one.get(one_url).content.decode()
    assert 'value="shipping" data-role="method" checked>' in again and 'data-testid="error-method"' not in again
