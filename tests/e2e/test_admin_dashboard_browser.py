"""A real browser: the admin home shows today's sales after three orders, and a card opens its list."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from orders.services import order_place_from_checkout
from payments.models import PaymentEvent
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login
from tests.orders.conftest import make_checkout


@pytest.mark.e2e
@needs_chromium
def test_dashboard_after_three_orders(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    # given three orders today: two paid (R$ 68,00 delivery and R$ 35,90 pickup) and one unpaid
    paid = order_place_from_checkout(checkout=make_checkout(lines=[("CAM-A", 3000, 2)], freight=800))
    order_place_from_checkout(checkout=make_checkout(lines=[("CAF-B", 3590, 1)], freight=0, method="pickup"))
    order_place_from_checkout(checkout=make_checkout(lines=[("CAF-C", 1000, 1)], paid=False))
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            staff_login(page, live_server.url)
            expect(page.locator("#site-name")).to_have_text("Loja Exemplo — administração")
            today = page.get_by_test_id("sales-1")
            expect(today.locator("[data-role=revenue]")).to_have_text("R$ 103,90")
            expect(today.locator("[data-role=count]")).to_have_text("2 vendas")
            expect(today.locator("[data-role=ticket]")).to_have_text("ticket médio R$ 51,95")
            expect(page.get_by_test_id("counter-to_ship").locator("[data-role=value]")).to_have_text("1")
            expect(page.get_by_test_id("counter-pickups").locator("[data-role=value]")).to_have_text("1")
            expect(page.get_by_test_id("sales-chart").locator("rect")).to_have_count(30)
            # when staff opens "Pedidos a enviar"
            page.get_by_test_id("counter-to_ship").click()
            # then the order list shows exactly the paid delivery order
            rows = page.locator("#result_list tbody tr")
            expect(rows).to_have_count(1)
            expect(rows.first).to_contain_text(f"#{paid.number}")
        finally:
            browser.close()


@pytest.mark.e2e
@needs_chromium
def test_a_change_page_named_by_a_long_code_fits_a_phone(live_server, transactional_db) -> None:
    """QA walk (360 px): a change page's subtitle is the object's name, and a checkout reference or a txid is one long
    word: the Pix charge, Pix payment, payment event and NF-e job pages scrolled sideways by 3 to 40 px."""
    from playwright.sync_api import sync_playwright

    event = PaymentEvent.objects.create(reference="checkout_00b590ef144c4b27c67dd0e3", kind="pix.charge_created")
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 800})
            staff_login(page, live_server.url, f"/admin/payments/paymentevent/{event.pk}/change/")
            assert "checkout_00b590ef144c4b27c67dd0e3" in page.locator("#content h2").first.inner_text()
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
        finally:
            browser.close()
