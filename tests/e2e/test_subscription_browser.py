"""Issue 38 in a real browser at 360 px (the README's demo path): a newcomer subscribes to the coffee club from
the product page, presses "Autorizar no sandbox", then "Recusar (sem saldo)" and "Pagar este ciclo no sandbox"
(the retry), and the first cycle is an order linked from the subscription's page; no page scrolls sideways."""

from __future__ import annotations

import pytest

from orders.models import Order
from shop.demo.seed import seed_catalog
from shop.models import SubscriptionPlan, Variant
from tests.shop.test_checkout_browser import CHROMIUM, IN_CI, LAUNCH_ARGS, off_loop

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]


def test_a_newcomer_subscribes_authorizes_and_pays_the_first_cycle_at_360px(
    live_server, transactional_db, settings
) -> None:
    from playwright.sync_api import expect, sync_playwright

    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    settings.BCP_PUBLIC_URL = live_server.url  # the sandbox delivers its signed notices in-process
    seed_catalog()
    variant = Variant.objects.get(sku="SKU-CAFE-500G")
    Variant.objects.filter(pk=variant.pk).update(stock=10)
    SubscriptionPlan.objects.create(variant=variant, cycle="monthly", price=3990)
    product_url = f"{live_server.url}/produtos/{variant.product.slug}/"

    def no_sideways_scroll(page) -> None:
        assert page.evaluate("document.documentElement.scrollWidth") <= 360, page.url

    def thumb_sized_fields(page) -> None:
        """Every field a thumb can hit and styled like the checkout's (QA walk: the subscribe page had no form styles,
        21 px tall inputs beside their labels and an error in plain text)."""
        heights = page.eval_on_selector_all(
            "form input:not([type=hidden]):not([type=checkbox])",
            "inputs => inputs.filter(i => i.offsetParent).map(i => [i.id, i.getBoundingClientRect().height])",
        )
        assert heights and [(name, height) for name, height in heights if height < 40] == [], page.url

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 800})
            page.goto(product_url)
            page.get_by_test_id("subscribe-link").click()
            page.wait_for_url("**/assinar/**")  # measured on the subscribe page, not mid-navigation
            no_sideways_scroll(page)
            thumb_sized_fields(page)
            # Pressed empty, the first field says what is missing, in the checkout's error colour.
            page.get_by_test_id("subscribe-submit").click()
            expect(page.get_by_test_id("error-buyer_name")).to_have_css("color", "rgb(179, 38, 30)")
            # every empty field says so at once (not one per submit), and the page opens focused on the first
            expect(page.get_by_test_id("error-buyer_email")).to_be_visible()
            expect(page.get_by_test_id("error-street")).to_be_visible()
            expect(page.locator("#sub-buyer_name")).to_be_focused()
            for name, value in {
                "buyer_name": "Fulana de Tal", "buyer_tax_id": "529.982.247-25", "buyer_email": "fulana@example.com.br",
                "postal_code": "01310-100", "street": "Avenida Paulista", "number": "1000",
                "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP",
            }.items():  # fmt: skip
                page.fill(f"#sub-{name}", value)
            page.get_by_test_id("subscribe-submit").click()
            expect(page.get_by_test_id("subscription-status")).to_have_text("Aguardando autorização")
            no_sideways_scroll(page)
            page.get_by_test_id("sandbox-authorize").click()
            expect(page.get_by_test_id("subscription-status")).to_have_text("Ativa")
            expect(page.get_by_test_id("next-charge")).to_contain_text("R$ 39,90")
            no_sideways_scroll(page)
            thumb_sized_fields(page)  # the address change form
            # The bank refuses the first attempt (no funds): the page names the retry's day, and the retry is paid.
            # QA walk: it said "Nova tentativa" with no day and offered no way to pay the retry in the sandbox.
            page.get_by_test_id("sandbox-cobr-fail").click()
            expect(page.get_by_test_id("next-charge")).to_contain_text("Nova tentativa · pelo Pix Automático em ")
            no_sideways_scroll(page)
            page.get_by_test_id("sandbox-cobr-pay").click()
            order = off_loop(lambda: Order.objects.get())
            expect(page.get_by_test_id("cycles")).to_contain_text(f"pedido #{order.number}")
            heading = page.get_by_test_id("subscription-heading")
            expect(heading).to_have_text(f"{variant.product.title} — R$ 39,90 por mês · Ativa")
            no_sideways_scroll(page)
            # Cancelling asks once, on the same page and without JavaScript, naming the refund (CDC art. 49); the
            # answer opens at the question.
            subscription_url = page.url.split("?")[0]
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 800}, java_script_enabled=False)
            page.goto(subscription_url)
            page.get_by_test_id("cancel").click()
            assert page.url.endswith("#cancelar")
            expect(page.get_by_test_id("cancel-confirm")).to_be_in_viewport()
            expect(page.get_by_test_id("cancel-consequence")).to_contain_text(
                f"Você recebe de volta R$ 39,90 do primeiro pedido (#{order.number})"
            )
            expect(page.get_by_test_id("subscription-status")).to_have_text("Ativa")
            no_sideways_scroll(page)
            page.get_by_test_id("cancel-confirm").click()
            expect(page.get_by_test_id("subscription-status")).to_have_text("Cancelada")
            expect(page.get_by_test_id("subscription-withdrawal")).to_contain_text(f"pedido #{order.number}")
            no_sideways_scroll(page)
        finally:
            browser.close()


def test_a_newcomer_subscribes_by_card_in_the_sandbox_and_the_first_cycle_is_an_order_at_360px(
    live_server, transactional_db, settings
) -> None:
    """The README's card line: the card typed into the page is tokenized in the browser (the sandbox tokenizer), the
    sandbox gateway stores it and charges the first cycle, and the subscription's page shows it active with its
    order and the card's last four digits; the card number never reaches the shop."""
    from playwright.sync_api import expect, sync_playwright

    from shop.models import Subscription

    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    settings.BCP_PUBLIC_URL = live_server.url
    seed_catalog()
    variant = Variant.objects.get(sku="SKU-CAFE-500G")
    Variant.objects.filter(pk=variant.pk).update(stock=10)
    plan = SubscriptionPlan.objects.create(variant=variant, cycle="monthly", price=3990)
    posted: list[str] = []

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 800})
            page.on("request", lambda r: posted.append(r.post_data or "") if r.method == "POST" else None)
            page.goto(f"{live_server.url}/assinar/{plan.public_id}/")
            for name, value in {
                "buyer_name": "Fulana de Tal", "buyer_tax_id": "529.982.247-25", "buyer_email": "fulana@example.com.br",
                "postal_code": "01310-100", "street": "Avenida Paulista", "number": "1000",
                "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP",
            }.items():  # fmt: skip
                page.fill(f"#sub-{name}", value)
            page.get_by_test_id("card-number").fill("4111 1111 1111 1111")
            page.get_by_test_id("card-holder").fill("FULANA DE TAL")
            page.get_by_test_id("card-expiry").fill("12/39")
            page.get_by_test_id("card-cvv").fill("123")
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            page.get_by_test_id("subscribe-card").click()
            expect(page.get_by_test_id("subscription-status")).to_have_text("Ativa")
            order = off_loop(lambda: Order.objects.get())
            expect(page.get_by_test_id("cycles")).to_contain_text(f"pedido #{order.number}")
            expect(page.get_by_test_id("subscription-card-on-file")).to_contain_text("final 1111")
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
        finally:
            browser.close()
    assert posted and not any("41111111" in b.replace("+", "").replace("%20", "") for b in posted)  # only the token
    subscription = off_loop(lambda: Subscription.objects.get())
    assert subscription.card_id.startswith("card_sbx_ok_1111_") and order.payment_type == "card"
