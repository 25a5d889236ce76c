"""Storefront checkout pages open only for their session or with the signed continue_url (issue 13 §12).

Before: `/checkout/<id>` showed any checkout to any browser holding the id, an agent's checkout with the
buyer's e-mail, phone and address included (REST answers `not_found` for the same id), and its Pix page
and status poll (which hands out the order link) likewise.
"""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse, set_script_prefix
from django.utils import timezone

from shop.checkout import selectors
from shop.checkout.selectors import _SALT, checkout_continue_url, continue_token
from shop.checkout.services import checkout_create
from shop.checkout.types import LineInput
from shop.models import Checkout
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

pytestmark = pytest.mark.django_db
BUYER_DATA = ("ana@example.com.br", "98765-4321", "Rua das Flores")


@pytest.fixture
def agent_checkout() -> Checkout:
    """A checkout a platform created over BCP, with the buyer's contact and address."""
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    return checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1)), platform_id="plat_x").checkout


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _shows_buyer_data(html: str) -> list[str]:
    return [text for text in BUYER_DATA if text in html]


def test_an_agent_checkout_id_alone_opens_nothing(agent_checkout: Checkout) -> None:
    # given a browser that only knows (or guessed) the checkout id
    stranger = Client()
    checkout_id = agent_checkout.public_id
    # when it opens every page of that checkout
    answers = {
        "page": stranger.get(f"/checkout/{checkout_id}"),
        "post": stranger.post(f"/checkout/{checkout_id}", {"action": "update", "email": "eve@example.com"}),
        "pix": stranger.get(f"/checkout/{checkout_id}/pix"),
        "new pix": stranger.post(f"/checkout/{checkout_id}/pix/novo"),
        "status": stranger.get(f"/checkout/{checkout_id}/status"),
    }
    # then each answers as for an id that does not exist, and no buyer data leaks
    assert {name: response.status_code for name, response in answers.items()} == dict.fromkeys(answers, 404)
    assert answers["status"].json() == {"error": "not_found"}
    assert [_shows_buyer_data(r.content.decode()) for r in answers.values()] == [[]] * len(answers)
    assert Checkout.objects.get(public_id=checkout_id).buyer_email == "ana@example.com.br"  # nothing written


def test_the_continue_url_opens_it_and_admits_the_browser(agent_checkout: Checkout) -> None:
    # given the continue_url the agent handed the buyer
    buyer = Client()
    url = checkout_continue_url(agent_checkout)
    # when the buyer opens it
    page = buyer.get(_path(url))
    # then the checkout shows with the buyer's data
    assert page.status_code == 200
    assert _shows_buyer_data(page.content.decode()) == list(BUYER_DATA)
    # and the same browser goes on without the token (the form posts, the status poll)
    checkout_id = agent_checkout.public_id
    assert buyer.get(f"/checkout/{checkout_id}").status_code == 200
    assert buyer.get(f"/checkout/{checkout_id}/status").json()["status"] == agent_checkout.status
    # while another browser still gets nothing
    assert Client().get(f"/checkout/{checkout_id}").status_code == 404


def test_a_forged_borrowed_or_expired_token_opens_nothing(agent_checkout: Checkout, settings) -> None:
    checkout_id = agent_checkout.public_id
    token = urlsplit(checkout_continue_url(agent_checkout)).query.removeprefix("t=")
    expiry, _, signature = token.partition(":")
    other = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1)), platform_id="plat_x").checkout
    other_token = urlsplit(checkout_continue_url(other)).query.removeprefix("t=")
    tries = {
        "altered signature": f"{expiry}:{signature[:-2]}xx",
        "later expiry": f"{int(expiry) + 86400}:{signature}",
        "another checkout's token": other_token,
        "no signature": expiry,
    }
    answers = {name: Client().get(f"/checkout/{checkout_id}", {"t": t}).status_code for name, t in tries.items()}
    assert answers == dict.fromkeys(tries, 404)
    # and the real token stops working once the link's lifetime has passed since the checkout was created
    Checkout.objects.filter(pk=agent_checkout.pk).update(
        created_at=timezone.now() - timedelta(seconds=settings.SHOP_CHECKOUT_LINK_MAX_AGE_SECONDS + 1)
    )
    aged = Checkout.objects.get(pk=agent_checkout.pk)
    assert Client().get(_path(checkout_continue_url(aged))).status_code == 404
    assert Client().get(f"/checkout/{checkout_id}", {"t": token}).status_code == 200  # the old one was still valid


def test_a_storefront_checkout_opens_for_its_own_session_only(client: Client) -> None:
    # given a buyer who started a checkout from the cart and filled in the form
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    checkout_id = client.get("/checkout/")["Location"].rsplit("/", 1)[1]
    form = {
        "action": "update",
        "email": "ana@example.com.br",
        "first_name": "Ana",
        "last_name": "Souza",
        "phone": "(11) 98765-4321",
        "method": "shipping",
        "cep": "01310-100",
        "street": "Rua das Flores",
        "number": "123",
        "neighborhood": "Jardim Paulista",
        "city": "São Paulo",
        "uf": "SP",
    }
    assert client.post(f"/checkout/{checkout_id}", form).status_code == 200
    # then the buyer's session sees it, another browser with the id does not
    assert client.get(f"/checkout/{checkout_id}").status_code == 200
    stranger = Client().get(f"/checkout/{checkout_id}")
    assert stranger.status_code == 404
    assert _shows_buyer_data(stranger.content.decode()) == []


def test_a_signed_token_kept_by_the_process_is_the_signers_and_follows_the_secret_key(
    agent_checkout: Checkout, settings
) -> None:
    """`continue_token` signs once per checkout and process (issue 34): the same token Django's signer makes, and
    another secret key (a rotation) signs again instead of handing out a token it would refuse."""
    first = continue_token(agent_checkout)
    signed = signing.Signer(salt=_SALT).sign(f"{agent_checkout.public_id}:{first.split(':')[0]}")
    assert continue_token(agent_checkout) == first == signed.split(":", 1)[1]
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40
    rotated = continue_token(agent_checkout)
    assert rotated != first
    assert Client().get(f"/checkout/{agent_checkout.public_id}", {"t": rotated}).status_code == 200


@pytest.mark.parametrize("page", ["checkout:resume", "checkout:pix", "checkout:card_pending", "checkout:boleto"])
def test_a_continue_url_path_is_the_reversed_one_and_reversed_once_per_page(
    page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34: every BCP checkout answer reversed its continue URL; the path is reversed once per page (and
    URLconf and script prefix) with a stand-in id. Whatever the id, the script prefix, the path is Django's."""
    reversed_ids: list[str] = []
    monkeypatch.setattr(selectors, "_PATHS", {})
    monkeypatch.setattr(
        selectors,
        "reverse",
        lambda name, kwargs: reversed_ids.append(kwargs["checkout_id"]) or reverse(name, kwargs=kwargs),
    )
    ids = ("checkout_AbC-12_x", "checkout_other9", "checkout_ç x")  # the last one is quoted by reverse
    for prefix in ("/", "/loja/"):
        set_script_prefix(prefix)
        try:
            for checkout_id in ids:
                assert selectors._checkout_path(page, checkout_id) == reverse(page, kwargs={"checkout_id": checkout_id})
        finally:
            set_script_prefix("/")
    # the stand-in once per script prefix, and the id the URL quotes each time
    assert reversed_ids == [selectors._STAND_IN, ids[2], selectors._STAND_IN, ids[2]]
