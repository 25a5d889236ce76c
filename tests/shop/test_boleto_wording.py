"""QA walk, boleto wording: the boleto page says the true day the items are released (due date plus the grace days
the expiry sweep waits for the bank's report), and a paid boleto order's page does not promise a refund "pelo mesmo
meio de pagamento" (a boleto has none: the store contacts the buyer to pay back by Pix or transfer)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client

from orders.services import order_place_from_checkout
from payments.models import BoletoPayment
from shop.checkout.selectors import TOKEN_PARAM, continue_token
from shop.models import Checkout
from tests.orders.conftest import make_checkout
from tests.payments.fake_pagarme import FakePagarmeServer
from tests.shop.test_boleto_checkout import _complete, _ready

pytestmark = pytest.mark.django_db


def test_the_boleto_page_says_the_day_the_reservation_ends(
    pagarme: FakePagarmeServer, client: Client, settings
) -> None:
    settings.BOLETO_EXPIRY_GRACE_DAYS = 3
    checkout = _ready()
    _complete(checkout)
    boleto = BoletoPayment.objects.get()
    checkout = Checkout.objects.get(pk=checkout.pk)
    url = f"/checkout/{checkout.public_id}/boleto?{TOKEN_PARAM}={continue_token(checkout)}"
    page = client.get(url).content.decode()
    held = (boleto.due_date + timedelta(days=3)).strftime("%d/%m/%Y")
    assert f"Os produtos ficam reservados até {held}. Sem pagamento até lá" in page
    assert "reservados até o vencimento" not in page


def test_a_paid_boleto_order_says_the_store_pays_back_by_pix_or_transfer(client: Client) -> None:
    order = order_place_from_checkout(checkout=make_checkout(payment_type="boleto"))
    assert order.paid_amount > 0
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert "a loja entra em contato para devolver o valor pago por Pix ou transferência" in page
    assert "pelo mesmo meio de pagamento" not in page
    done = client.post(f"/orders/{order.permalink_token}/cancelar", {"confirm": "on"}, follow=True).content.decode()
    assert "A loja entrará em contato para devolver o valor pago por Pix ou transferência." in done
    assert "pelo mesmo meio de pagamento" not in done
