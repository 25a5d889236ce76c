"""A real browser in the admin (issue 33, major 2): an order paid outside the shop ("Já pago (fora da loja)") is
cancelled, and its refund, which no PSP will ever settle, is marked as given back in cash. The dashboard's
pending refunds and "Faturamento" and the buyer's page follow."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from orders.models import Adjustment, Order, OrderEvent
from orders.services import order_place_from_checkout
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login
from tests.orders.conftest import make_checkout


@pytest.mark.e2e
@needs_chromium
def test_staff_cancel_an_offline_order_and_mark_its_refund_as_given_back(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    order = order_place_from_checkout(
        checkout=make_checkout(lines=[("CAF", 5000, 1)], freight=0, payment_type="manual")
    )
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            staff_login(page, live_server.url)
            expect(page.locator("[data-testid=sales-1] [data-role=revenue]")).to_have_text("R$ 50,00")
            page.goto(f"{live_server.url}/admin/orders/order/{order.pk}/change/")
            page.click("a.orders-action:has-text('Cancelar pedido')")
            page.fill("#id_reason", "Cliente desistiu pelo WhatsApp")
            page.check("#id_confirm")
            page.click("input[name=_submit]")
            expect(page.locator("ul.messagelist")).to_contain_text("Pedido cancelado.")
            # the dashboard: nothing sold today, one refund to give back
            page.goto(f"{live_server.url}/admin/")
            expect(page.locator("[data-testid=sales-1] [data-role=revenue]")).to_have_text("R$ 0,00")
            expect(page.locator("[data-testid=counter-refunds_pending] [data-role=value]")).to_have_text("1")
            page.click("[data-testid=counter-refunds_pending]")
            page.click(f"text=#{order.number}")
            # the order's Valores say who pays it back (QA walk: staff waited for a refund nobody would send),
            # and the words fit a phone
            expect(page.locator(".money-offline-note")).to_contain_text("Pago fora da loja: a loja devolve R$ 50,00")
            page.set_viewport_size({"width": 360, "height": 800})
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            page.set_viewport_size({"width": 1280, "height": 800})
            page.click("a.orders-action:has-text('Marcar como reembolsado (fora da loja)')")
            page.check("input[name=means][value=dinheiro]")
            page.fill("#id_note", "Devolvido no balcão, recibo 17")
            page.click("input[name=_submit]")
            expect(page.locator("ul.messagelist")).to_contain_text(
                "Reembolso de R$ 50,00 registrado como feito pela loja."
            )
            expect(page.locator("a.orders-action:has-text('Marcar como reembolsado')")).to_have_count(0)
            page.goto(f"{live_server.url}/admin/")
            expect(page.locator("[data-testid=counter-refunds_pending] [data-role=value]")).to_have_text("0")
            # the buyer's page no longer says "em andamento"
            page.goto(f"{live_server.url}/orders/{order.permalink_token}")
            expect(page.get_by_test_id("order-closed")).to_contain_text(
                "Reembolso de R$ 50,00 concluído: a loja devolveu o valor combinado com você."
            )
            expect(page.get_by_test_id("order-closed")).not_to_contain_text("em andamento")
        finally:
            browser.close()
    order = Order.objects.get(pk=order.pk)
    assert (order.status, order.payment_status, order.refunded_amount) == ("canceled", "refunded", 5000)
    assert Adjustment.objects.get(order=order, type="refund").status == "completed"
    assert list(OrderEvent.objects.filter(order=order, kind="refund_completed").values_list("message", flat=True)) == [
        "Reembolso de R$ 50,00 feito pela loja (dinheiro)."
    ]
