"""Delivery estimates are gettext strings: an English checkout reads English ones (issue 16, item 8)."""

from __future__ import annotations

import pytest
from django.utils import translation

from orders import arrival
from shop.checkout import fulfillment
from shop.checkout.fulfillment import days_text
from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_create
from shop.checkout.types import CheckoutInput, LineInput
from tests.shop.checkout_factories import BUYER, make_location, make_shipping, make_variant, pickup, shipping


@pytest.mark.parametrize(
    ("days", "pickup_", "pt", "en"),
    [
        ((3, 5), False, "Chega em 3 a 5 dias úteis", "Arrives in 3 to 5 business days"),
        ((1, 1), False, "Chega em 1 dia útil", "Arrives in 1 business day"),
        ((0, 1), False, "Chega em até 1 dia útil", "Arrives in up to 1 business day"),
        ((0, 0), False, "Chega hoje", "Arrives today"),
        ((2, 2), True, "Pronto para retirada em 2 dias úteis", "Ready for pickup in 2 business days"),
        ((0, 0), True, "Pronto para retirada hoje", "Ready for pickup today"),
    ],
)
def test_days_text_in_both_languages(days, pickup_, pt, en) -> None:
    with translation.override("pt-br"):
        assert days_text(*days, pickup=pickup_) == pt
    with translation.override("en"):
        assert days_text(*days, pickup=pickup_) == en


def test_an_estimate_is_worded_once_per_language_and_days(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: every evaluation of a checkout with an address words its options' estimates; the words are kept
    per language and days, so `ngettext` runs once for each, and each language still gets its own."""
    worded: list[int] = []
    original = fulfillment.ngettext
    for module in (fulfillment, arrival):  # shipping estimates are worded by orders.arrival, pickup ones here
        monkeypatch.setattr(module, "ngettext", lambda *args: worded.append(args[2]) or original(*args))
    answers = []
    for language in ("pt-br", "en", "pt-br", "en"):
        with translation.override(language):
            answers.append((days_text(4, 9), days_text(4, 9), days_text(6, 6, pickup=True)))
    assert answers[0] == answers[2] == ("Chega em 4 a 9 dias úteis",) * 2 + ("Pronto para retirada em 6 dias úteis",)
    assert (
        answers[1] == answers[3] == ("Arrives in 4 to 9 business days",) * 2 + ("Ready for pickup in 6 business days",)
    )
    assert worded == [9, 6, 9, 6]  # pt-br, then en: once each


@pytest.mark.django_db
def test_an_english_checkout_gets_english_shipping_and_pickup_estimates() -> None:
    make_variant()
    make_shipping()
    location = make_location()
    data = CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), buyer=BUYER, fulfillment=shipping())
    view = checkout_view(checkout_create(data=data, language="en").checkout)
    assert [o.description for o in view.fulfillment_methods[0].groups[0].options] == [
        "Arrives in 3 to 5 business days",
        "Arrives in 1 to 2 business days",
        "Arrives in 1 business day",
    ]
    picked = CheckoutInput(lines=data.lines, buyer=BUYER, fulfillment=pickup(location.public_id))
    view = checkout_view(checkout_create(data=picked, language="en").checkout)
    assert [o.description for o in view.fulfillment_methods[0].groups[0].options] == [
        "Ready for pickup in 1 business day"
    ]
