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
        page.fill("#id_sku_0", "SKU-CAFE-500G")
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
            # on a phone the link's field fits (QA walk: 549 px wide, the page scrolled sideways at 360 px)
            page.set_viewport_size({"width": 360, "height": 800})
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            buyer = browser.new_context(locale="pt-BR").new_page()
            buyer.goto(link)
            expect(buyer.get_by_test_id("pix-amount")).to_have_text("R$ 85,80")
            expect(buyer.get_by_test_id("pix-qr").locator("svg")).to_have_count(1)
        finally:
            browser.close()
    paid = Order.objects.get(payment_type="manual")
    assert (paid.payment_status, paid.total_amount) == ("paid", 8580)
    assert Checkout.objects.filter(status="complete_in_progress").count() == 1


@pytest.mark.e2e
@needs_chromium
@pytest.mark.parametrize("width", [360, 1280])
def test_nova_venda_shows_what_the_choice_needs_totals_lines_and_all_errors_at_once(
    live_server, transactional_db, width: int
) -> None:
    from playwright.sync_api import expect, sync_playwright

    make_variant(price=4290, stock=10, title="Café especial 500 g")
    for i in range(5):
        make_variant(sku=f"CANECA-{i}", price=3000 + i * 100, stock=5, title=f"Caneca {i}")
    make_shipping()
    make_location()
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": width, "height": 900})
            staff_login(page, live_server.url, "/admin/venda-manual/")
            # only what the default choices need: pickup's location, no address, no payment details yet
            expect(page.locator("#group-delivery-pickup")).to_be_visible()
            expect(page.locator("#group-delivery-shipping")).to_be_hidden()
            expect(page.locator("#group-payment-paid")).to_be_hidden()
            expect(page.locator("#group-payment-pix_due")).to_be_hidden()
            page.select_option("#id_delivery", "shipping")
            expect(page.locator("#group-delivery-shipping")).to_be_visible()
            expect(page.locator("#group-delivery-pickup")).to_be_hidden()
            page.check("input[name=payment][value=paid]")
            expect(page.locator("#group-payment-paid")).to_be_visible()
            expect(page.locator("label[for=id_paid_reason]")).to_contain_text("obrigatório")
            page.check("input[name=payment][value=pix_due]")
            expect(page.locator("#group-payment-paid")).to_be_hidden()
            expect(page.locator("#group-payment-pix_due")).to_be_visible()
            page.check("input[name=payment][value=paid]")
            # the product is searched by name: the list offers it with its price; the line and total are shown
            options = page.locator("#manual-order-variants option")
            expect(options.filter(has_text="Café especial 500 g")).to_have_count(1)
            expect(options.filter(has_text="Café especial 500 g")).to_contain_text("R$ 42,90")
            page.fill("#id_sku_0", "SKU-CAFE-500G")
            page.fill("#id_qty_0", "2")
            expect(page.get_by_test_id("line-total-0")).to_have_text("R$ 42,90 × 2 = R$ 85,80")
            # more than four lines, one "Adicionar item" at a time
            for row in range(1, 6):
                expect(page.locator(f"#id_sku_{row}")).to_be_hidden()
                page.click("#manual-add-line")
                page.fill(f"#id_sku_{row}", f"CANECA-{row - 1}")
            expect(page.get_by_test_id("items-total")).to_have_text("R$ 245,80")
            # nothing overflows sideways at this width
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            # a sale with several mistakes comes back with all of them at once, each under its field
            page.fill("#id_first_name", "Maria")
            page.fill("#id_last_name", "Silva")
            page.fill("#id_email", "maria@example.com.br")
            page.fill("#id_phone", "1234")
            page.select_option("#id_option", "pac")
            page.fill("#id_postal_code", "20040-002")
            page.fill("#id_street", "Av. Paulista")
            page.fill("#id_city", "São Paulo")
            page.fill("#id_state", "SP")
            page.select_option("#id_paid_method", "dinheiro")
            page.click("input[name=_submit]")
            expect(page.get_by_test_id("manual-order-errors")).to_have_text("Corrija os 4 erros abaixo.")
            expect(page.locator("#id_phone_error")).to_contain_text("(11) 98765-4321")
            expect(page.locator("#id_postal_code_error")).to_have_text("Este CEP é de RJ, não de SP.")
            expect(page.locator("#id_number_error")).to_have_text("Obrigatório para envio.")
            expect(page.locator("#id_paid_reason_error")).to_contain_text("Conte o motivo")
            # the lines typed are still there, with their total, and the right sections still shown
            expect(page.locator("#id_sku_5")).to_be_visible()
            expect(page.get_by_test_id("items-total")).to_have_text("R$ 245,80")
            expect(page.locator("#group-delivery-shipping")).to_be_visible()
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            if width == 1280:
                # in English the amounts are written the English way (CLDR), as the server writes them
                page.context.add_cookies([{"name": "django_language", "value": "en", "url": live_server.url}])
                page.goto(f"{live_server.url}/admin/venda-manual/")
                expect(page.get_by_test_id("items-total")).to_have_text("R$0.00")
                page.fill("#id_sku_0", "CANECA-4")
                page.fill("#id_qty_0", "40")
                expect(page.get_by_test_id("line-total-0")).to_have_text("R$34.00 × 40 = R$1,360.00")
                expect(page.get_by_test_id("items-total")).to_have_text("R$1,360.00")
        finally:
            browser.close()
    assert Order.objects.count() == 0
