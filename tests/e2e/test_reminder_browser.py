"""Issue 33, major 5, in a real browser: a buyer types the e-mail on the checkout, leaves the page without
pressing anything, and the abandoned-checkout reminder goes out (items, prices, total, the way back, the
opt-out), though the marketing box stayed unticked.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from shop.checkout.reminders import reminders_queue_due
from shop.models import Checkout, CheckoutReminder
from tests.shop.checkout_factories import make_shipping, make_variant
from tests.shop.test_checkout_browser import CHROMIUM, IN_CI, LAUNCH_ARGS, off_loop

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]


def saved_email(checkout_id: str) -> str:
    """The e-mail the checkout holds, waiting up to 10 s for the page's background save."""
    for _ in range(50):
        email = Checkout.objects.get(public_id=checkout_id).buyer_email
        if email:
            return email
        time.sleep(0.2)
    return ""


def test_typing_the_email_and_leaving_gets_the_reminder(live_server, transactional_db, settings) -> None:
    from playwright.sync_api import expect, sync_playwright

    settings.SHOP_CHECKOUT_REMINDER_MINUTES = 120
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 800})
            # given two coffees in the cart and the checkout open
            page.goto(f"{live_server.url}/produtos/sku-cafe-500g/")
            page.fill("#qty", "2")
            page.click("[data-role=add-button]")
            expect(page.get_by_test_id("cart-count")).to_have_text("2")
            page.goto(f"{live_server.url}/checkout/")
            checkout_id = page.url.rsplit("/", 1)[1]
            expect(page.locator("[data-testid=marketing-consent] input")).not_to_be_checked()
            # when the buyer types the e-mail, moves to the next field, and leaves the shop
            page.fill("#id_email", "ana@example.com.br")
            page.press("#id_email", "Tab")
            page.wait_for_timeout(300)
            page.goto("about:blank")
        finally:
            browser.close()
    # then the checkout holds the e-mail, though nothing was submitted
    assert off_loop(lambda: saved_email(checkout_id)) == "ana@example.com.br"
    # when the reminder time has passed and the sweep runs (the beat's job)
    Checkout.objects.filter(public_id=checkout_id).update(updated_at=timezone.now() - timedelta(minutes=121))
    mail.outbox.clear()
    assert reminders_queue_due() == 1
    # then one reminder went out, with the items, prices, total and the way back
    (message,) = mail.outbox
    assert message.to == ["ana@example.com.br"]
    assert "- 2× Café especial 500 g — R$ 85,80\n" in message.body
    assert "Total: R$ 85,80\n" in message.body
    assert f"/checkout/{checkout_id}?t=" in message.body and "/lembretes/sair/" in message.body
    assert CheckoutReminder.objects.get(checkout__public_id=checkout_id).sent_at is not None
