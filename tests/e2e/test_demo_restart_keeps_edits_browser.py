"""A real browser (issue 33, major 3): the merchant edits the demo's coupon, the PAC method and a pickup location in
the admin, the demo is started again (`make run` runs `seed_demo` on every start), and the edits are still there."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from shop.models import Coupon, PickupLocation, ShippingMethod, ShippingRate
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login


def _seed() -> None:
    call_command("seed_demo", stdout=StringIO())


@pytest.mark.e2e
@needs_chromium
def test_the_merchants_edits_survive_a_demo_restart(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    _seed()
    coupon = Coupon.objects.get(code="BEMVINDO10")
    pac = ShippingMethod.objects.get(code="pac")
    paulista = PickupLocation.objects.get(name="Loja Paulista")
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            staff_login(page, live_server.url, f"/admin/shop/coupon/{coupon.pk}/change/")
            page.fill("#id_percent", "15")
            page.click("input[name=_save]")
            expect(page.locator("ul.messagelist")).to_contain_text("BEMVINDO10")
            page.goto(f"{live_server.url}/admin/shop/shippingmethod/{pac.pk}/change/")
            page.fill("#id_title", "PAC Econômico")
            page.click("input[name=_save]")
            expect(page.locator("ul.messagelist")).to_contain_text("PAC Econômico")
            page.goto(f"{live_server.url}/admin/shop/pickuplocation/{paulista.pk}/change/")
            page.fill("#id_opening_hours", "Seg a Sex 10h–18h")
            page.click("input[name=_save]")
            expect(page.locator("ul.messagelist")).to_contain_text("Loja Paulista")

            with ThreadPoolExecutor(1) as pool:  # the restart; Playwright's loop runs in this thread
                pool.submit(_seed).result()

            page.goto(f"{live_server.url}/admin/shop/coupon/{coupon.pk}/change/")
            expect(page.locator("#id_percent")).to_have_value("15")
            page.goto(f"{live_server.url}/admin/shop/shippingmethod/{pac.pk}/change/")
            expect(page.locator("#id_title")).to_have_value("PAC Econômico")
            page.goto(f"{live_server.url}/admin/shop/pickuplocation/{paulista.pk}/change/")
            expect(page.locator("#id_opening_hours")).to_have_value("Seg a Sex 10h–18h")
        finally:
            browser.close()
    assert ShippingRate.objects.filter(method__code="pac").count() == 27  # not deleted and written again
