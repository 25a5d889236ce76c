"""A real browser (Playwright driving Debian's chromium) on the storefront: variant choice without reload,
language switch, and the product list on a phone-sized screen.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shop.demo.seed import seed_catalog
from shop.models import Category, Product, Variant

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]


def test_variant_picker_updates_price_stock_and_sku_then_english(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    # given the demo catalog (database work before the browser's event loop starts)
    seed_catalog()
    url = f"{live_server.url}/produtos/camiseta-basica-preta/"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR")
            page.goto(url)
            expect(page.get_by_test_id("availability")).to_have_text("Em estoque")
            # when the buyer picks the sold-out size G
            page.click("label.option-chip:has(input[value=G])")
            # then the page says so, the button is disabled and the form carries G's SKU
            expect(page.get_by_test_id("availability")).to_have_text("Esgotado")
            expect(page.locator("[data-role=add-button]")).to_be_disabled()
            expect(page.locator("input[name=sku]")).to_have_value("CAM-BAS-PRETA-G")
            assert page.url == f"{url}?sku=CAM-BAS-PRETA-G"
            # when M is picked, it can be added again
            page.click("label.option-chip:has(input[value=M])")
            expect(page.locator("[data-role=add-button]")).to_be_enabled()
            expect(page.locator("input[name=sku]")).to_have_value("CAM-BAS-PRETA-M")
            expect(page.locator("[data-role=price]")).to_have_text("R$ 59,90")
            # and "Calcular frete" quotes the variant on screen
            expect(page.locator("[data-role=freight-variante]")).to_have_value("CAM-BAS-PRETA-M")
            # when the buyer switches the language to English
            page.select_option("#lang-select", "en")
            page.click(".lang-switch button")
            expect(page.locator("[data-role=add-button]")).to_have_text("Add to cart")
            expect(page.locator("html")).to_have_attribute("lang", "en")
        finally:
            browser.close()


def test_a_colour_missing_in_the_chosen_size_moves_the_size_to_one_it_has(live_server, transactional_db) -> None:
    """QA walk (a clothes shop): with P chosen, clicking "Rosa" (made only in M) showed "Combinação indisponível"
    beside the previous variant's price and SKU; the size now follows the colour to a variant that exists. And the
    values with no variant beside the chosen ones looked as clickable as the rest: now greyed and aria-disabled."""
    from playwright.sync_api import expect, sync_playwright

    category = Category.objects.create(name="Vestidos", slug="vestidos")
    product = Product.objects.create(title="Vestido Midi", slug="vestido-midi", category=category)
    for sku, size, colour, price in (("V-P-AZ", "P", "Azul", 18990), ("V-G-AZ", "G", "Azul", 19990),
                                     ("V-M-RS", "M", "Rosa", 17990)):  # fmt: skip
        Variant.objects.create(product=product, sku=sku, price=price, stock=2, options={"tamanho": size, "cor": colour})
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 740})
            page.goto(f"{live_server.url}/produtos/vestido-midi/?sku=V-P-AZ")
            expect(page.locator("input[name=sku]")).to_have_value("V-P-AZ")
            # the values with no variant beside P + Azul (Rosa, M) look unavailable, the others do not (QA walk: all
            # looked clickable alike)
            chip = "label.option-chip:has(input[value={}])"
            greyed = page.locator(chip.format("Rosa") + " span").evaluate("e => getComputedStyle(e).textDecorationLine")
            assert greyed == "line-through"
            for value, missing in (("Rosa", True), ("M", True), ("P", False), ("G", False), ("Azul", False)):
                radio = page.locator(f"label.option-chip input[value={value}]")
                if missing:
                    expect(radio).to_have_attribute("aria-disabled", "true")
                    expect(page.locator(chip.format(value))).to_have_class("option-chip option-missing")
                else:
                    expect(radio).not_to_have_attribute("aria-disabled", "true")
            # a greyed value still answers a click (Playwright's actionability check takes aria-disabled for disabled)
            page.click("label.option-chip:has(input[value=Rosa])", force=True)
            expect(page.locator("input[name=sku]")).to_have_value("V-M-RS")
            expect(page.locator("label.option-chip input[value=M]")).to_be_checked()
            # and the marks follow the new choice (M + Rosa: P, G and Azul have no such variant)
            for value in ("P", "G", "Azul"):
                expect(page.locator(f"label.option-chip input[value={value}]")).to_have_attribute(
                    "aria-disabled", "true"
                )
            for value in ("M", "Rosa"):
                expect(page.locator(f"label.option-chip input[value={value}]")).not_to_have_attribute(
                    "aria-disabled", "true"
                )
            expect(page.locator("[data-role=price]")).to_have_text("R$ 179,90")
            expect(page.get_by_test_id("availability")).to_have_text("Em estoque")
            expect(page.locator("[data-role=add-button]")).to_be_enabled()
            # and back to Azul, the size moves to one Azul has
            page.click("label.option-chip:has(input[value=Azul])", force=True)
            expect(page.locator("input[name=sku]")).to_have_value("V-P-AZ")
        finally:
            browser.close()


def test_phone_sized_list_folds_filters_unless_a_parameter_is_bad(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    seed_catalog()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 390, "height": 844})
            page.goto(f"{live_server.url}/produtos/")
            expect(page.locator("[data-role=filters]")).not_to_have_attribute("open", "")
            expect(page.get_by_test_id("product-card")).to_have_count(24)
            page.goto(f"{live_server.url}/produtos/?price_min=abc")
            expect(page.locator("[data-role=filters]")).to_have_attribute("open", "")
            expect(page.get_by_test_id("query-errors")).to_contain_text("price_min")
        finally:
            browser.close()
