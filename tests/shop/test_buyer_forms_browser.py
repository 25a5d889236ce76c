"""What a walk through the shop as a buyer found, in a real browser (Playwright driving Debian's chromium).

Found walking the shop as a buyer: `/pedido` and the order page sent `Referrer-Policy: no-referrer`, so
chromium posted their forms (order lookup, the footer's language switch) with `Origin: null`, and Django's
CSRF check answered with its own half-English 403 page. The Django test client sends no Origin header, so
only a browser shows it. Also: a capped quantity is a warning, not a success; the total's rule is unbroken.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core import mail
from django.test import Client

from orders.models import Order
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_latest_for_reference
from tests.shop.test_phone_layout_browser import (
    BUYER_FORM,
    CHROMIUM,
    LAUNCH_ARGS,
    _overflow,
    _ready_checkout,
    pytestmark,  # noqa: F401 - the same e2e mark and chromium guard
    seed_demo,
)


@contextmanager
def _phone(session: Client | None = None, base_url: str = "") -> Iterator[Any]:
    """A 360 px pt-BR page in chromium, optionally with a test client's session (its cart and checkouts)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(locale="pt-BR", viewport={"width": 360, "height": 780})
            if session is not None:
                cookie = {"name": "sessionid", "value": session.cookies["sessionid"].value, "url": base_url}
                context.add_cookies([cookie])
            yield context.new_page()
        finally:
            browser.close()


def _paid_order() -> Order:
    buyer = Client()
    checkout_id = _ready_checkout(buyer)
    assert buyer.post(f"/checkout/{checkout_id}", {"action": "pay", **BUYER_FORM}).status_code == 302
    pay(txid=pix_charge_latest_for_reference(checkout_id).txid, options=PayOptions())
    return Order.objects.get(checkout_id=checkout_id)


def test_order_lookup_form_sends_the_link_from_a_real_browser(live_server, transactional_db) -> None:
    from playwright.sync_api import expect

    # given a paid order (database work before the browser's event loop starts)
    seed_demo()
    order = _paid_order()
    mail.outbox.clear()
    with _phone() as page:
        page.goto(f"{live_server.url}/pedido")
        # when the buyer submits the form empty, then each field says what is missing (no 403)
        with page.expect_navigation() as empty:
            page.get_by_role("button", name="Enviar o link").click()
        assert empty.value.status == 400
        expect(page.get_by_test_id("error-email")).to_have_text("Informe o e-mail usado na compra.")
        # when the buyer types the order's e-mail and number
        page.get_by_label("E-mail usado na compra").fill(order.buyer_email)
        page.get_by_label("Número do pedido").fill(str(order.number))
        with page.expect_navigation() as sent:
            page.get_by_role("button", name="Enviar o link").click()
        # then the page answers (not Django's CSRF page) and the link goes to the order's e-mail
        assert sent.value.status == 200
        expect(page.get_by_test_id("lookup-sent")).to_be_visible()
        scroll_width, inner_width, culprits = _overflow(page)
        assert scroll_width <= inner_width, culprits
    assert [m.to for m in mail.outbox] == [[order.buyer_email]]
    assert order.permalink_url in mail.outbox[0].body


def test_language_switch_on_the_order_page_works_in_a_real_browser(live_server, transactional_db) -> None:
    from playwright.sync_api import expect

    seed_demo()
    path = f"/orders/{_paid_order().permalink_token}"
    with _phone() as page:
        page.goto(f"{live_server.url}{path}")
        expect(page.get_by_test_id("order-status")).to_contain_text("Pedido recebido")
        # when the buyer picks English in the footer's switch
        page.select_option("#lang-select", "en")
        with page.expect_navigation() as switched:
            page.click(".lang-switch button")
        # then the same order page comes back in English (it was a 403 "Proibido")
        assert switched.value.status == 200
        assert page.url == f"{live_server.url}{path}"
        expect(page.get_by_test_id("order-status")).to_contain_text("Order received")


def test_quantity_above_stock_is_a_warning_not_a_success(live_server, transactional_db) -> None:
    """Walk-through: "Só temos 8 unidades…; a quantidade no carrinho foi ajustada" showed in the green of a success."""
    from playwright.sync_api import expect

    seed_demo()
    with _phone() as page:
        page.goto(f"{live_server.url}/produtos/camiseta-basica-preta/")
        page.fill("#qty", "1")
        page.click("[data-role=add-button]")
        success = page.locator(".flash .flash-success")
        expect(success).to_contain_text("adicionado ao carrinho")
        success_colour = success.evaluate("el => getComputedStyle(el).backgroundColor")
        # when the buyer asks for more Pixel phones than the 8 in stock
        page.goto(f"{live_server.url}/produtos/pixel-10-pro/")
        page.fill("#qty", "20")
        page.click("[data-role=add-button]")
        # then the cart says so in a warning's colours, announced to screen readers
        warning = page.locator(".flash .flash-warning")
        expect(warning).to_have_text("Só temos 8 unidades de Pixel 10 Pro; a quantidade no carrinho foi ajustada.")
        assert warning.evaluate("el => getComputedStyle(el).backgroundColor") not in (success_colour, "")
        expect(page.locator(".flash")).to_have_attribute("role", "status")
        expect(page.locator("tr[data-sku=PIXEL-10-PRO] input[name=quantity]")).to_have_value("8")


def test_the_totals_rule_runs_unbroken_under_the_total(live_server, transactional_db) -> None:
    """Walk-through: the line above "Estimativa"/"Total" had a 12 px break between the label and the amount."""
    seed_demo()
    shopper = Client()
    checkout_id = _ready_checkout(shopper)
    with _phone(shopper, live_server.url) as page:
        for path in ("/carrinho/", f"/checkout/{checkout_id}"):
            page.goto(f"{live_server.url}{path}")
            label, amount = (page.locator(f".totals {cell}.total").bounding_box() for cell in ("dt", "dd"))
            assert abs(label["x"] + label["width"] - amount["x"]) < 0.5, path


def test_a_second_wrong_coupon_keeps_the_applied_one_on_a_phone(live_server, transactional_db) -> None:
    """Walk-through: typing "FAKE" after "BEMVINDO10" replaced it; only "Cupom 'FAKE' não encontrado." remained."""
    from playwright.sync_api import expect

    seed_demo()
    shopper = Client()
    checkout_id = _ready_checkout(shopper)
    with _phone(shopper, live_server.url) as page:
        page.goto(f"{live_server.url}/checkout/{checkout_id}")
        page.fill("#id_coupon", "BEMVINDO10")
        page.get_by_test_id("apply-coupon").click()
        expect(page.get_by_test_id("applied-coupon")).to_have_text(["BEMVINDO10"])
        expect(page.locator("#id_coupon")).to_have_value("")
        page.fill("#id_coupon", "FAKE")
        page.get_by_test_id("apply-coupon").click()
        expect(page.get_by_test_id("error-coupon")).to_have_text("O cupom FAKE não foi encontrado.")
        expect(page.get_by_test_id("applied-coupon")).to_have_text(["BEMVINDO10"])
        scroll_width, inner_width, culprits = _overflow(page)
        assert scroll_width <= inner_width, culprits
        page.get_by_role("button", name="remover").click()
        expect(page.get_by_test_id("applied-coupons")).to_have_count(0)


def test_an_uneven_installment_plan_reads_exactly_on_the_product_page(live_server, transactional_db) -> None:
    """Walk-through: "ou 11x de R$ 5,50 sem juros" for R$ 59,90 (60,50 in all) read as hidden interest."""
    from playwright.sync_api import expect

    seed_demo()
    with _phone() as page:
        page.goto(f"{live_server.url}/produtos/camiseta-basica-preta/")
        expect(page.get_by_test_id("card-installments")).to_have_text(
            "ou 11x sem juros: 1ª de R$ 5,50 e 10x de R$ 5,44"
        )
        scroll_width, inner_width, culprits = _overflow(page)
        assert scroll_width <= inner_width, culprits
