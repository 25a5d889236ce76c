"""A real browser on the NF-e box of the admin order page (issue 33, major 1): "Emitir novamente" really posts
(it used to sit in a form nested inside the order's form, which the browser drops), and a blocked NF-e goes by
itself when the merchant fills in the product's NCM. The sandbox fiscal provider authorizes the note (eager
tasks in tests)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from django.contrib.auth.models import User

from fiscal.models import FiscalDocument
from orders.models import Order
from shop.checkout.services import checkout_complete, checkout_create
from shop.checkout.types import CompleteInput, LineInput, PaymentInput
from shop.models import Product
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login
from tests.shop.checkout_factories import BUYER, full_input, make_shipping, make_variant
from tests.shop.test_completion import CARD_OK
from tests.shop.test_fiscal_lifecycle import fiscal_store, kinds  # noqa: F401


def blocked_order() -> Order:
    """A paid order whose product has no NCM; committed, so its outbox row already asked for the NF-e."""
    make_variant(price=4290, stock=10, title="Café Especial 500 g", ncm="")
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 2), option="pac"), buyer=replace(BUYER, tax_id="52998224725"))
    checkout = checkout_create(data=data).checkout
    result = checkout_complete(
        checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(CARD_OK,)))
    )
    assert result.checkout.status == "completed", result.messages
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert FiscalDocument.objects.get(order_ref=order.public_id).status == "rejected"
    return order


REASON = "Dados fiscais incompletos: produto “Café Especial 500 g” (SKU SKU-CAFE-500G): NCM não informado"


@pytest.mark.e2e
@needs_chromium
def test_staff_press_emitir_novamente_and_the_nfe_is_issued(live_server, transactional_db, fiscal_store) -> None:  # noqa: F811
    from playwright.sync_api import expect, sync_playwright

    order = blocked_order()
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            staff_login(page, live_server.url, f"/admin/orders/order/{order.pk}/change/")
            expect(page.get_by_test_id("fiscal-status")).to_have_text("Bloqueada (dados faltando)")
            # pressed before the fix: the shop answers that the data is still missing
            page.get_by_test_id("fiscal-reissue").click()
            expect(page.locator("ul.messagelist")).to_contain_text(f"NF-e não emitida. {REASON}")
            # fixed outside the admin (nothing retries by itself); in a thread: Playwright's loop runs in this one
            with ThreadPoolExecutor(1) as pool:
                pool.submit(Product.objects.update, ncm="09012100").result()
            page.get_by_test_id("fiscal-reissue").click()
            expect(page.locator("ul.messagelist")).to_contain_text("Emissão da NF-e solicitada.")
            expect(page.get_by_test_id("fiscal-status")).to_have_text("Autorizada")
            expect(page.get_by_test_id("fiscal-reissue")).to_have_count(0)
        finally:
            browser.close()
    document = FiscalDocument.objects.get(order_ref=order.public_id)
    assert (document.status, document.attempt) == ("authorized", 1)
    assert kinds(order) == ["fiscal_blocked", "fiscal_blocked", "fiscal_requested", "fiscal_authorized"]


@pytest.mark.e2e
@needs_chromium
def test_saving_the_product_with_its_ncm_issues_the_blocked_nfe(live_server, transactional_db, fiscal_store) -> None:  # noqa: F811
    from playwright.sync_api import expect, sync_playwright

    order = blocked_order()
    product = Product.objects.get()
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            staff_login(page, live_server.url, f"/admin/shop/product/{product.pk}/change/")
            page.fill("#id_ncm", "0901.21.00")
            page.click("input[name=_save]")
            expect(page.locator("ul.messagelist")).to_contain_text("Alterações salvas: produto “Café Especial 500 g”.")
            page.goto(f"{live_server.url}/admin/orders/order/{order.pk}/change/")
            expect(page.get_by_test_id("fiscal-status")).to_have_text("Autorizada")
        finally:
            browser.close()
    assert kinds(order) == ["fiscal_blocked", "fiscal_requested", "fiscal_authorized"]


@pytest.mark.e2e
@needs_chromium
def test_on_a_phone_staff_cancel_and_reissue_the_nfe_with_the_corrected_cpf(
    live_server,
    transactional_db,
    fiscal_store,  # noqa: F811
) -> None:
    """360 px wide: the justification field and the button fit (no sideways scroll), the button posts the order's
    form, the cancel and the new note run in the fiscal jobs (eager here), and both notes are listed."""
    from playwright.sync_api import expect, sync_playwright

    from orders.services import order_buyer_tax_id_set

    make_variant(price=4290, stock=10, title="Café Especial 500 g", ncm="09012100")
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 1), option="pac"), buyer=replace(BUYER, tax_id="52998224725"))
    checkout = checkout_create(data=data).checkout
    checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(CARD_OK,))))
    order = Order.objects.get(checkout_id=checkout.public_id)
    first = FiscalDocument.objects.get(order_ref=order.public_id)
    assert first.status == "authorized"
    order_buyer_tax_id_set(order_id=order.public_id, tax_id="390.533.447-05", actor="lojista")
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 800})
            staff_login(page, live_server.url, f"/admin/orders/order/{order.pk}/change/")
            page.get_by_test_id("fiscal-justification").fill("CPF do destinatário informado errado")
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            page.get_by_test_id("fiscal-cancel-reissue-button").click()
            expect(page.locator("ul.messagelist")).to_contain_text(
                f"Cancelamento da NF-e nº {first.number} solicitado."
            )
            expect(page.get_by_test_id("fiscal-status")).to_have_text("Autorizada")
            expect(page.get_by_test_id("fiscal-earlier")).to_contain_text(
                f"Nota anterior: NF-e nº {first.number} (Cancelada)"
            )
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
        finally:
            browser.close()
    second = FiscalDocument.objects.get(order_ref=order.public_id, sequence=2)
    assert second.status == "authorized" and second.number == first.number + 1
