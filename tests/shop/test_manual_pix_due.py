"""Pix com vencimento from the back office (issue 17): staff pick "Pix com vencimento" + due date in Nova venda,
the buyer's Pix page shows the due date (and, once overdue, the amount with fine and interest), and the payment
settles through the same webhook path into a paid order. PIX.md §3.1 (settlement), §4.3 (sandbox PSP)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from orders.models import Order
from payments.due import local_date
from payments.models import PixCharge
from payments.sandbox.services import PayOptions, pay
from shop.checkout.selectors import continue_token
from shop.checkout.services import checkout_complete_pix_due, checkout_create, checkout_pix_withdraw
from shop.checkout.types import BuyerInput, CheckoutInput, LineInput
from shop.models import Checkout, Variant
from tests.shop.checkout_factories import make_location, make_shipping, make_variant, pickup

pytestmark = pytest.mark.django_db
URL = "/admin/venda-manual/"
CPF = "529.982.247-25"


@pytest.fixture
def location() -> object:
    make_variant(price=4290, stock=10)
    make_shipping()
    return make_location()


def _form(location: object, **changes: str) -> dict[str, str]:
    due = local_date(timezone.now()) + timedelta(days=10)
    form = {
        "first_name": "Maria",
        "last_name": "Silva",
        "email": "maria@example.com.br",
        "phone": "(11) 98765-4321",
        "tax_id": CPF,
        "delivery": "pickup",
        "location": location.public_id,  # type: ignore[attr-defined]
        "sku_0": "SKU-CAFE-500G",
        "qty_0": "2",
        "payment": "pix_due",
        "due_date": due.isoformat(),
        "due_validity_days": "15",
        "due_fine_percent": "2",
        "due_interest_percent": "1",
    }
    form.update(changes)
    return form


def test_staff_sell_with_pix_com_vencimento_and_the_buyer_pays_from_the_pix_page(
    admin_client: Client, location: object, django_capture_on_commit_callbacks
) -> None:
    due = local_date(timezone.now()) + timedelta(days=10)
    # when staff register a sale paid later by Pix com vencimento
    response = admin_client.post(URL, _form(location))
    # then the link page names the due date, and a cobv is waiting for 2 × R$ 42,90
    html = response.content.decode()
    assert response.status_code == 200, html[:2000]
    assert f"Pix com vencimento em {due:%d/%m/%Y}" in html
    checkout = Checkout.objects.get()
    charge = PixCharge.objects.get(reference=checkout.public_id)
    assert (charge.kind, charge.status, charge.amount, charge.due_date) == ("cobv", "active", 8580, due)
    assert (charge.terms.fine_bp, charge.terms.interest_bp, charge.terms.validity_days) == (200, 100, 15)
    assert checkout.status == "complete_in_progress"
    assert checkout.expires_at >= charge.expires_at  # the checkout lives as long as its charge can be paid
    assert Variant.objects.get(sku="SKU-CAFE-500G").stock == 8  # reserved while the payment is awaited
    # and the buyer's page shows the due date, the rules after it and the last day it can be paid
    link = f"/checkout/{checkout.public_id}/pix?t={continue_token(checkout)}"  # the link staff send
    page = Client().get(link).content.decode()
    assert f'<strong data-testid="pix-due-date">{due:%d/%m/%Y}</strong>' in page
    assert "Após o vencimento: multa de 2% e juros de 1% ao mês." in page
    assert f"Pode ser pago até {due + timedelta(days=15):%d/%m/%Y}." in page
    assert '<strong class="money" data-testid="pix-amount">R$ 85,80</strong>' in page
    # the merchant's bill cannot be withdrawn by the buyer (issue 33's "Mudar forma de pagamento" is for the
    # storefront's own Pix): no button, and a forged post changes nothing
    assert 'data-testid="pix-change"' not in page
    assert checkout_pix_withdraw(checkout_id=checkout.public_id) == "not_pending"
    assert PixCharge.objects.get(pk=charge.pk).status == "active"
    # when the buyer pays on time, the same webhook path places the paid order
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=charge.txid, options=PayOptions())
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert (order.payment_status, order.payment_type, order.paid_amount) == ("paid", "pix", 8580)


def test_overdue_pix_page_shows_the_amount_with_fine_and_interest(django_capture_on_commit_callbacks) -> None:
    # given a B2B sale whose cobv fell due 5 days ago (R$ 1.000,00, 2 % fine, 1 % a month)
    make_variant("SKU-SACA", price=100000, stock=3)
    make_shipping()
    spot = make_location()
    buyer = BuyerInput(first_name="Caju", last_name="Cafés", email="compras@caju.com.br", tax_id="12ABC34501DE35")
    created = checkout_create(
        data=CheckoutInput(lines=(LineInput("SKU-SACA", 1),), buyer=buyer, fulfillment=pickup(spot.public_id))
    )
    today = local_date(timezone.now())
    done = checkout_complete_pix_due(
        checkout_id=created.checkout.public_id, due_date=today - timedelta(days=5), fine_bp=200, interest_bp=100
    )
    assert done.checkout.status == "complete_in_progress"
    # when the buyer opens the Pix page
    link = f"/checkout/{created.checkout.public_id}/pix?t={continue_token(created.checkout)}"
    page = Client().get(link).content.decode()
    # then it says how late and what is owed today: 1000,00 + 20,00 + 1,67 (5/30 of 1 %)
    assert "Vencido há 5 dias." in page
    assert '<strong class="money" data-testid="pix-due-amount">R$ 1.021,67</strong>' in page
    assert "(multa R$ 20,00, juros R$ 1,67)" in page
    # and the sandbox payer's app pays that value, which settles the order
    charge = PixCharge.objects.get(reference=created.checkout.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        (paid,) = pay(txid=charge.txid, options=PayOptions())
    assert paid.amount == 102167
    order = Order.objects.get(checkout_id=created.checkout.public_id)
    assert (order.payment_status, order.total_amount) == ("paid", 100000)
    confirmed = order.timeline.get(kind="payment_confirmed")
    assert "R$ 1.021,67" in confirmed.message  # what actually arrived, fine and interest included


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"tax_id": ""}, "tax_id", "O Pix com vencimento exige o CPF/CNPJ do comprador."),
        ({"due_date": ""}, "due_date", "Informe o vencimento."),
        ({"due_date": "2020-01-01"}, "due_date", "O vencimento não pode ser no passado."),
        ({"due_discount_percent": "5"}, "due_discount_until", "Diga até quando vale o desconto."),
    ],
)
def test_bad_due_terms_are_refused_on_the_field_and_nothing_is_created(
    admin_client: Client, location: object, changes: dict[str, str], field: str, message: str
) -> None:
    response = admin_client.post(URL, _form(location, **changes))
    html = response.content.decode()
    block = re.search(rf'<div class="form-row field-{field}">(.*?)(?:<div class="form-row|</fieldset>)', html, re.S)
    assert block is not None and message in block.group(1), html[html.find("errornote") :][:3000]
    assert PixCharge.objects.count() == 0
    assert Order.objects.count() == 0


def test_completing_with_pix_com_vencimento_has_a_fixed_statement_budget(django_assert_max_num_queries) -> None:
    # given a ready B2B checkout (caches warm, as in steady state)
    make_variant("SKU-SACA", price=100000, stock=3)
    make_shipping()
    spot = make_location()
    buyer = BuyerInput(first_name="Caju", last_name="Cafés", email="compras@caju.com.br", tax_id="12ABC34501DE35")
    data = CheckoutInput(lines=(LineInput("SKU-SACA", 1),), buyer=buyer, fulfillment=pickup(spot.public_id))
    checkout_create(data=data)
    created = checkout_create(data=data)
    # then reserve + PUT /cobv (the sandbox PSP's own rows included) + wait stays within its ceiling
    with django_assert_max_num_queries(45):
        done = checkout_complete_pix_due(
            checkout_id=created.checkout.public_id, due_date=local_date(timezone.now()) + timedelta(days=7)
        )
    assert done.checkout.status == "complete_in_progress"
