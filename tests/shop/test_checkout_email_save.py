"""Issue 33, major 5: the checkout's e-mail is stored as soon as it is typed (the page posts the field when it
is left; without JavaScript the form's submit stores it even when another field is wrong), so an abandoned
checkout can get its reminder. CSRF-checked, only the buyer's own checkout, only a valid address.
"""

from __future__ import annotations

import pytest
from django.test import Client

from shop.models import Checkout
from tests.shop.test_checkout_storefront import CONTACT, errors, shop_ready, start_checkout  # noqa: F401

pytestmark = pytest.mark.django_db


def test_the_typed_email_is_saved_alone(client, shop_ready, django_assert_max_num_queries):  # noqa: F811
    checkout_id = start_checkout(client)
    # when the page posts the e-mail field on blur
    with django_assert_max_num_queries(5):
        response = client.post(f"/checkout/{checkout_id}/email", {"email": " ana@example.com.br "})
    # then only the e-mail is stored, through the engine (the rest of the checkout re-evaluated unchanged)
    assert (response.status_code, response.json()) == (200, {"saved": True})
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.buyer_email, checkout.buyer_first_name) == ("ana@example.com.br", "")
    assert checkout.status == "incomplete"
    assert [(line.sku, line.quantity) for line in checkout.lines.all()] == [("SKU-CAFE-500G", 2)]
    # and the page, opened again, shows the e-mail without "required" errors on the fields not typed yet
    html = client.get(f"/checkout/{checkout_id}").content.decode()
    assert 'value="ana@example.com.br"' in html and errors(client.get(f"/checkout/{checkout_id}")) == {}
    # and the same e-mail again writes nothing
    updated = checkout.updated_at
    assert client.post(f"/checkout/{checkout_id}/email", {"email": "ana@example.com.br"}).json() == {"saved": True}
    assert Checkout.objects.get(public_id=checkout_id).updated_at == updated


@pytest.mark.parametrize("email", ["ana@", "ana example.com", "ana\x00@example.com", "a" * 250 + "@x.com", ""])
def test_a_bad_email_is_refused_and_changes_nothing(client, shop_ready, email):  # noqa: F811
    checkout_id = start_checkout(client)
    response = client.post(f"/checkout/{checkout_id}/email", {"email": email})
    # what to fix, with an example (buyer walk: "E-mail inválido." said nothing of it)
    refused = {"saved": False, "error": "Informe um e-mail válido, como nome@exemplo.com.br."}
    assert (response.status_code, response.json()) == (400, refused)
    assert Checkout.objects.get(public_id=checkout_id).buyer_email == ""


def test_csrf_and_ownership_are_checked(shop_ready):  # noqa: F811
    buyer = Client(enforce_csrf_checks=True)
    buyer.get("/carrinho/")
    token = buyer.cookies["csrftoken"].value
    buyer.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1", "csrfmiddlewaretoken": token})
    checkout_id = buyer.get("/checkout/")["Location"].rsplit("/", 1)[1]
    # without the token: refused
    assert buyer.post(f"/checkout/{checkout_id}/email", {"email": "ana@example.com.br"}).status_code == 403
    # another browser: the checkout does not exist for it
    stranger = Client()
    assert stranger.post(f"/checkout/{checkout_id}/email", {"email": "x@example.com.br"}).status_code == 404
    assert Checkout.objects.get(public_id=checkout_id).buyer_email == ""
    # with the token (header, as the page's fetch sends it): saved
    saved = buyer.post(
        f"/checkout/{checkout_id}/email", {"email": "ana@example.com.br"}, headers={"X-CSRFToken": token}
    )
    assert saved.status_code == 200
    assert Checkout.objects.get(public_id=checkout_id).buyer_email == "ana@example.com.br"


def test_a_checkout_paying_keeps_its_email(client, shop_ready):  # noqa: F811
    checkout_id = start_checkout(client)
    Checkout.objects.filter(public_id=checkout_id).update(status="complete_in_progress")
    response = client.post(f"/checkout/{checkout_id}/email", {"email": "ana@example.com.br"})
    assert (response.status_code, response.json()["saved"]) == (409, False)
    assert Checkout.objects.get(public_id=checkout_id).buyer_email == ""


def test_without_javascript_the_submit_saves_the_email_even_when_another_field_is_wrong(client, shop_ready):  # noqa: F811
    checkout_id = start_checkout(client)
    response = client.post(f"/checkout/{checkout_id}", {"action": "update", **CONTACT, "first_name": "Ana\x00"})
    assert response.status_code == 400
    assert Checkout.objects.get(public_id=checkout_id).buyer_email == "ana@example.com.br"
