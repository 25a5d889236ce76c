"""Issue 33, major 4, in a real browser: a Pix page left open notices by itself that its Pix expired, and the
sandbox "pay" button pressed on an expired charge answers with a page in Portuguese, not the PSP's JSON.

The charge lives a few seconds here (PIX_EXPIRATION_SECONDS) and the tests wait for it to run out, as a
buyer would; no clock is moved and no beat runs (a bare `make run` has none).
"""

from __future__ import annotations

import re
import time

import pytest

from payments.models import PixCharge
from shop.models import Checkout, Variant
from tests.shop.checkout_factories import make_shipping, make_variant
from tests.shop.test_checkout_browser import CHROMIUM, IN_CI, LAUNCH_ARGS, fill_contact_and_address, off_loop

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]

PIX_SECONDS = 8  # long enough to reach the Pix page, short enough to wait for


def to_the_pix_page(page, base_url: str) -> None:
    """Product → cart → checkout filled with PAC → "Pagar com Pix" (the charge's clock starts here)."""
    page.goto(f"{base_url}/produtos/sku-cafe-500g/")
    page.click("[data-role=add-button]")
    page.goto(f"{base_url}/checkout/")
    fill_contact_and_address(page)
    page.click("[data-testid=calc-shipping]")
    page.check("input[name=shipping_option][value=pac]")
    page.click("[data-testid=pay-pix]")
    page.wait_for_url(re.compile(r"/checkout/checkout_[0-9a-f]+/pix$"))


@pytest.fixture
def short_pix(live_server, transactional_db, settings):
    settings.DEBUG = True  # the sandbox "pay" button is a development tool
    settings.PIX_EXPIRATION_SECONDS = PIX_SECONDS
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    return live_server


def test_an_open_pix_page_moves_to_expired_by_itself(short_pix) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 800})
            # given the buyer on the Pix page, waiting
            to_the_pix_page(page, short_pix.url)
            expect(page.locator("[data-testid=pix-qr] svg")).to_be_visible()
            expect(page.locator("[data-role=pix-status]")).to_have_text("Aguardando pagamento…")
            pix_url = page.url
            # when the charge's time runs out and the buyer only watches (no click, no reload)
            # then the page itself says the Pix expired and offers a new one, without the QR code
            expect(page.get_by_role("alert")).to_have_text(
                "Este Pix expirou sem pagamento. O pedido não foi confirmado.", timeout=(PIX_SECONDS + 20) * 1000
            )
            expect(page.get_by_role("button", name="Gerar novo Pix")).to_be_visible()
            expect(page.locator("[data-testid=pix-qr]")).to_have_count(0)
            assert page.url == pix_url
            checkout_id = pix_url.rsplit("/", 2)[1]
            # and the shop knows too: back to the form, the charge expired, the coffee back in stock
            status = off_loop(lambda: Checkout.objects.get(public_id=checkout_id).status)
            charge_status = off_loop(lambda: PixCharge.objects.get(reference=checkout_id).status)
            stock = off_loop(lambda: Variant.objects.get(sku="SKU-CAFE-500G").stock)
            assert (status, charge_status, stock) == ("incomplete", "expired", 10)
            # when the buyer asks for a new Pix, a fresh QR code is shown
            page.click("text=Gerar novo Pix")
            expect(page.locator("[data-testid=pix-qr] svg")).to_be_visible()
            assert off_loop(lambda: PixCharge.objects.filter(reference=checkout_id, status="active").count()) == 1
        finally:
            browser.close()


def test_sandbox_pay_on_an_expired_pix_shows_a_portuguese_page(short_pix) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            # given a Pix page reopened without JavaScript (it cannot poll), so it still shows the pay button
            buying = browser.new_context(locale="pt-BR")
            to_the_pix_page(buying.new_page(), short_pix.url)
            pix_url = buying.pages[0].url
            context = browser.new_context(
                locale="pt-BR", java_script_enabled=False, storage_state=buying.storage_state()
            )
            buying.close()
            page = context.new_page()
            page.goto(pix_url)
            expect(page.get_by_role("button", name="Pagar (sandbox)")).to_be_visible()
            # when the charge's time runs out and the buyer then presses the sandbox's pay button
            time.sleep(PIX_SECONDS + 1)
            page.get_by_role("button", name="Pagar (sandbox)").click()
            # then a page in Portuguese says the Pix expired, with no JSON and no English problem name
            expect(page.get_by_test_id("sandbox-error")).to_have_text(
                "Este Pix expirou: o app do banco não aceita mais o pagamento. "
                "Volte à página do Pix e gere um novo Pix."
            )
            body = page.locator("body").inner_text()
            assert "CobExpirada" not in body and "{" not in body
            # and "Voltar" leads to the Pix page, which now offers a new Pix
            page.get_by_test_id("sandbox-back").click()
            assert page.url == pix_url
            expect(page.get_by_role("button", name="Gerar novo Pix")).to_be_visible()
        finally:
            browser.close()
