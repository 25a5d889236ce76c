"""A real browser in the admin: a return of a Pix-paid, shipped order with restock and a Pix devolução.

Issue 15 §6: staff register the return (items, reason, condition), put the units back on sale and send
the money back through the PSP (the sandbox), and the buyer sees it on the permalink page.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from orders.models import Adjustment, Order
from orders.services import order_mark_delivered, order_ship
from payments.models import PixRefund
from shop.models import Variant
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login


@pytest.mark.e2e
@pytest.mark.postgres
@needs_chromium
def test_return_with_restock_and_pix_refund_in_the_browser(live_server, transactional_db, settings) -> None:
    from playwright.sync_api import expect, sync_playwright

    from payments.sandbox.services import PayOptions, pay
    from payments.selectors import pix_charge_latest_for_reference
    from tests.shop.test_completion import PIX, complete, ready_checkout

    # given a Pix order for 2 coffees, paid, shipped and delivered (stock 10 → 8)
    settings.BCP_PIX_SANDBOX = True
    checkout = ready_checkout(quantity=2)
    complete(checkout, PIX)
    pay(txid=pix_charge_latest_for_reference(checkout.public_id).txid, options=PayOptions())
    order = Order.objects.get(checkout_id=checkout.public_id)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)  # a return is of what reached the buyer
    line = order.lines.get()
    stock_before = Variant.objects.get(sku=line.sku).stock
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])

    # when staff register the return of one unit, as new, back to stock, with R$ 42,90 back by Pix
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            staff_login(page, live_server.url, f"/admin/orders/order/{order.pk}/change/")
            page.click("a.orders-action:has-text('Registrar devolução')")
            page.fill(f"#id_qty_{line.public_id}", "1")
            # the refund follows the units marked: what was paid for one (QA walk: the field stayed empty)
            expect(page.locator("#id_refund_amount")).to_have_value("42,90")
            page.fill("#id_reason", "Tamanho errado")
            page.select_option("#id_condition", "novo")
            page.check("#id_restock")
            page.fill("#id_refund_amount", "42,90")
            page.check("#id_confirm")  # money back: the tick, as "Reembolsar" asks
            page.click("input[name=_submit]")
            expect(page.locator("ul.messagelist")).to_contain_text("Devolução registrada.")
            # and the buyer's page tells it
            page.goto(f"{live_server.url}/orders/{order.permalink_token}")
            expect(page.locator("body")).to_contain_text("Itens devolvidos")
            expect(page.locator("body")).to_contain_text("R$ 42,90")
        finally:
            browser.close()

    # then one unit is back on sale and the devolução went through the PSP, once
    assert Variant.objects.get(sku=line.sku).stock == stock_before + 1
    refund = Adjustment.objects.get(order=order, type="refund")
    assert (refund.amount, refund.status) == (-4290, "completed")
    assert list(PixRefund.objects.filter(refund_id=refund.public_id).values_list("amount", flat=True)) == [4290]
    order.refresh_from_db()
    assert (order.refunded_amount, order.payment_status) == (4290, "partially_refunded")
