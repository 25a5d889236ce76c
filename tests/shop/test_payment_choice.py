"""The checkout's payment-method choice and "Mudar forma de pagamento" on a pending Pix (issue 33, minor).

Pix is listed first and chosen by default, the card fields sit in their own panel; on the Pix page the buyer
can go back: the charge is removed at the (sandbox) PSP before the checkout is reopened, the stock held for it
is given back, and the buyer then pays by card through the ordinary update/complete, or with a fresh Pix.
"""

from __future__ import annotations

import re

import pytest

from payments.models import PixCharge
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_latest_for_reference
from shop.checkout.services import checkout_pix_withdraw
from shop.models import Checkout, Variant
from tests.shop.checkout_factories import FORM_ADDRESS, FORM_CONTACT, make_shipping, make_variant
from tests.shop.test_complete_outside_lock import bacen  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

ADDRESS = {**FORM_ADDRESS, "shipping_option": "sedex"}
# ours: the checkout and its charge (2), the revoke (5), the reopening transaction (6); the sandbox PSP's own
# tables answering the look and the cancel: 8
BUDGET_WITHDRAW = 21


@pytest.fixture
def checkout_id(client) -> str:
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "2"})
    return client.get("/checkout/")["Location"].rsplit("/", 1)[1]


@pytest.fixture
def on_pix_page(client, checkout_id: str) -> str:
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", **FORM_CONTACT, **ADDRESS})
    assert (response.status_code, response["Location"]) == (302, f"/checkout/{checkout_id}/pix")
    return checkout_id


def stock() -> int:
    return Variant.objects.get(sku="SKU-CAFE-500G").stock


def test_the_checkout_lists_pix_first_and_checked_with_the_card_in_its_own_panel(client, checkout_id: str) -> None:
    html = client.get(f"/checkout/{checkout_id}").content.decode()
    # then the choice lists Pix before the card, Pix checked, and the card fields only inside the card panel
    pix, card = html.index('data-testid="pay-option-pix"'), html.index('data-testid="pay-option-card"')
    assert pix < card < html.index('data-testid="card-number"')
    assert re.search(r'value="pix" data-testid="choose-pix" checked', html)
    assert not re.search(r'value="card" data-testid="choose-card" checked', html)
    # and one button per method, each in its own panel (without JavaScript either one submits)
    assert html.count('data-testid="pay-pix"') == 1 and html.count('data-testid="pay-card"') == 1


def test_a_page_that_comes_back_keeps_the_method_the_buyer_was_on(client, checkout_id: str) -> None:
    # when the buyer presses "Pagar com cartão" with the card data missing (no token)
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay_card", **FORM_CONTACT, **ADDRESS})
    html = response.content.decode()
    # then the page says what is missing with the card still chosen
    assert "Informe os dados do cartão." in html
    assert re.search(r'value="card" data-testid="choose-card" checked', html)


def test_the_pix_page_offers_to_change_the_payment_method(client, on_pix_page: str) -> None:
    html = client.get(f"/checkout/{on_pix_page}/pix").content.decode()
    assert f'action="/checkout/{on_pix_page}/pix/trocar"' in html
    assert ">Mudar forma de pagamento</button>" in html


def test_changing_the_method_cancels_the_pix_at_the_psp_and_reopens_the_checkout(
    client, on_pix_page: str, django_assert_max_num_queries
) -> None:
    checkout_id = on_pix_page
    charge = pix_charge_latest_for_reference(checkout_id)
    assert (charge.status, stock()) == ("active", 8)
    # when the buyer presses "Mudar forma de pagamento"
    response = client.post(f"/checkout/{checkout_id}/pix/trocar")
    # then the charge is removed at the PSP and revoked here, the stock comes back, the checkout is ready again
    assert (response.status_code, response["Location"]) == (302, f"/checkout/{checkout_id}")
    charge.refresh_from_db()
    assert (charge.status, charge.status_reason, charge.psp_removed) == ("revoked", "payment_method_changed", True)
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.status, checkout.payment_txid, checkout.stock_reserved) == ("ready_for_complete", "", False)
    assert stock() == 10
    # and the checkout page says so, with the choice open again
    page = client.get(f"/checkout/{checkout_id}").content.decode()
    assert "O Pix foi cancelado e não pode mais ser pago. Escolha como quer pagar." in page
    assert 'data-testid="payment-choice"' in page
    # a second press (a replay, another tab) changes nothing more
    with django_assert_max_num_queries(3):
        assert checkout_pix_withdraw(checkout_id=checkout_id) == "not_pending"


def test_after_changing_the_method_the_buyer_pays_by_card(client, on_pix_page: str) -> None:
    checkout_id = on_pix_page
    client.post(f"/checkout/{checkout_id}/pix/trocar")
    # when the buyer pays by card from the checkout page (the sandbox token the page's tokenizer makes)
    response = client.post(
        f"/checkout/{checkout_id}",
        {
            "action": "pay_card",
            "installments": "1",
            "card_token": "tok_sbx_ok_1111_0123456789abcdef",
            **FORM_CONTACT,
            **ADDRESS,
        },
    )
    # then the order is placed, paid by card, and the old Pix stays revoked
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert checkout.status == "completed", checkout.messages
    assert (response.status_code, response["Location"]) == (302, checkout.order_permalink_url.split("8000", 1)[-1])
    assert PixCharge.objects.filter(reference=checkout_id, status="active").count() == 0
    assert stock() == 8


def test_after_changing_the_method_pix_again_makes_a_fresh_charge(client, on_pix_page: str) -> None:
    checkout_id = on_pix_page
    old = pix_charge_latest_for_reference(checkout_id)
    client.post(f"/checkout/{checkout_id}/pix/trocar")
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", **FORM_CONTACT, **ADDRESS})
    assert (response.status_code, response["Location"]) == (302, f"/checkout/{checkout_id}/pix")
    new = pix_charge_latest_for_reference(checkout_id)
    assert new.txid != old.txid and new.status == "active"
    assert stock() == 8


def test_a_pix_paid_before_the_change_is_settled_not_cancelled(client, on_pix_page: str) -> None:
    checkout_id = on_pix_page
    charge = pix_charge_latest_for_reference(checkout_id)
    # given the buyer paid the Pix at the bank but its notice has not arrived (the sandbox delivers none)
    pay(txid=charge.txid, options=PayOptions(deliver="none"))
    # when the buyer presses "Mudar forma de pagamento" anyway
    response = client.post(f"/checkout/{checkout_id}/pix/trocar")
    # then the PSP's answer wins: the payment is settled and the order placed, nothing is cancelled
    assert (response.status_code, response["Location"]) == (302, f"/checkout/{checkout_id}/pix")
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert checkout.status == "completed"
    charge.refresh_from_db()
    assert charge.status == "paid"
    assert client.get(response["Location"])["Location"].startswith("/")


def test_the_withdrawal_has_a_fixed_statement_budget(client, on_pix_page: str, django_assert_max_num_queries) -> None:
    """The reopening transaction is short and fixed; the rest is the PSP's look and cancel (the in-process sandbox
    PSP answers from its own tables here) and the charge's revoke."""
    with django_assert_max_num_queries(BUDGET_WITHDRAW):
        assert checkout_pix_withdraw(checkout_id=on_pix_page) == "withdrawn"


def test_with_the_bacen_psp_the_charge_is_removed_there_before_the_checkout_reopens(client, bacen) -> None:  # noqa: F811
    """The real adapter against the fake Bacen API (tests/payments/fake_bacen.py): GET /cob/{txid} to look for a
    payment, then PATCH status REMOVIDA_PELO_USUARIO_RECEBEDOR, and only then the checkout opens again."""
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    checkout_id = client.get("/checkout/")["Location"].rsplit("/", 1)[1]
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", **FORM_CONTACT, **ADDRESS})
    assert response["Location"] == f"/checkout/{checkout_id}/pix"
    txid = pix_charge_latest_for_reference(checkout_id).txid
    # when the PSP is down, nothing changes and the buyer is told so, on the Pix page
    bacen.state.forced = [(503, None)] * 10
    down = client.post(f"/checkout/{checkout_id}/pix/trocar")
    assert down["Location"] == f"/checkout/{checkout_id}/pix"
    assert Checkout.objects.get(public_id=checkout_id).status == "complete_in_progress"
    assert PixCharge.objects.get(txid=txid).status == "active"
    page = client.get(f"/checkout/{checkout_id}/pix").content.decode()
    assert "Não foi possível cancelar este Pix agora. Tente de novo em instantes." in page
    # when it answers again, the charge is removed at the PSP first
    bacen.state.forced = []
    assert client.post(f"/checkout/{checkout_id}/pix/trocar")["Location"] == f"/checkout/{checkout_id}"
    assert bacen.state.cobs[txid]["status"] == "REMOVIDA_PELO_USUARIO_RECEBEDOR"
    assert [(m, p) for m, p, _ in bacen.state.requests if p == f"/cob/{txid}"][-2:] == [
        ("GET", f"/cob/{txid}"),
        ("PATCH", f"/cob/{txid}"),
    ]
    assert Checkout.objects.get(public_id=checkout_id).status == "ready_for_complete"
