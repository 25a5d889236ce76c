"""A real browser on the checkout: typing the CEP fills street, bairro, city and UF without a reload (the fake
ViaCEP on loopback answers), overwriting a stale UF but never what the buyer typed himself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.test import Client

from shop.checkout.fulfillment import cep_cache_forget
from tests.shop.checkout_factories import make_shipping, make_variant
from tests.shop.fake_cep import FOUND_CEP, NOT_FOUND_CEP, RIO_CEP, fake_cep_provider

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
SCREENSHOT_DIR = os.environ.get("SCREENSHOT_DIR", "")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]


def test_typing_the_cep_fills_the_address_without_reload(live_server, transactional_db, settings) -> None:
    from playwright.sync_api import expect, sync_playwright

    # given a cart with a checkout, and the CEP provider (fake ViaCEP) on loopback
    make_variant(price=4290, stock=10)
    make_shipping()
    shopper = Client()
    shopper.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    checkout_id = shopper.get("/checkout/")["Location"].rsplit("/", 1)[1]
    with fake_cep_provider() as provider:
        settings.CEP_PROVIDER_URL = provider.url
        for cep in (FOUND_CEP, RIO_CEP, NOT_FOUND_CEP):
            cep_cache_forget(cep)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
                try:
                    context = browser.new_context(locale="pt-BR", viewport={"width": 390, "height": 844})
                    cookie = shopper.cookies["sessionid"].value
                    context.add_cookies([{"name": "sessionid", "value": cookie, "url": live_server.url}])
                    page = context.new_page()
                    console_errors: list[str] = []
                    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
                    page.goto(f"{live_server.url}/checkout/{checkout_id}")
                    page.evaluate("window.__same_page = true")  # gone if the page reloads
                    # when the buyer types a São Paulo CEP
                    page.fill("#id_cep", "01310-100")
                    # then street, bairro, city and UF are filled in place
                    expect(page.locator("#id_street")).to_have_value("Avenida Paulista")
                    expect(page.locator("#id_neighborhood")).to_have_value("Bela Vista")
                    expect(page.locator("#id_city")).to_have_value("São Paulo")
                    expect(page.locator("#id_uf")).to_have_value("SP")
                    # when the buyer types his own street and then a Rio CEP
                    page.fill("#id_street", "Rua Augusta")
                    page.fill("#id_cep", "20040002")
                    # then the UF and city follow the new CEP, his street stays
                    expect(page.locator("#id_uf")).to_have_value("RJ")
                    expect(page.locator("#id_city")).to_have_value("Rio de Janeiro")
                    expect(page.locator("#id_neighborhood")).to_have_value("Centro")
                    expect(page.locator("#id_street")).to_have_value("Rua Augusta")
                    # when the CEP does not exist, the buyer is told so next to the field
                    page.fill("#id_cep", "99999-999")
                    expect(page.get_by_test_id("cep-status")).to_have_text(
                        "CEP não encontrado: confira os números ou preencha o endereço."
                    )
                    if SCREENSHOT_DIR:
                        page.screenshot(path=f"{SCREENSHOT_DIR}/checkout-cep-390.png", full_page=True)
                    assert page.evaluate("window.__same_page") is True
                    assert console_errors == []  # the unknown CEP was a 404 ("Failed to load resource")
                finally:
                    browser.close()
        finally:
            for cep in (FOUND_CEP, RIO_CEP, NOT_FOUND_CEP):
                cep_cache_forget(cep)
    assert provider.hits[FOUND_CEP] == 1 and provider.hits[RIO_CEP] == 1
