"""Phones first: every storefront page fits a 360 and a 390 px wide screen without horizontal scroll, the Pix
page shows amount, copy button and countdown before the QR code on a phone, and the desktop cart keeps its
prices on one line. Playwright drives Debian's chromium against the live server.

Set SCREENSHOT_DIR to keep a PNG of every page and width (for a person to look at).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client

from orders.models import Order
from orders.services import order_cancel
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_latest_for_reference
from shop.demo.checkout import seed_checkout_demo
from shop.demo.seed import seed_catalog
from shop.models import Category, Product, Variant

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
SCREENSHOT_DIR = os.environ.get("SCREENSHOT_DIR", "")
LONG_TITLE_SKU = "CAIXA-SOM-IPX7"  # "Caixa de Som Portátil à Prova d’Água", R$ 299,90: a long title and a wide price

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]

BUYER_FORM = {
    "email": "ana@example.com.br",
    "first_name": "Ana",
    "last_name": "Souza",
    "phone": "(11) 98765-4321",
    "tax_id": "529.982.247-25",
    "method": "shipping",
    "cep": "01310-100",
    "street": "Rua das Flores",
    "number": "123",
    "complement": "Apto 45",
    "neighborhood": "Jardim Paulista",
    "city": "São Paulo",
    "uf": "SP",
    "shipping_option": "sedex",
}


# The inputs whose placeholder is wider than the room for text inside them (the buyer sees "(11) 98765-43").
PLACEHOLDERS_CUT = """inputs => inputs.filter(i => i.offsetParent !== null).filter(i => {
    const style = getComputedStyle(i);
    const context = document.createElement("canvas").getContext("2d");
    context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const room = i.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return context.measureText(i.placeholder).width > room;
}).map(i => i.id || i.name)"""


def seed_demo() -> None:
    seed_catalog()
    seed_checkout_demo()


def off_loop(function):
    """Run ORM work outside Playwright's event loop (Django refuses sync DB calls inside one)."""

    def run():
        try:
            return function()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def _ready_checkout(client: Client) -> str:
    """A cart with two products and a filled checkout (through the same views a buyer posts to)."""
    client.post("/carrinho/adicionar", {"sku": "CAM-BAS-PRETA-M", "quantity": "1"})
    client.post("/carrinho/adicionar", {"sku": "CAF-CERRADO-1KG", "quantity": "2"})
    checkout_id = client.get("/checkout/")["Location"].rsplit("/", 1)[1]
    response = client.post(f"/checkout/{checkout_id}", {"action": "update", **BUYER_FORM})
    assert response.status_code == 200
    return checkout_id


def _session_cookie(client: Client, base_url: str) -> dict[str, str]:
    return {"name": "sessionid", "value": client.cookies["sessionid"].value, "url": base_url}


OVERFLOW_JS = """() => {
  const width = window.innerWidth;
  const clipped = el => {
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== 'visible') return true;
    }
    return false;
  };
  const culprits = [...document.querySelectorAll('body *')]
    .filter(el => el.getBoundingClientRect().right > width + 0.5 && ![...el.children].some(
      child => child.getBoundingClientRect().right > width + 0.5) && !clipped(el))
    .slice(0, 4)
    .map(el => el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ')[0] : ''));
  return [document.documentElement.scrollWidth, width, culprits.join(' ')];
}"""


def _signed_path(checkout_id: str, page: str) -> str:
    """The buyer's signed link to a checkout page (a browser without the creating session needs it)."""
    from urllib.parse import urlsplit

    from shop.checkout.selectors import checkout_continue_url
    from shop.models import Checkout

    parts = urlsplit(checkout_continue_url(Checkout.objects.get(public_id=checkout_id), page=page))
    return f"{parts.path}?{parts.query}"


def _overflow(page) -> tuple[int, int, str]:
    """The page's width, the screen's, and the innermost elements that stick out (for the failure message)."""
    return page.evaluate(OVERFLOW_JS)


def _shot(page, name: str, width: int) -> None:
    if SCREENSHOT_DIR:
        Path(SCREENSHOT_DIR).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=f"{SCREENSHOT_DIR}/{name}-{width}.png", full_page=True)


def test_every_storefront_page_fits_a_phone(live_server, transactional_db, settings) -> None:
    from playwright.sync_api import sync_playwright

    settings.DEBUG = False
    # given the demo shop, a cart with a filled checkout and a second checkout waiting for its Pix payment
    seed_demo()
    no_photo = _product_without_photo()
    shopper = Client()
    cart_checkout = _ready_checkout(shopper)
    payer = Client()
    pix_checkout = _ready_checkout(payer)
    assert payer.post(f"/checkout/{pix_checkout}", {"action": "pay", **BUYER_FORM}).status_code == 302
    charge = pix_charge_latest_for_reference(pix_checkout)
    paying = Client()
    paid_checkout = _ready_checkout(paying)
    paying.post(f"/checkout/{paid_checkout}", {"action": "pay", **BUYER_FORM})
    pay(txid=pix_charge_latest_for_reference(paid_checkout).txid, options=PayOptions())
    order = Order.objects.get(checkout_id=paid_checkout)
    cancelling = Client()
    cancelled_checkout = _ready_checkout(cancelling)
    cancelling.post(f"/checkout/{cancelled_checkout}", {"action": "pay", **BUYER_FORM})
    pay(txid=pix_charge_latest_for_reference(cancelled_checkout).txid, options=PayOptions())
    cancelled = Order.objects.get(checkout_id=cancelled_checkout)
    order_cancel(order_id=cancelled.public_id, reason="Sem estoque")
    slip = Client()
    boleto_checkout = _ready_checkout(slip)
    assert slip.post(f"/checkout/{boleto_checkout}", {"action": "pay_boleto", **BUYER_FORM}).status_code == 302
    pages = {
        "home": "/",
        "list": "/produtos/",
        "search": "/produtos/?q=camiseta+preta",
        "product": "/produtos/camiseta-basica-preta/",
        "product-freight": "/produtos/camiseta-basica-preta/?sku=CAM-BAS-PRETA-M&cep=01310-100",
        "cart": "/carrinho/",
        "cart-freight": "/carrinho/?cep=20040-002",
        "checkout": f"/checkout/{cart_checkout}",
        "pix": _signed_path(pix_checkout, "checkout:pix"),  # another buyer's browser: its signed link
        "boleto": _signed_path(boleto_checkout, "checkout:boleto"),
        "order": f"/orders/{order.permalink_token}",
        "order-cancelled": f"/orders/{cancelled.permalink_token}",
        "order-lookup": "/pedido",
        "terms": "/termos",
        "privacy": "/privacidade",
        "returns-policy": "/trocas-e-devolucoes",
        "shipping-policy": "/entrega",
        "not-found": "/nao-existe/",
        # a product whose photo is still to come: its tile on the home, its category, a search and its own page
        "category-no-photo": f"/produtos/?category={no_photo.category.slug}",
        "search-no-photo": "/produtos/?q=vela+maracuja",
        "product-no-photo": no_photo.get_absolute_url(),
    }
    tiles = {"home", "category-no-photo", "search-no-photo", "product-no-photo"}
    no_tile: dict[str, object] = {}  # pages where the photo-less product shows no square, named tile
    too_wide: dict[str, tuple[int, int, str]] = {}
    cut: dict[str, list[str]] = {}  # inputs whose example (placeholder) does not fit them
    misaligned: dict[str, float] = {}  # the card's side-by-side inputs at different heights
    small: dict[str, float] = {}  # a page's own action shorter than a thumb (QA walk: "Já paguei: atualizar", 19 px)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            for width in (360, 390):
                context = browser.new_context(locale="pt-BR", viewport={"width": width, "height": 780})
                context.add_cookies([_session_cookie(shopper, live_server.url)])
                page = context.new_page()
                for name, path in pages.items():
                    # when the page opens on a phone
                    page.goto(f"{live_server.url}{path}")
                    scroll_width, inner_width, culprits = _overflow(page)
                    _shot(page, name, width)
                    if scroll_width > inner_width:
                        too_wide[f"{name}@{width}"] = (scroll_width, inner_width, culprits)
                    if name in tiles:
                        tile = page.get_by_role("img", name=f"{no_photo.title} (sem foto)").first
                        box = tile.bounding_box() if tile.count() else None
                        if not box or box["width"] < 100 or abs(box["width"] - box["height"]) > 2:
                            no_tile[f"{name}@{width}"] = box
                    if name == "boleto":
                        height = page.get_by_test_id("boleto-refresh").bounding_box()["height"]
                        if height < 44:
                            small[f"{name}@{width}"] = height
                    if name == "checkout":
                        # the card's fields show once the card is chosen (Pix comes first): measured open too
                        page.get_by_test_id("choose-card").check()
                        scroll_width, inner_width, culprits = _overflow(page)
                        if scroll_width > inner_width:
                            too_wide[f"{name}-card@{width}"] = (scroll_width, inner_width, culprits)
                        if fields := page.eval_on_selector_all("input[placeholder]", PLACEHOLDERS_CUT):
                            cut[f"{name}@{width}"] = fields
                        expiry = page.locator("#card-expiry").bounding_box()
                        cvv = page.locator("#card-cvv").bounding_box()
                        if abs(expiry["y"] - cvv["y"]) > 1:
                            misaligned[f"{name}@{width}"] = expiry["y"] - cvv["y"]
                context.close()
        finally:
            browser.close()
    # then no page scrolls sideways, every example fits its input and the card's expiry and CVV line up
    assert too_wide == {}
    assert no_tile == {}
    assert cut == {}
    assert misaligned == {}
    assert small == {}
    assert charge is not None


def _product_without_photo() -> Product:
    """The newest product (first on the home) has no photo yet, and a long title."""
    product = Product.objects.create(
        title="Vela aromática de maracujá com pavio de madeira", slug="vela-maracuja", category=Category.objects.first()
    )
    Variant.objects.create(product=product, sku="VELA-MARACUJA", price=5990, stock=4)
    return product


def test_pix_page_on_a_phone_puts_amount_copy_and_countdown_above_the_qr(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    # given a checkout waiting for its Pix payment
    seed_demo()
    payer = Client()
    checkout_id = _ready_checkout(payer)
    payer.post(f"/checkout/{checkout_id}", {"action": "pay", **BUYER_FORM})
    pix_path = _signed_path(checkout_id, "checkout:pix")  # database work before the browser's event loop starts
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 390, "height": 844})
            # when the buyer opens the Pix page on a phone
            page.goto(f"{live_server.url}{pix_path}")
            # then amount, copy button and countdown are on the first screen, above the QR code
            qr_top = page.get_by_test_id("pix-qr").bounding_box()["y"]
            for locator in (
                page.get_by_test_id("pix-amount"),
                page.locator("[data-role=copy]"),
                page.locator("[data-role=countdown]"),
            ):
                box = locator.bounding_box()
                assert box["y"] + box["height"] <= 844, locator
                assert box["y"] < qr_top, locator
            # and a compact order summary lists the items and the total
            summary = page.get_by_test_id("pix-summary")
            expect(summary).to_contain_text("Camiseta Básica Preta")
            expect(summary).to_contain_text("2 × Café Cerrado Mineiro 1 kg")
            expect(summary.get_by_test_id("pix-summary-total")).to_have_text(
                page.get_by_test_id("pix-amount").inner_text()
            )
            # and the QR code is centred in its frame and named for a screen reader
            frame = page.get_by_test_id("pix-qr").bounding_box()
            qr = page.locator("[data-testid=pix-qr] svg").bounding_box()
            left, right = qr["x"] - frame["x"], frame["x"] + frame["width"] - qr["x"] - qr["width"]
            assert abs(left - right) <= 2, (left, right)
            expect(page.get_by_role("img", name="QR Code do Pix")).to_be_visible()
        finally:
            browser.close()


def test_desktop_cart_keeps_each_price_on_one_line(live_server, transactional_db) -> None:
    from playwright.sync_api import sync_playwright

    seed_demo()
    shopper = Client()
    _ready_checkout(shopper)
    shopper.post("/carrinho/adicionar", {"sku": LONG_TITLE_SKU, "quantity": "2"})
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            # the narrowest desktop layout (two columns from 1000 px), where the table is tightest
            context = browser.new_context(locale="pt-BR", viewport={"width": 1000, "height": 800})
            context.add_cookies([_session_cookie(shopper, live_server.url)])
            page = context.new_page()
            page.goto(f"{live_server.url}/carrinho/")
            # then every money cell is one line high (a wrapped "R$ / 38,90" is two)
            heights = page.eval_on_selector_all(
                "[data-role=money]",
                "cells => cells.map(c => [c.textContent.trim(), c.getClientRects().length])",
            )
            # and every button of the quantity cell ("Atualizar", "Remover") keeps its word whole on one line
            buttons = page.eval_on_selector_all(
                ".cart-qty button",
                """buttons => buttons.map(b => {
                    const range = document.createRange();
                    range.selectNodeContents(b);
                    const tops = [...range.getClientRects()].map(r => Math.round(r.top));
                    return [b.textContent.trim(), new Set(tops).size];
                })""",
            )
            _shot(page, "cart-desktop", 1000)
        finally:
            browser.close()
    assert len(heights) >= 4
    assert [rects for _, rects in heights] == [1] * len(heights)
    assert len(buttons) >= 4
    assert [(text, lines) for text, lines in buttons if lines != 1] == []


def test_phone_cart_keeps_quantity_and_its_buttons_on_one_row(live_server, transactional_db) -> None:
    """QA walk: at 360 px the line total shared the quantity's row, so a wide total ("R$ 2.999,00") pushed
    "Atualizar" under the quantity field. The total now sits beside the unit price; the quantity field and its
    two buttons keep one row whatever the total's width."""
    from playwright.sync_api import sync_playwright

    seed_demo()
    shopper = Client()
    shopper.post("/carrinho/adicionar", {"sku": LONG_TITLE_SKU, "quantity": "10"})  # R$ 2.999,00: a wide total
    shopper.post("/carrinho/adicionar", {"sku": "CAF-CERRADO-1KG", "quantity": "1"})
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(locale="pt-BR", viewport={"width": 360, "height": 780}, has_touch=True)
            context.add_cookies([_session_cookie(shopper, live_server.url)])
            page = context.new_page()
            page.goto(f"{live_server.url}/carrinho/")
            # each line's quantity field and both buttons share one row: their vertical spans overlap
            rows = page.eval_on_selector_all(
                ".cart-qty form",
                """forms => forms.map(f => {
                    const boxes = [...f.querySelectorAll('input[type=number], button')].map(
                        e => e.getBoundingClientRect());
                    return Math.max(...boxes.map(r => r.top)) < Math.min(...boxes.map(r => r.bottom));
                })""",
            )
            scroll_width, inner_width, culprits = _overflow(page)
            _shot(page, "cart-wide-total", 360)
        finally:
            browser.close()
    assert rows == [True, True]
    assert scroll_width <= inner_width, culprits
