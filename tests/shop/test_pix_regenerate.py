"""Time-driven Pix work without beat (issue 12 item 7): an expired Pix is noticed when its page is read,
the checkout lapses and releases its stock, and "Gerar novo Pix" makes a new charge for the same checkout
after re-validating stock and prices. No worker, no beat: only the page reads (PIX.md §3 table).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from payments.models import PixCharge
from payments.selectors import pix_charge_latest_for_reference
from shop.models import Checkout, Variant
from tests.shop.checkout_factories import FORM_ADDRESS, FORM_CONTACT, make_shipping, make_variant

pytestmark = pytest.mark.django_db

CONTACT = FORM_CONTACT
ADDRESS = {**FORM_ADDRESS, "shipping_option": "sedex"}


@pytest.fixture
def on_pix_page(client) -> str:
    """A storefront checkout of 2 coffees (R$ 42,90 each) with SEDEX, on its Pix page; returns its id."""
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "2"})
    checkout_id = client.get("/checkout/")["Location"].rsplit("/", 1)[1]
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", **CONTACT, **ADDRESS})
    assert (response.status_code, response["Location"]) == (302, f"/checkout/{checkout_id}/pix")
    return checkout_id


def let_the_pix_expire(checkout_id: str) -> PixCharge:
    charge = pix_charge_latest_for_reference(checkout_id)
    PixCharge.objects.filter(pk=charge.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    return charge


def stock() -> int:
    return Variant.objects.get(sku="SKU-CAFE-500G").stock


def test_an_expired_pix_lapses_when_its_page_is_read_and_offers_a_new_one(client, on_pix_page: str) -> None:
    checkout_id = on_pix_page
    assert stock() == 8
    old = let_the_pix_expire(checkout_id)
    # when the buyer looks at the Pix page again (no beat ran)
    page = client.get(f"/checkout/{checkout_id}/pix")
    # then the charge is expired (removed at the PSP), the checkout lapsed and released its stock,
    html = page.content.decode()
    assert page.status_code == 200
    assert PixCharge.objects.get(pk=old.pk).status == "expired"
    assert Checkout.objects.get(public_id=checkout_id).status == "incomplete"
    assert stock() == 10
    # and the page says so and offers a new Pix instead of leaving the buyer stuck
    assert "Este Pix expirou sem pagamento." in html
    assert f'action="/checkout/{checkout_id}/pix/novo"' in html
    assert ">Gerar novo Pix</button>" in html
    assert 'data-testid="pix-qr"' not in html


def test_gerar_novo_pix_charges_the_same_checkout_again(client, on_pix_page: str) -> None:
    checkout_id = on_pix_page
    old = let_the_pix_expire(checkout_id)
    # when the buyer clicks "Gerar novo Pix" (straight from the expired page, before any other read)
    response = client.post(f"/checkout/{checkout_id}/pix/novo")
    # then a new charge exists for the same checkout, at the same total, with the stock held again
    assert (response.status_code, response["Location"]) == (302, f"/checkout/{checkout_id}/pix")
    new = pix_charge_latest_for_reference(checkout_id)
    assert new.txid != old.txid
    assert (new.status, new.amount, old.amount) == ("active", 2 * 4290 + 3290, 2 * 4290 + 3290)
    assert PixCharge.objects.get(pk=old.pk).status == "expired"
    assert Checkout.objects.get(public_id=checkout_id).status == "complete_in_progress"
    assert stock() == 8
    page = client.get(f"/checkout/{checkout_id}/pix").content.decode()
    assert 'data-testid="pix-qr"' in page and new.br_code in page


def test_gerar_novo_pix_after_a_price_change_asks_the_buyer_to_confirm(client, on_pix_page: str) -> None:
    checkout_id = on_pix_page
    old = let_the_pix_expire(checkout_id)
    Variant.objects.filter(sku="SKU-CAFE-500G").update(price=4500)
    response = client.post(f"/checkout/{checkout_id}/pix/novo")
    # then it is not completed at a total the buyer never saw: the checkout page shows the new total
    assert (response.status_code, response["Location"]) == (302, f"/checkout/{checkout_id}")
    assert PixCharge.objects.get(pk=old.pk).status == "expired"
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.status, checkout.total_amount) == ("ready_for_complete", 2 * 4500 + 3290)
    assert 'data-testid="total">R$ 122,90<' in client.get(f"/checkout/{checkout_id}").content.decode()
    assert client.get(f"/checkout/{checkout_id}/pix")["Location"] == f"/checkout/{checkout_id}"
    # the update issued a charge for the new total, and the units are held for it (issue 31), not taken twice
    assert pix_charge_latest_for_reference(checkout_id).amount == 2 * 4500 + 3290
    assert (stock(), checkout.stock_reserved) == (8, True)


def test_gerar_novo_pix_without_stock_goes_back_to_the_form_without_a_charge(client, on_pix_page: str) -> None:
    checkout_id = on_pix_page
    old = let_the_pix_expire(checkout_id)
    client.get(f"/checkout/{checkout_id}/pix")  # lapses: the 2 units are back on sale
    Variant.objects.filter(sku="SKU-CAFE-500G").update(stock=1)  # someone else bought one
    response = client.post(f"/checkout/{checkout_id}/pix/novo")
    # then it is not completed; the checkout page explains the cut quantity. The charge the update issued for
    # the cut quantity holds that one unit (issue 31: reserved with the charge, so nobody pays for it twice)
    assert (response.status_code, response["Location"]) == (302, f"/checkout/{checkout_id}")
    assert PixCharge.objects.get(pk=old.pk).status == "expired"
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert checkout.status != "complete_in_progress"
    assert pix_charge_latest_for_reference(checkout_id).amount == checkout.total_amount
    assert (stock(), checkout.stock_reserved, checkout.lines.get().quantity) == (0, True, 1)
    assert client.get(f"/checkout/{checkout_id}").status_code == 200


def test_an_active_pix_is_left_alone(client, on_pix_page: str) -> None:
    checkout_id = on_pix_page
    charge = pix_charge_latest_for_reference(checkout_id)
    response = client.post(f"/checkout/{checkout_id}/pix/novo")
    assert (response.status_code, response["Location"]) == (302, f"/checkout/{checkout_id}/pix")
    assert pix_charge_latest_for_reference(checkout_id).pk == charge.pk
    assert PixCharge.objects.get(pk=charge.pk).status == "active"
