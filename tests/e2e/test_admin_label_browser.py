"""A real browser on the label box of the admin order page (QA walk, high 1): "Comprar etiqueta" and "Cancelar
etiqueta" really post. They used to point at forms of their own (`form="label-buy-form"`) written inside the
admin's order form; the browser drops nested forms, so the buttons sent nothing. The carrier is the fake Melhor
Envio; the purchase runs after the request's commit (eager tasks in tests)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from shop.models import ShippingLabel
from tests.carriers.fake_melhorenvio import FakeMelhorEnvio
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login
from tests.shop.freight_helpers import freight_shop, melhorenvio, shirts_order  # noqa: F401 (fixtures)


@pytest.mark.e2e
@needs_chromium
def test_staff_buy_and_cancel_a_label_from_the_order_page(
    live_server,
    transactional_db,
    melhorenvio: FakeMelhorEnvio,  # noqa: F811
    django_capture_on_commit_callbacks,
) -> None:
    from playwright.sync_api import expect, sync_playwright

    order = shirts_order(django_capture_on_commit_callbacks)
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            staff_login(page, live_server.url, f"/admin/orders/order/{order.pk}/change/")
            page.get_by_test_id("label-buy").click()
            expect(page.locator("ul.messagelist")).to_contain_text("Etiqueta")
            expect(page.get_by_test_id("label-status")).to_have_text("Comprada")
            expect(page.get_by_test_id("label-cost")).to_have_text("R$ 22,00")
            # "Cancelar etiqueta" asks first (QA walk: one click cancelled a bought label); "Não, voltar" keeps it
            page.get_by_test_id("label-cancel").click()
            expect(page.get_by_test_id("label-cancel-confirmation")).to_contain_text("R$ 22,00")
            assert melhorenvio.checkouts and not any(o["status"] == "canceled" for o in melhorenvio.orders.values())
            page.get_by_role("button", name="Não, voltar").click()
            expect(page.get_by_test_id("label-status")).to_have_text("Comprada")
            page.get_by_test_id("label-cancel").click()
            page.get_by_test_id("confirm-label-cancel").click()
            expect(page.locator("ul.messagelist")).to_contain_text("Etiqueta cancelada.")
            expect(page.get_by_test_id("label-buy")).to_be_visible()
        finally:
            browser.close()
    label = ShippingLabel.objects.get(order=order)
    assert label.status == "canceled" and melhorenvio.checkouts == [label.remote_id]
    assert melhorenvio.orders[label.remote_id]["status"] == "canceled"


@pytest.mark.e2e
@needs_chromium
def test_the_address_label_to_print_fits_a_phone(
    live_server,
    transactional_db,
    freight_shop: None,  # noqa: F811
    settings,
    django_capture_on_commit_callbacks,
) -> None:
    """QA walk (a new merchant on a 360 px phone, no carrier): "Imprimir etiqueta de endereço" opened a page with no
    viewport (drawn at 980 px and shrunk) and a 10 cm label wider than the screen (horizontal scroll)."""
    from playwright.sync_api import sync_playwright

    settings.CARRIER = ""
    order = shirts_order(django_capture_on_commit_callbacks)
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 740}, is_mobile=True)
            label_path = f"/admin/frete/{order.public_id}/endereco/"
            staff_login(page, live_server.url, label_path)
            widths = page.evaluate(
                "() => [document.documentElement.clientWidth, document.documentElement.scrollWidth,"
                " Math.ceil(document.querySelector('.label').getBoundingClientRect().right)]"
            )
            assert widths[0] == 360 and widths[1] <= 360 and widths[2] <= 360, widths
            assert "CEP 20040-002" in page.get_by_test_id("label-to").inner_text()
        finally:
            browser.close()
