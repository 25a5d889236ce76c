"""Issue 33, the product form at 1280 px in a real browser: the photos table fits (its address and delete columns
were cut), each photo row is titled by what it shows (not "produtos/prod_…/x.jpg"), the slug is explained and
filled while the title is typed."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from shop.demo.seed import seed_catalog
from shop.models import Product
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login


@pytest.mark.e2e
@needs_chromium
def test_the_product_form_fits_1280_px_and_names_photos_and_slug(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    seed_catalog()
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    product = Product.objects.get(slug="camiseta-basica-preta")
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 1280, "height": 900})
            staff_login(page, live_server.url, f"/admin/shop/product/{product.pk}/change/")
            table = page.locator("#images-group table")
            expect(table).to_be_visible()
            # the whole table is inside its box: nothing to scroll sideways, the delete column is on screen
            fits = table.evaluate("t => t.scrollWidth <= t.closest('fieldset').clientWidth")
            assert fits is True
            right = page.locator("#images-group th").last.evaluate("th => th.getBoundingClientRect().right")
            assert right <= 1280
            # the row is titled by the photo's description; the current file is a link, not a storage path
            expect(page.locator("#images-group tr.has_original p").first).to_have_text("Camiseta Básica Preta")
            expect(page.locator("#images-group")).not_to_contain_text("demo/camiseta-basica-preta.jpg")
            expect(page.locator("#images-group a:text('Abrir a foto atual')")).to_have_count(1)
            # the slug says what it is
            expect(page.locator("#id_slug_helptext")).to_contain_text("/produtos/camiseta-basica-preta/")
            # and on a new product it follows the title as it is typed
            page.goto(f"{live_server.url}/admin/shop/product/add/")
            page.locator("#id_title").press_sequentially("Caneca Açaí Grande")
            expect(page.locator("#id_slug")).to_have_value("caneca-acai-grande")
        finally:
            browser.close()
