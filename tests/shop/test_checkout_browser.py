"""A real browser on the checkout: product page → cart → one-page checkout → Pix page that moves to the order
by itself once the (sandbox) bank pays. Playwright drives Debian's chromium against the live server.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from orders.models import Order
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_latest_for_reference
from shop.models import Checkout, PickupLocation, StoreSettings
from tests.shop.checkout_factories import make_location, make_shipping, make_variant

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]


def off_loop(function):
    """Run ORM work outside Playwright's event loop (Django refuses sync DB calls inside one)."""

    def run():
        try:
            return function()
        finally:
            connections.close_all()  # the worker thread's connection must not outlive the test database

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def fill_contact_and_address(page) -> None:
    page.fill("#id_email", "ana@example.com.br")
    page.fill("#id_first_name", "Ana")
    page.fill("#id_last_name", "Souza")
    page.fill("#id_phone", "(11) 98765-4321")
    page.fill("#id_tax_id", "529.982.247-25")  # the NF-e needs it
    page.fill("#id_cep", "01310-100")
    page.fill("#id_street", "Rua das Flores")
    page.fill("#id_number", "123")
    page.fill("#id_city", "São Paulo")


def phone_checkout_with_two_coffees(browser: Any, base_url: str) -> Any:
    """A 360 px phone that put 2 coffees in the cart and filled the contact and the address on the checkout."""
    page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 740})
    page.goto(f"{base_url}/produtos/sku-cafe-500g/")
    page.fill("#qty", "2")
    page.click("[data-role=add-button]")
    page.click("[data-testid=go-checkout]")
    fill_contact_and_address(page)
    return page


def test_buyer_pays_with_pix_and_the_page_moves_to_the_order(live_server, transactional_db, settings) -> None:
    from playwright.sync_api import expect, sync_playwright

    # given a product, shipping methods and a pickup point (database work before the browser starts)
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    make_location()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR")
            # when the buyer adds 2 units from the product page
            page.goto(f"{live_server.url}/produtos/sku-cafe-500g/")
            page.fill("#qty", "2")
            page.click("[data-role=add-button]")
            expect(page.get_by_test_id("cart-count")).to_have_text("2")
            page.click("[data-testid=go-checkout]")
            # the marketing-consent box keeps a gap below the CPF field (desktop QA walk: their borders touched)
            cpf = page.locator("#id_tax_id").bounding_box()
            consent = page.get_by_test_id("marketing-consent").bounding_box()
            assert cpf is not None and consent is not None
            assert consent["y"] - (cpf["y"] + cpf["height"]) >= 8
            # and pays too early, the errors are next to the fields
            page.click("[data-testid=pay-pix]")
            expect(page.get_by_test_id("error-email")).to_have_text("Informe o e-mail.")
            # when the pickup method is chosen, only its panel shows (JS), and back to delivery
            page.check("input[name=method][value=pickup]")
            expect(page.get_by_test_id("pickup-locations")).to_be_visible()
            expect(page.get_by_test_id("shipping-options")).to_be_hidden()
            page.check("input[name=method][value=shipping]")
            # when the address is filled and the shipping is calculated
            fill_contact_and_address(page)
            page.click("[data-testid=calc-shipping]")
            expect(page.locator("#id_uf")).to_have_value("SP")  # filled from the CEP table
            # and SEDEX is chosen, the summary's total follows at once (2 × R$ 42,90 + SEDEX R$ 32,90)
            page.check("input[name=shipping_option][value=sedex]")
            expect(page.get_by_test_id("total")).to_have_text("R$ 118,70")
            expect(page.locator("input[name=shipping_option][value=sedex]")).to_be_checked()
            page.click("[data-testid=pay-pix]")
            # then the Pix page shows the QR code and the amount
            expect(page).to_have_url(re.compile(r"/checkout/checkout_[0-9a-f]+/pix$"))
            expect(page.get_by_test_id("pix-amount")).to_have_text("R$ 118,70")
            expect(page.locator("[data-testid=pix-qr] svg")).to_be_visible()
            checkout = off_loop(lambda: Checkout.objects.get(status="complete_in_progress"))
            charge = off_loop(lambda: pix_charge_latest_for_reference(checkout.public_id))
            expect(page.get_by_test_id("pix-brcode")).to_have_value(charge.br_code)
            # when the bank pays (outside the page), the page polls and moves to the order by itself
            off_loop(lambda: pay(txid=charge.txid, options=PayOptions()))
            order = off_loop(lambda: Order.objects.get(checkout_id=checkout.public_id))
            token = order.permalink_url.split("/orders/")[1]
            expect(page).to_have_url(re.compile(re.escape(token) + "$"), timeout=20000)
        finally:
            browser.close()
    assert Checkout.objects.get(pk=checkout.pk).status == "completed"


def test_choosing_store_pickup_recomputes_the_summary_at_once(live_server, transactional_db, settings) -> None:
    from playwright.sync_api import expect, sync_playwright

    # given 2 units of R$ 42,90 on a filled checkout with SEDEX (R$ 118,70), on a phone
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    make_location()
    make_location("Loja Vila Madalena")

    def close_vila_madalena(active: bool = False) -> None:
        closed = PickupLocation.objects.get(name="Loja Vila Madalena")
        closed.active = active
        closed.save()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = phone_checkout_with_two_coffees(browser, live_server.url)
            # when her first choice is a store closed meanwhile (QA walk: the page came back with "Informe o nome"
            # beside her name and no word of the store), she reads why beside the stores and nothing typed is lost
            off_loop(close_vila_madalena)
            page.check("input[name=method][value=pickup]")
            # click, not check(): the page re-renders the refused store unchecked, which check() would retry on
            page.locator("label.option-row:has-text('Loja Vila Madalena') input").click()
            expect(page.get_by_test_id("error-pickup_location")).to_have_text(
                "A loja de retirada Loja Vila Madalena não está mais disponível; escolha outra."
            )
            for field, value in (("first_name", "Ana"), ("tax_id", "529.982.247-25"), ("street", "Rua das Flores")):
                expect(page.locator(f"#id_{field}")).to_have_value(value)
            expect(page.locator("[data-testid=error-first_name]")).to_have_count(0)
            off_loop(lambda: close_vila_madalena(active=True))  # open again: two stores, none chosen yet
            page.check("input[name=method][value=shipping]")
            page.check("input[name=shipping_option][value=sedex]")
            expect(page.get_by_test_id("total")).to_have_text("R$ 118,70")
            # when the buyer picks up in the store instead (QA walk: the summary kept SEDEX's R$ 32,90), before
            # choosing a store (the buyer's walk: "Frete — SEDEX R$ 32,90" stayed until one was chosen)
            page.check("input[name=method][value=pickup]")
            # then the summary drops the freight at once
            expect(page.get_by_test_id("total")).to_have_text("R$ 85,80")
            with page.expect_navigation():  # the store's choice is sent too (the summary says the same)
                page.locator("input[name=pickup_location]").first.check()
            expect(page.get_by_test_id("total")).to_have_text("R$ 85,80")
            expect(page.locator("input[name=pickup_location]").first).to_be_checked()
            # and back to delivery, the typed address is still there and its options come back by themselves
            page.check("input[name=method][value=shipping]")
            expect(page.locator("input[name=shipping_option][value=sedex]")).to_be_visible()
            expect(page.locator("#id_street")).to_have_value("Rua das Flores")
            page.check("input[name=shipping_option][value=sedex]")
            expect(page.get_by_test_id("total")).to_have_text("R$ 118,70")
            page.check("input[name=method][value=pickup]")
            expect(page.get_by_test_id("total")).to_have_text("R$ 85,80")
            if not page.locator("input[name=pickup_location]").first.is_checked():
                with page.expect_navigation():
                    page.locator("input[name=pickup_location]").first.check()
            expect(page.locator("input[name=pickup_location]").first).to_be_checked()
            # and paying goes straight to the Pix page for that total, without an "O total mudou" bounce
            page.click("[data-testid=pay-pix]")
            expect(page).to_have_url(re.compile(r"/checkout/checkout_[0-9a-f]+/pix$"))
            expect(page.get_by_test_id("pix-amount")).to_have_text("R$ 85,80")
        finally:
            browser.close()


def test_the_chosen_card_plan_reads_in_full_on_a_phone(live_server, transactional_db, settings) -> None:
    """QA walk at 360 px: the closed installments select cut "10x de R$ 14,10 com juros (total R$ 141,00)" before
    its total, under a summary still showing the total without interest."""
    from playwright.sync_api import expect, sync_playwright

    # given 2 units of R$ 42,90 with SEDEX (R$ 118,70), 3x without interest, then 1,99 % a month
    settings.BCP_PIX_SANDBOX = True  # the sandbox card gateway: the card is offered
    StoreSettings.objects.create(card_interest_free_installments=3)
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = phone_checkout_with_two_coffees(browser, live_server.url)
            page.click("[data-testid=calc-shipping]")
            page.check("input[name=shipping_option][value=sedex]")
            expect(page.get_by_test_id("total")).to_have_text("R$ 118,70")
            # when the buyer pays by card in 10x
            page.check("[data-testid=choose-card]")
            expect(page.get_by_test_id("plan-chosen")).to_have_text("1x de R$ 118,70 (à vista)")
            page.select_option("[data-testid=installments]", "10")
            label = page.locator("[data-testid=installments] option[value='10']").inner_text()
            assert label.startswith("10x de R$ ") and "com juros (total R$ " in label
            # then the plan reads in full under the select, its total with interest inside the phone's width
            chosen = page.get_by_test_id("plan-chosen")
            expect(chosen).to_have_text(label)
            box = chosen.bounding_box()
            assert box is not None and box["x"] + box["width"] <= 360
            assert chosen.evaluate("e => e.scrollWidth <= e.clientWidth")
        finally:
            browser.close()


def test_a_bounced_pay_on_a_phone_opens_at_the_field_to_fix(live_server, transactional_db) -> None:
    """QA walk at 360 px: "Pagar com Pix" without a delivery option reloaded the page at its top, the contact
    fields all filled and correct, and "Escolha a forma de entrega." 1300 px below: nothing on the screen said
    what was wrong. The page now opens at the first field in error, focused (a screen reader reads it)."""
    from playwright.sync_api import expect, sync_playwright

    # given a phone with a filled contact and address, the options shown, none chosen
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = phone_checkout_with_two_coffees(browser, live_server.url)
            page.click("[data-testid=calc-shipping]")
            expect(page.locator("input[name=shipping_option]").first).to_be_attached()
            # when the buyer presses "Pagar com Pix" at the bottom of the summary
            page.click("[data-testid=pay-pix]")
            # then the reloaded page shows the option's error and focuses its first option
            error = page.get_by_test_id("error-shipping_option")
            expect(error).to_have_text("Escolha a forma de entrega.")
            expect(error).to_be_in_viewport()
            expect(page.locator("input[name=shipping_option]").first).to_be_focused()
            # and a page without errors keeps its top: nothing is focused on a plain visit
            page.goto(page.url)
            assert page.evaluate("document.activeElement === document.body")
            assert page.evaluate("scrollY") == 0
        finally:
            browser.close()
