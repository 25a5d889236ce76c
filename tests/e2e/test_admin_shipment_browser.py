"""A real browser (Playwright driving Debian's chromium) against the live server:
staff signs into the admin, registers a shipment with a tracking code, the buyer sees it on the permalink page.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from orders.models import FulfillmentEvent
from orders.services import order_place_from_checkout
from tests.orders.conftest import make_checkout

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.mark.e2e
@pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')")
def test_staff_registers_shipment_and_buyer_sees_tracking(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    # given a paid order and a staff user (all database work happens before the browser's event loop starts)
    order = order_place_from_checkout(checkout=make_checkout(lines=[("CAM-P-AZUL", 3000, 2)]))
    User.objects.create_superuser("lojista", "lojista@example.com.br", "senha-forte-123")
    change_url = f"{live_server.url}/admin/orders/order/{order.pk}/change/"
    permalink = f"{live_server.url}/orders/{order.permalink_token}"

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR")
            # when staff signs in to the admin
            page.goto(f"{live_server.url}/admin/login/?next=/admin/orders/order/{order.pk}/change/")
            page.fill("#id_username", "lojista")
            page.fill("#id_password", "senha-forte-123")
            page.click("input[type=submit]")
            page.wait_for_url(change_url)
            # and registers a shipment with a tracking code on the action page
            page.click("a.orders-action:has-text('Registrar envio')")
            page.fill("#id_tracking_number", "BR123456785BR")
            page.click("input[name=_submit]")
            page.wait_for_url(change_url)
            expect(page.locator("ul.messagelist")).to_contain_text("BR123456785BR")
            # then the buyer, without logging in, sees the tracking link on the permalink page
            buyer = browser.new_context(locale="pt-BR").new_page()
            buyer.goto(permalink)
            link = buyer.get_by_test_id("tracking-link")
            expect(link).to_have_text("BR123456785BR")
            expect(link).to_have_attribute(
                "href", "https://rastreamento.correios.com.br/app/index.php?objeto=BR123456785BR"
            )
            expect(buyer.get_by_test_id("order-status")).to_contain_text("Enviado")
        finally:
            browser.close()

    event = FulfillmentEvent.objects.get(order=order)
    assert (event.type, event.tracking_number, event.line_items[0]["quantity"]) == ("shipped", "BR123456785BR", 2)
