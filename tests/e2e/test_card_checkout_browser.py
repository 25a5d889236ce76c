"""A card purchase in 3x on a 360 px phone, in a real browser (Playwright + Debian's chromium): the sandbox
tokenizer runs in the page and only a token reaches the server; no card number in any request or log;
no horizontal scroll on the checkout with the card section open (BCP-PAY-04)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from orders.models import Order
from tests.shop.test_phone_layout_browser import (
    LAUNCH_ARGS,
    _overflow,
    _ready_checkout,
    _session_cookie,
    _shot,
    off_loop,
    seed_demo,
)

CHROMIUM = Path("/usr/bin/chromium")
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
PAN = "4111111111111111"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]


@contextmanager
def phone_checkout(live_server, shopper: Client, checkout_id: str, posted: list[str], record) -> Iterator[Any]:
    """The buyer's checkout page on a 360 px phone, with every POST the page makes recorded by `record`."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(locale="pt-BR", viewport={"width": 360, "height": 780})
            context.add_cookies([_session_cookie(shopper, live_server.url)])
            page = context.new_page()
            page.on("request", lambda req: posted.append(record(req)) if req.method == "POST" else None)
            page.goto(f"{live_server.url}/checkout/{checkout_id}")
            yield page
            context.close()
        finally:
            browser.close()


def test_card_purchase_in_3x_with_the_sandbox_tokenizer_on_a_phone(live_server, transactional_db, settings, caplog):
    from playwright.sync_api import expect

    caplog.set_level(logging.DEBUG)
    settings.BCP_PIX_SANDBOX = True
    # given the demo shop and a filled checkout (contact, address, SEDEX)
    seed_demo()
    shopper = Client()
    checkout_id = _ready_checkout(shopper)
    posted: list[str] = []
    with phone_checkout(live_server, shopper, checkout_id, posted, lambda req: req.post_data or "") as page:
        # Pix comes first and chosen; the card fields show once the buyer picks the card (CSS alone, issue 33)
        expect(page.get_by_test_id("pay-pix")).to_be_visible()
        expect(page.get_by_test_id("card-pay")).to_be_hidden()
        page.get_by_test_id("choose-card").check()
        expect(page.get_by_test_id("pay-pix")).to_be_hidden()
        # the card section fits the phone: no sideways scroll
        expect(page.get_by_test_id("card-pay")).to_be_visible()
        scroll_width, inner_width, culprits = _overflow(page)
        _shot(page, "checkout-card", 360)
        assert scroll_width <= inner_width, culprits
        # no form on the page has a field that would submit a card number, expiry or CVV
        named = page.eval_on_selector_all("form [name]", "els => els.map(e => e.getAttribute('name'))")
        assert not {"card_number", "number_card", "cvv", "expiry", "pan"} & set(named)
        for test_id in ("card-number", "card-holder", "card-expiry", "card-cvv"):
            assert page.get_by_test_id(test_id).get_attribute("name") is None
        # when the buyer picks 3x and types the sandbox test card
        page.get_by_test_id("installments").select_option("3")
        page.get_by_test_id("card-number").fill(PAN)
        page.get_by_test_id("card-holder").fill("ANA SOUZA")
        page.get_by_test_id("card-expiry").fill("1230")
        page.get_by_test_id("card-cvv").fill("123")
        expect(page.get_by_test_id("card-number")).to_have_value("4111 1111 1111 1111")
        page.get_by_test_id("pay-card").click()
        # then the order page opens with the plan
        expect(page.get_by_test_id("order-page")).to_be_visible()
        expect(page.get_by_test_id("order-installments")).to_contain_text("3x")
        _shot(page, "order-card", 360)
        scroll_width, inner_width, culprits = _overflow(page)
        assert scroll_width <= inner_width, culprits
    order = off_loop(lambda: Order.objects.get(checkout_id=checkout_id))
    assert (order.payment_type, order.installments, order.paid_amount) == ("card", 3, order.total_amount)
    # only the token and the installments left the page: never the card number, in any form of it
    pay = [body for body in posted if "pay_card" in body]
    assert len(pay) == 1 and "card_token=tok_sbx_ok_1111_" in pay[0] and "installments=3" in pay[0]
    for body in posted:
        assert PAN not in body and "4111+1111" not in body and "4111%201111" not in body
    assert PAN not in caplog.text and "4111 1111" not in caplog.text


def test_a_bad_card_number_is_refused_in_the_page_before_any_request(live_server, transactional_db, settings):
    from playwright.sync_api import expect

    settings.BCP_PIX_SANDBOX = True
    seed_demo()
    shopper = Client()
    checkout_id = _ready_checkout(shopper)
    posted: list[str] = []
    with phone_checkout(live_server, shopper, checkout_id, posted, lambda req: req.url) as page:
        page.get_by_test_id("choose-card").check()
        page.get_by_test_id("card-number").fill("4111111111111112")  # fails the Luhn check
        page.get_by_test_id("pay-card").click()
        expect(page.get_by_test_id("card-error")).to_have_text("Número do cartão inválido: confira os dígitos.")
    assert posted == []
