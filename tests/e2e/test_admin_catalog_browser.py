"""A real browser: staff creates a product with two photos and two variants, prices typed "35,90"."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from PIL import Image

from shop.models import Category, Product
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login


def _jpeg(path: str, colour: str) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (640, 480), colour).save(buffer, format="JPEG")
    with open(path, "wb") as handle:
        handle.write(buffer.getvalue())
    return path


@pytest.mark.e2e
@needs_chromium
def test_staff_creates_product_with_photos_and_prices_in_reais(live_server, transactional_db, tmp_path) -> None:
    from playwright.sync_api import expect, sync_playwright

    Category.objects.create(name="Camisetas", slug="camisetas")
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    front, back = _jpeg(str(tmp_path / "frente.jpg"), "red"), _jpeg(str(tmp_path / "costas.jpg"), "blue")

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            staff_login(page, live_server.url, "/admin/shop/product/add/")
            page.fill("#id_title", "Camiseta Caju")
            page.select_option("#id_category", label="Camisetas")
            for i, (sku, price, size) in enumerate([("CAJU-P", "35,90", "P"), ("CAJU-M", "R$ 35,90", "M")]):
                page.click("#variants-group .add-row a")
                page.fill(f"#id_variants-{i}-sku", sku)
                page.fill(f"#id_variants-{i}-price", price)
                page.fill(f"#id_variants-{i}-stock", "4")
                page.fill(f"#id_variants-{i}-options_0", "tamanho")
                page.fill(f"#id_variants-{i}-options_1", size)
            page.set_input_files("#id_images-0-image", front)
            page.fill("#id_images-0-alt_text", "Frente da camiseta")
            page.click("#images-group .add-row a")
            page.set_input_files("#id_images-1-image", back)
            page.fill("#id_images-1-alt_text", "Costas da camiseta")
            page.fill("#id_images-1-position", "1")
            page.click("input[name=_save]")
            expect(page.locator("ul.messagelist")).to_contain_text("Camiseta Caju")
            # no NCM typed: the merchant is told its orders' NF-e will wait for it
            expect(page.locator("ul.messagelist li.warning")).to_contain_text("está sem NCM")
            expect(page.locator("td.field-price_display").first).to_have_text("R$ 35,90")
            page.click("#result_list a:text-is('Camiseta Caju')")
            expect(page.locator("#id_variants-0-price")).to_have_value("35,90")
            previews = page.locator("td.field-preview img")
            expect(previews).to_have_count(2)
            # the thumbnails are real images the browser could load from MEDIA_URL
            widths = previews.evaluate_all("els => els.map(e => e.naturalWidth)")
            assert widths == [480, 480]
        finally:
            browser.close()

    product = Product.objects.get(title="Camiseta Caju")
    assert sorted(product.variants.values_list("sku", "price", "options")) == [
        ("CAJU-M", 3590, {"tamanho": "M"}),
        ("CAJU-P", 3590, {"tamanho": "P"}),
    ]
    assert [(p.alt_text, p.is_main) for p in product.images.all()] == [
        ("Frente da camiseta", True),
        ("Costas da camiseta", False),
    ]
