"""The Pix price line and the Pix com vencimento page in a real browser (issue 17): the variant picker keeps
"R$ … no Pix" in step with the chosen variant, and the pages with the new lines fit a 360 px phone.
Playwright drives Debian's chromium against the live server."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from payments.due import local_date
from shop.checkout.selectors import continue_token
from shop.checkout.services import checkout_complete_pix_due, checkout_create
from shop.checkout.types import BuyerInput, CheckoutInput, LineInput
from shop.models import Category, Product, StoreSettings, Variant
from tests.shop.checkout_factories import FORM_ADDRESS, FORM_CONTACT, make_location, make_shipping, pickup
from tests.shop.test_phone_layout_browser import CHROMIUM, IN_CI, LAUNCH_ARGS, _overflow, _session_cookie

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]


def _shop() -> None:
    StoreSettings.objects.create(pix_discount_percent=Decimal("5"))
    category = Category.objects.create(slug="cafes", name="Cafés")
    product = Product.objects.create(title="Café em grãos", slug="cafe-em-graos", category=category)
    Variant.objects.create(
        product=product, sku="CAFE-250", title="250 g", options={"peso": "250 g"}, price=4290, stock=10
    )
    Variant.objects.create(
        product=product, sku="CAFE-1KG", title="1 kg", options={"peso": "1 kg"}, price=9990, stock=10
    )
    make_shipping()


def _overdue_cobv() -> str:
    spot = make_location()
    buyer = BuyerInput(first_name="Caju", last_name="Cafés", email="compras@caju.com.br", tax_id="12ABC34501DE35")
    created = checkout_create(
        data=CheckoutInput(lines=(LineInput("CAFE-1KG", 3),), buyer=buyer, fulfillment=pickup(spot.public_id))
    )
    checkout_complete_pix_due(
        checkout_id=created.checkout.public_id,
        due_date=local_date(timezone.now()) - timedelta(days=3),
        fine_bp=200,
        interest_bp=100,
    )
    # the link staff send: a checkout page opens only for its session or with its signed token
    return f"/checkout/{created.checkout.public_id}/pix?t={continue_token(created.checkout)}"


def test_pix_price_follows_the_variant_and_the_new_lines_fit_a_phone(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    # given 5 % off by Pix, a product in two sizes, a cart with a filled checkout and an overdue cobv
    _shop()
    shopper = Client()
    shopper.post("/carrinho/adicionar", {"sku": "CAFE-1KG", "quantity": "2"})
    checkout_url = shopper.get("/checkout/")["Location"]
    shopper.post(checkout_url, {**FORM_CONTACT, **FORM_ADDRESS, "shipping_option": "pac", "action": "shipping"})
    cobv_link = _overdue_cobv()
    pages = {
        "product": "/produtos/cafe-em-graos/",
        "cart": "/carrinho/",
        "checkout": checkout_url,
        "pix-due": cobv_link,
    }
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(locale="pt-BR", viewport={"width": 360, "height": 780})
            context.add_cookies([_session_cookie(shopper, live_server.url)])
            page = context.new_page()
            # when the buyer opens the product (250 g first) and picks 1 kg
            page.goto(f"{live_server.url}{pages['product']}")
            expect(page.locator("[data-role=pix-price]")).to_have_text("R$ 40,76")  # 42,90 − 2,145 → 2,14
            page.click("label.option-chip:has(input[value='1 kg'])")
            # then the Pix price follows the variant on screen
            expect(page.locator("[data-role=price]")).to_have_text("R$ 99,90")
            expect(page.locator("[data-role=pix-price]")).to_have_text("R$ 94,90")
            # and every page with a new line fits the phone, the overdue Pix showing the amount of the day
            too_wide = {}
            for name, path in pages.items():
                page.goto(f"{live_server.url}{path}")
                scroll_width, inner_width, culprits = _overflow(page)
                if scroll_width > inner_width:
                    too_wide[name] = (scroll_width, inner_width, culprits)
            expect(page.get_by_test_id("pix-due")).to_contain_text("Vencido há 3 dias.")
            # 3 × 99,90 = 299,70, 5 % off by Pix = 284,72 (14,985 → 14,98); + 2 % = 5,69; + 3/30 of 1 % = 0,28
            expect(page.get_by_test_id("pix-due-amount")).to_have_text("R$ 290,69")
            assert too_wide == {}
            context.close()
        finally:
            browser.close()
