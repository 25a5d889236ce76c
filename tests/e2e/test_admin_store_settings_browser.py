"""A real browser: staff edit the store settings in the admin and the storefront shows them at once (issue 15):
trade and legal name, CNPJ (alphanumeric), contact, WhatsApp and a policy page; a bad CNPJ is refused on its
field in Portuguese and nothing is saved."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from shop.models import StoreSettings
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login


@pytest.mark.e2e
@needs_chromium
def test_staff_edit_the_store_settings_and_the_storefront_follows(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_context(locale="pt-BR").new_page()
            staff_login(page, live_server.url)
            # the list opens the one row directly
            page.goto(f"{live_server.url}/admin/shop/storesettings/")
            expect(page.locator("h1")).to_contain_text("dados da loja")
            page.fill("#id_trade_name", "Caju Café")
            page.fill("#id_legal_name", "Caju Comércio de Cafés Ltda")
            # a wrong check digit: refused on the field, in Portuguese, nothing saved
            page.fill("#id_cnpj", "12.ABC.345/01DE-36")
            page.click("input[name=_save]")
            expect(page.locator(".field-cnpj .errorlist")).to_contain_text("CNPJ inválido")
            storefront = page.context.new_page()  # nothing was saved: the shop still has its old name
            storefront.goto(f"{live_server.url}/")
            expect(storefront.locator(".brand")).to_contain_text("Loja Exemplo")
            storefront.close()
            page.fill("#id_cnpj", "12.ABC.345/01DE-35")
            page.fill("#id_contact_email", "contato@caju.com.br")
            page.fill("#id_whatsapp", "(11) 98765-4321")
            page.fill("#id_returns_text", "Troca em 30 dias.\n\nDevolução grátis.")
            page.click("input[name=_save]")
            expect(page.locator(".messagelist")).to_contain_text("Caju Café")
            # the storefront shows the new identity at once (the cached row is dropped on save)
            page.goto(f"{live_server.url}/")
            expect(page.locator(".brand")).to_contain_text("Caju Café")
            footer = page.locator("footer")
            expect(footer).to_contain_text("Caju Comércio de Cafés Ltda · CNPJ 12.ABC.345/01DE-35")
            expect(footer).to_contain_text("contato@caju.com.br")
            expect(footer.get_by_role("link", name="WhatsApp (11) 98765-4321")).to_have_attribute(
                "href", "https://wa.me/5511987654321"
            )
            footer.get_by_role("link", name="Trocas e devoluções").click()
            expect(page.locator("main")).to_contain_text("Troca em 30 dias.")
            expect(page.locator("main")).to_contain_text("Devolução grátis.")
            # and the admin header names the shop
            page.goto(f"{live_server.url}/admin/")
            expect(page.locator("#site-name")).to_have_text("Caju Café — administração")
        finally:
            browser.close()
    row = StoreSettings.objects.get()
    assert (row.trade_name, row.cnpj, row.whatsapp) == ("Caju Café", "12.ABC.345/01DE-35", "(11) 98765-4321")
