"""Issue 33 (minor), in a real browser at 360 px: the payment-method choice lists Pix first, shows the card fields
only once the card is chosen (by CSS, with JavaScript off too), and a buyer on a pending Pix presses "Mudar forma
de pagamento", comes back to the checkout and pays by card; the abandoned Pix is revoked and removed at the PSP.
"""

from __future__ import annotations

import re

import pytest

from orders.models import Order
from payments.models import PixCharge
from tests.shop.checkout_factories import make_shipping, make_variant
from tests.shop.test_checkout_browser import CHROMIUM, IN_CI, LAUNCH_ARGS, fill_contact_and_address, off_loop
from tests.shop.test_phone_layout_browser import _overflow

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]


@pytest.fixture
def shop(live_server, transactional_db, settings):
    settings.DEBUG = True
    settings.BCP_PIX_SANDBOX = True
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    return live_server


def _to_checkout(page, base_url: str) -> None:
    page.goto(f"{base_url}/produtos/sku-cafe-500g/")
    page.click("[data-role=add-button]")
    page.goto(f"{base_url}/checkout/")
    fill_contact_and_address(page)
    page.click("[data-testid=calc-shipping]")
    page.check("input[name=shipping_option][value=pac]")


def test_from_a_pending_pix_back_to_the_checkout_and_paid_by_card(shop) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 800})
            _to_checkout(page, shop.url)
            # the choice: Pix first and open, the card panel closed
            expect(page.get_by_test_id("pay-pix")).to_be_visible()
            expect(page.get_by_test_id("card-number")).to_be_hidden()
            page.get_by_test_id("pay-pix").click()
            page.wait_for_url(re.compile(r"/checkout/checkout_[0-9a-f]+/pix$"))
            checkout_id = page.url.rsplit("/", 2)[1]
            # when the buyer, on the pending Pix, changes their mind
            page.get_by_test_id("pix-change").click()
            page.wait_for_url(re.compile(rf"/checkout/{checkout_id}$"))
            expect(page.locator(".flash")).to_contain_text("O Pix foi cancelado e não pode mais ser pago.")
            scroll_width, inner_width, culprits = _overflow(page)
            assert scroll_width <= inner_width, culprits
            # and pays by card (the sandbox tokenizer in the page)
            page.get_by_test_id("choose-card").check()
            page.get_by_test_id("card-number").fill("4111111111111111")
            page.get_by_test_id("card-holder").fill("ANA SOUZA")
            page.get_by_test_id("card-expiry").fill("12/39")
            page.get_by_test_id("card-cvv").fill("123")
            page.get_by_test_id("pay-card").click()
            page.wait_for_url(re.compile(r"/orders/"))
        finally:
            browser.close()

    def check() -> None:
        order = Order.objects.get()
        assert (order.payment_type, order.paid_amount) == ("card", order.total_amount)
        charge = PixCharge.objects.get(reference=checkout_id)
        assert (charge.status, charge.psp_removed) == ("revoked", True)

    off_loop(check)


def test_without_javascript_the_radios_still_switch_the_panels(shop) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            setup = browser.new_context(locale="pt-BR", viewport={"width": 360, "height": 800})
            page = setup.new_page()
            _to_checkout(page, shop.url)
            url, cookies = page.url, setup.cookies()
            plain = browser.new_context(
                locale="pt-BR", viewport={"width": 360, "height": 800}, java_script_enabled=False
            )
            plain.add_cookies(cookies)
            page = plain.new_page()
            page.goto(url)
            expect(page.get_by_test_id("pay-pix")).to_be_visible()
            expect(page.get_by_test_id("pay-panel-card")).to_be_hidden()
            page.get_by_test_id("choose-card").check()
            expect(page.get_by_test_id("pay-panel-card")).to_be_visible()
            expect(page.get_by_test_id("pay-pix")).to_be_hidden()
        finally:
            browser.close()
