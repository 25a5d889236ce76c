"""The storefront's card payment: installment offers on product, cart and checkout, the tokenized form
(no input that could carry a card number has a name), a 3x purchase with a sandbox token, the order
showing its plan on the permalink, in the admin and in the e-mail (BCP-PAY-04)."""

from __future__ import annotations

import logging
import re

import pytest
from django.core import mail

from orders.models import Order
from shop.models import Checkout, StoreSettings
from tests.shop.checkout_factories import FORM_ADDRESS, FORM_CONTACT, make_shipping, make_variant

pytestmark = pytest.mark.django_db

FORM = {**FORM_CONTACT, **FORM_ADDRESS, "shipping_option": "pac"}
# Names a form field carrying a card number, expiry or CVV would have; none may exist in any form.
PAN_NAMES = re.compile(r"(card|cc|pan|credit).*(number|num|no)|^number_card|cvv|cvc|csc|expir|^pan$", re.I)
TOKEN = "tok_sbx_ok_1111_0123456789abcdef"


@pytest.fixture
def phone(settings):
    settings.BCP_PIX_SANDBOX = True
    StoreSettings.objects.create()  # the defaults: 12x without interest, at least R$ 5,00 each
    make_variant(price=699900, stock=5, title="Celular 256 GB")
    make_shipping()


def _input_names(html: str) -> set[str]:
    return set(re.findall(r"<(?:input|select|textarea)\b[^>]*\bname=\"([^\"]+)\"", html))


def _checkout(client) -> str:
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    return client.get("/checkout/")["Location"].rsplit("/", 1)[1]


def test_product_page_and_cart_offer_12x_without_interest(client, phone) -> None:
    product = client.get("/produtos/sku-cafe-500g/").content.decode()
    assert 'data-testid="card-installments">ou 12x de R$ 583,25 sem juros</p>' in product

    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    cart = client.get("/carrinho/").content.decode()
    assert "ou 12x de R$ 583,25 sem juros" in cart


def test_an_uneven_plan_names_the_first_and_the_regular_installment(client, settings) -> None:
    # R$ 59,90 in 11x (R$ 5,00 minimum): 1 × 5,50 + 10 × 5,44 = 59,90. "11x de R$ 5,50" alone made 60,50.
    settings.BCP_PIX_SANDBOX = True
    StoreSettings.objects.create()
    make_variant("SKU-CAMISETA", price=5990, stock=5)
    line = "ou 11x sem juros: 1ª de R$ 5,50 e 10x de R$ 5,44"
    assert 550 + 10 * 544 == 5990

    product = client.get("/produtos/sku-camiseta/").content.decode()
    client.post("/carrinho/adicionar", {"sku": "SKU-CAMISETA", "quantity": "1"})
    cart = client.get("/carrinho/").content.decode()

    for page in (product, cart):
        assert line in page
        assert "11x de R$ 5,50" not in page


def test_no_installment_line_when_the_card_is_off(client, phone, settings) -> None:
    settings.BCP_CARD_ENABLED = False

    product = client.get("/produtos/sku-cafe-500g/").content.decode()

    assert "sem juros" not in product


def test_checkout_card_form_has_no_named_card_inputs_and_offers_the_plans(client, phone) -> None:
    checkout_id = _checkout(client)
    html = client.post(f"/checkout/{checkout_id}", {"action": "update", **FORM}).content.decode()

    names = _input_names(html)
    assert "card_token" in names and "installments" in names
    assert not [name for name in names if PAN_NAMES.search(name)], names
    for card_input in ("card-number", "card-expiry", "card-cvv", "card-holder"):
        tag = re.search(rf"<input id=\"{card_input}\"[^>]*>", html).group(0)
        assert " name=" not in tag
    options = re.findall(r'<option value="(\d+)"[^>]*>([^<]+)</option>', html)
    assert options[0][1].startswith("1x de R$ ")
    assert len([o for o in options if "sem juros" in o[1]]) == 11  # 2x … 12x


def test_a_3x_card_purchase_with_a_browser_token(client, phone, caplog, django_capture_on_commit_callbacks) -> None:
    caplog.set_level(logging.DEBUG)
    checkout_id = _checkout(client)
    client.post(f"/checkout/{checkout_id}", {"action": "update", **FORM})

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/checkout/{checkout_id}", {"action": "pay_card", "installments": "3", "card_token": TOKEN, **FORM}
        )

    order = Order.objects.get(checkout_id=checkout_id)
    assert response.status_code == 302 and response["Location"] == f"/orders/{order.permalink_token}"
    assert (order.payment_type, order.installments) == ("card", 3)
    total = order.total_amount
    assert (order.installment_amount, order.first_installment) == (total // 3, total // 3 + total % 3)
    page = client.get(response["Location"]).content.decode()
    assert 'data-testid="order-installments"' in page
    assert "no cartão" in page
    assert "no cartão" in mail.outbox[-1].body
    assert TOKEN not in caplog.text  # the token is a credential too: never logged
    assert client.session.get("cart", {}) in ({}, [], None)


def test_paying_by_card_without_a_token_is_a_clear_error(client, phone) -> None:
    checkout_id = _checkout(client)

    response = client.post(f"/checkout/{checkout_id}", {"action": "pay_card", "installments": "2", **FORM})

    assert response.status_code == 200
    assert "Informe os dados do cartão." in response.content.decode()
    assert not Order.objects.exists()


def test_a_declined_browser_token_shows_the_reason(client, phone) -> None:
    checkout_id = _checkout(client)

    response = client.post(
        f"/checkout/{checkout_id}",
        {"action": "pay_card", "installments": "1", "card_token": "tok_sbx_51_0002_0123456789abcdef", **FORM},
    )

    assert "Saldo ou limite insuficiente. Use outro cartão ou pague com Pix." in response.content.decode()
    assert not Order.objects.exists()


def test_the_chosen_plan_is_written_in_full_under_the_installments_select(client, phone) -> None:
    """QA walk (360 px phone): the closed select cut "10x de R$ 14,10 com juros (total R$ 141,00)" before its total,
    above a summary that still said the total without interest; the chosen plan is spelled out below it."""
    StoreSettings.objects.update(card_interest_free_installments=3)
    checkout_id = _checkout(client)
    html = client.post(f"/checkout/{checkout_id}", {"action": "update", **FORM}).content.decode()
    assert re.search(r'data-testid="plan-chosen"[^>]*>1x de R\$ 6\.999,00 \(à vista\)</p>', html), html
    # when a 6x card is declined, the page comes back with 6x chosen and its label in full, interest and total
    response = client.post(
        f"/checkout/{checkout_id}",
        {"action": "pay_card", "installments": "6", "card_token": "tok_sbx_51_0002_0123456789abcdef", **FORM},
    )
    html = response.content.decode()
    chosen = re.search(r'<option value="6" selected>([^<]+)</option>', html).group(1)
    assert chosen.startswith("6x de R$ ") and "com juros (total R$ " in chosen
    assert f'data-testid="plan-chosen" aria-live="polite">{chosen}</p>' in html


def test_the_admin_order_page_shows_the_plan(admin_client, client, phone) -> None:
    checkout_id = _checkout(client)
    client.post(f"/checkout/{checkout_id}", {"action": "pay_card", "installments": "12", "card_token": TOKEN, **FORM})
    order = Order.objects.get(checkout_id=checkout_id)

    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()

    assert "12x de R$ 58" in html and "no cartão" in html
    # the payment is on the timeline as a Pix one is, and its id is not called a Pix txid
    confirmed = order.timeline.get(kind="payment_confirmed")
    assert confirmed.message == f"Pagamento no cartão aprovado: R$ 6.999,00 (pagamento {order.payment_txid})."
    assert order.payment_txid.startswith("cardpay_")
    assert f"pagamento no cartão: {order.payment_txid}" in html
    assert "txid Pix" not in html


def _shown(html: str, name: str) -> int:
    return int(re.search(rf'name="{name}" value="(\d+)"', html).group(1))


def test_a_total_changed_by_the_paying_submit_is_shown_before_anything_is_charged(client, settings) -> None:
    # given a buyer whose page was last computed with PAC (R$ 39,90 + R$ 18,90 in SP)
    settings.BCP_PIX_SANDBOX = True
    StoreSettings.objects.create()
    make_variant(price=3990, stock=5)
    make_shipping()
    checkout_id = _checkout(client)
    page = client.post(f"/checkout/{checkout_id}", {"action": "update", **FORM}).content.decode()
    shown_card, shown_pix = _shown(page, "shown_card_total"), _shown(page, "shown_pix_total")
    # when they pick SEDEX on that page and press "Pagar com cartão" straight away (3x of the total they saw)
    sedex = {**FORM, "shipping_option": "sedex", "installments": "3", "card_token": TOKEN}
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay_card", "shown_card_total": shown_card, **sedex})
    # then nothing is charged: the page shows the new total (SEDEX R$ 32,90) and asks to confirm it
    html = response.content.decode()
    assert response.status_code == 200
    assert not Order.objects.exists()
    assert "O total mudou para R$ 72,80 com o que você escolheu. Confira o resumo e confirme o pagamento." in html
    assert _shown(html, "shown_card_total") == 3990 + 3290 != shown_card
    assert "3x sem juros: 1ª de R$ 24,28 e 2x de R$ 24,26" in html  # the plans of the new total
    # and paying again from that page charges the total it showed
    response = client.post(
        f"/checkout/{checkout_id}",
        {"action": "pay_card", "shown_card_total": _shown(html, "shown_card_total"), **sedex},
    )
    order = Order.objects.get(checkout_id=checkout_id)
    assert response.status_code == 302 and order.total_amount == 7280
    # (Pix is held back the same way: its shown total was PAC's)
    assert shown_pix == 3990 + 1890


def test_pix_paying_submit_with_another_option_is_held_back_too(client, settings) -> None:
    settings.BCP_PIX_SANDBOX = True
    make_variant(price=3990, stock=5)
    make_shipping()
    checkout_id = _checkout(client)
    page = client.post(f"/checkout/{checkout_id}", {"action": "update", **FORM}).content.decode()

    shown = _shown(page, "shown_pix_total")
    sedex = {**FORM, "shipping_option": "sedex"}
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", "shown_pix_total": shown, **sedex})

    assert response.status_code == 200
    assert "O total mudou para R$ 72,80" in response.content.decode()
    assert Checkout.objects.get(public_id=checkout_id).status == "ready_for_complete"  # not completed: no Pix page


def test_after_trying_pix_the_card_is_offered_at_the_list_price(client, settings) -> None:
    # given a shop with 5 % off by Pix, and a buyer whose first "Pagar com Pix" left Pix selected
    settings.BCP_PIX_SANDBOX = True
    StoreSettings.objects.create(pix_discount_percent=5)
    make_variant(price=1490, stock=5)
    make_shipping()
    checkout_id = _checkout(client)
    client.post(f"/checkout/{checkout_id}", {"action": "pay", **{k: v for k, v in FORM.items() if k != "email"}})
    # when the checkout page is shown again
    html = client.get(f"/checkout/{checkout_id}").content.decode()
    # then the card's plans and total are those of the list price (R$ 14,90 + PAC R$ 18,90), not the Pix one
    assert "Desconto Pix (5%)" in html
    assert "1x de R$ 33,80 (à vista)" in html
    assert _shown(html, "shown_card_total") == 1490 + 1890


@pytest.mark.parametrize("issuing", ["paid", "off"])
def test_the_storefront_asks_the_cpf_the_nfe_needs_before_charging(client, settings, issuing) -> None:
    # given a shop that issues an NF-e for each paid order (or does not), and a buyer who left the CPF empty
    settings.BCP_PIX_SANDBOX = True
    settings.FISCAL_ISSUE_ON = issuing
    make_variant(price=3990, stock=5)
    make_shipping()
    checkout_id = _checkout(client)
    no_cpf = {**FORM, "tax_id": ""}
    page = client.get(f"/checkout/{checkout_id}").content.decode()
    # when they pay by card
    response = client.post(
        f"/checkout/{checkout_id}", {"action": "pay_card", "installments": "1", "card_token": TOKEN, **no_cpf}
    )
    if issuing == "off":  # then without NF-e the CPF stays optional and the order is placed
        assert "CPF (opcional)" in page
        assert response.status_code == 302 and Order.objects.filter(checkout_id=checkout_id).exists()
        return
    # then nothing is charged and the CPF field says why it is needed
    assert "CPF (para a nota fiscal)" in page
    html = response.content.decode()
    assert response.status_code == 200 and not Order.objects.exists()
    assert re.search(r'data-testid="error-tax_id">Informe o CPF: ele vai na nota fiscal \(NF-e\) do pedido\.<', html)
    # and with the CPF the same submit pays
    response = client.post(
        f"/checkout/{checkout_id}", {"action": "pay_card", "installments": "1", "card_token": TOKEN, **FORM}
    )
    assert response.status_code == 302
    assert Order.objects.get(checkout_id=checkout_id).buyer_tax_id == "52998224725"
