"""Issue 33 (minor), "Minha conta" in a real browser on a 360 px phone: the buyer asks for the link, opens it
from the e-mail, sees their order and address without sideways scroll and with 44 px tap targets, then erases
their data."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from orders.models import Order
from orders.services import order_place_from_checkout
from tests.orders.conftest import make_checkout
from tests.shop.test_checkout_browser import CHROMIUM, IN_CI, LAUNCH_ARGS, off_loop
from tests.shop.test_phone_layout_browser import _overflow

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]

EMAIL = "ana@example.com.br"
SMALL_TARGETS_JS = """() => [...document.querySelectorAll('.account-page a, .account-page button, .account-page input')]
  .filter(e => e.offsetParent !== null)
  .map(e => [e.textContent.trim() || e.name, Math.round(e.getBoundingClientRect().height)])
  .filter(([, h]) => h < 44)"""


def test_a_buyer_signs_in_by_e_mail_sees_the_order_and_erases_the_data(live_server, transactional_db, settings):
    from playwright.sync_api import expect, sync_playwright

    settings.BCP_PUBLIC_URL = live_server.url
    order = order_place_from_checkout(checkout=make_checkout(lines=[("CAFE", 4290, 2)], email=EMAIL))
    mail.outbox.clear()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 780})
            page.goto(f"{live_server.url}/")
            page.get_by_test_id("footer-account").click()
            page.get_by_test_id("account-email").fill(EMAIL)
            page.get_by_test_id("account-send").click()
            expect(page.get_by_test_id("account-link-sent")).to_contain_text("Se houver compras com esse e-mail")
            (message,) = mail.outbox
            link = re.search(r"https?://\S+/conta/entrar/\S+", message.body).group(0)
            page.goto(link)
            page.get_by_test_id("account-enter-button").click()
            expect(page.get_by_test_id("account-order")).to_contain_text(f"Pedido #{order.number}")
            expect(page.get_by_test_id("account-addresses")).to_contain_text("Rua das Flores, 123")
            scroll_width, inner_width, culprits = _overflow(page)
            assert scroll_width <= inner_width, culprits
            assert page.evaluate(SMALL_TARGETS_JS) == []
            page.get_by_test_id("account-delete").click()
            page.get_by_test_id("delete-confirm").check()
            page.get_by_test_id("delete-submit").click()
            expect(page.get_by_test_id("account-deleted")).to_be_visible()
            page.goto(f"{live_server.url}/conta/")
            expect(page.get_by_test_id("account-request")).to_be_visible()
        finally:
            browser.close()

    def erased() -> None:
        kept = Order.objects.get(pk=order.pk)
        assert kept.buyer_email.endswith("@apagado.invalid") and kept.buyer_tax_id == "39053344705"

    off_loop(erased)
