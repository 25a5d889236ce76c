"""A real browser: staff enter a WhatsApp sale marked paid, and another paid by the buyer on the Pix link."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from orders.models import Order
from shop.models import Checkout
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login
from tests.shop.checkout_factories import make_location, make_shipping, make_variant


@pytest.mark.e2e
@needs_chromium
def test_manual_sales_marked_paid_and_by_pix_link(live_server, transactional_db, settings) -> None:
    from playwright.sync_api import expect, sync_playwright

    settings.BCP_PUBLIC_URL = live_server.url  # the link handed to the buyer is absolute
    make_variant(price=4290, stock=10)
    make_shipping()
    location = make_location()
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])

    def fill_sale(page, payment: str) -> None:
        page.goto(f"{live_server.url}/admin/")
        page.get_by_test_id("new-manual-order").click()
        page.fill("#id_first_name", "Maria")
        page.fill("#id_last_name", "Silva")
        page.fill("#id_email", "maria@example.com.br")
        page.select_option("#id_delivery", "pickup")
        page.select_option("#id_location", location.public_id)
        page.select_option("#id_sku_0", "SKU-CAFE-500G")
        page.fill("#id_qty_0", "2")
        page.check(f"input[name=payment][value={payment}]")

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            staff_login(page, live_server.url)
            # a sale paid in cash at the counter
            fill_sale(page, "paid")
            page.select_option("#id_paid_method", "dinheiro")
            page.fill("#id_paid_reason", "Pago no balcão")
            page.click("input[name=_submit]")
            expect(page.locator("ul.messagelist")).to_contain_text("Venda registrada e paga: pedido criado.")
            expect(page.locator(".field-payment_status")).to_contain_text("Pago")
            # a sale the buyer pays by the Pix link
            fill_sale(page, "pix")
            page.click("input[name=_submit]")
            link = page.get_by_test_id("pix-link").input_value()
            buyer = browser.new_context(locale="pt-BR").new_page()
            buyer.goto(link)
            expect(buyer.get_by_test_id("pix-amount")).to_have_text("R$ 85,80")
            expect(buyer.get_by_test_id("pix-qr").locator("svg")).to_have_count(1)
        finally:
            browser.close()
    paid = Order.objects.get(payment_type="manual")
    assert (paid.payment_status, paid.total_amount) == ("paid", 8580)
    assert Checkout.objects.filter(status="complete_in_progress").count() == 1
