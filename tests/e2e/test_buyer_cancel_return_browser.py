"""The buyer cancels one order and asks to return another from the order page, in a real browser on a 360 px
phone (issue 35): the forms fit the screen (no horizontal scroll), the answers are in Portuguese, and the
requests reach the same services as the agents' order_actions extension."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orders.models import Order, ReturnRequest
from orders.services import order_mark_delivered, order_place_from_checkout, order_ship
from tests.e2e.admin_browser import launch, needs_chromium
from tests.orders.conftest import make_checkout

pytestmark = [pytest.mark.e2e, needs_chromium]
SCREENSHOT_DIR = os.environ.get("SCREENSHOT_DIR", "")


def _no_horizontal_scroll(page) -> None:
    width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner, (width, inner)


def test_buyer_cancels_and_returns_on_a_360px_phone(live_server, transactional_db, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    to_cancel = order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 1)]))
    to_return = order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 2), ("BONE", 2000, 1)]))
    order_ship(order_id=to_return.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=to_return.public_id)
    shots = Path(SCREENSHOT_DIR) if SCREENSHOT_DIR else tmp_path
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_context(locale="pt-BR", viewport={"width": 360, "height": 740}).new_page()
            # cancel: nothing shipped yet
            page.goto(f"{live_server.url}/orders/{to_cancel.permalink_token}")
            _no_horizontal_scroll(page)
            form = page.get_by_test_id("cancel-form")
            form.get_by_label("Motivo (opcional)").fill("Comprei o tamanho errado")
            form.get_by_label("Confirmo o cancelamento do pedido").check()
            form.get_by_test_id("cancel-submit").click()
            expect(page.locator(".flash")).to_contain_text("Pedido cancelado. O valor pago será devolvido")
            expect(page.get_by_test_id("order-status")).to_contain_text("Cancelado")
            assert page.get_by_test_id("cancel-form").count() == 0
            # return: delivered, within the 7 days of the CDC
            page.goto(f"{live_server.url}/orders/{to_return.permalink_token}")
            expect(page.get_by_test_id("return-window")).to_contain_text("7 dias")
            _no_horizontal_scroll(page)
            page.screenshot(path=str(shots / "order-return-form-360.png"), full_page=True)
            form = page.get_by_test_id("return-form")
            form.get_by_label("Quantidade de Produto CAM a devolver (até 2)").fill("1")
            form.get_by_label("Motivo", exact=True).select_option("defective")
            form.get_by_test_id("return-submit").click()
            expect(page.locator(".flash")).to_contain_text("Devolução solicitada.")
            expect(page.get_by_test_id("return-requests")).to_contain_text("Solicitada")
            expect(page.get_by_test_id("return-requests")).to_contain_text("1× Produto CAM")
            _no_horizontal_scroll(page)
            page.screenshot(path=str(shots / "order-return-requested-360.png"), full_page=True)
        finally:
            browser.close()
    assert Order.objects.get(pk=to_cancel.pk).status == "canceled"
    [request] = ReturnRequest.objects.filter(order=to_return)
    assert (request.status, request.reason_code, request.requested_by) == ("requested", "defective", "buyer")
