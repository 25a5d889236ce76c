"""Every storefront, buyer and admin page under the Content Security Policy, in a real browser (issue 13 §14).

Chromium logs each blocked script, style or image as a console error naming the policy; a page that
inlines a script or a style without the request's nonce would show one here. The checkout and Pix
browser tests prove the scripts still run under the policy.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from orders.services import order_place_from_checkout
from shop.models import Product
from tests.orders.conftest import make_checkout
from tests.shop.checkout_factories import make_shipping, make_variant

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def page_policy(base_url: str) -> str:
    import httpx

    return httpx.get(f"{base_url}/", timeout=30).headers["content-security-policy"]


@pytest.mark.e2e
@pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')")
def test_no_page_breaks_the_content_security_policy(live_server, transactional_db) -> None:
    from playwright.sync_api import sync_playwright

    # given a product, a paid order and a staff user (database work before the browser's event loop starts)
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    product = Product.objects.get()
    order = order_place_from_checkout(checkout=make_checkout(lines=[("CAM-P-AZUL", 3000, 2)]))
    User.objects.create_superuser("lojista", "lojista@example.com.br", "senha-forte-123")
    storefront = [
        "/",
        "/produtos/",
        f"/produtos/{product.slug}/",
        "/termos",
        "/privacidade",
        f"/orders/{order.permalink_token}",
    ]
    admin = [
        "/admin/",
        "/admin/orders/order/",
        f"/admin/orders/order/{order.pk}/change/",
        "/admin/shop/product/",
        "/admin/shop/variant/",
        f"/admin/shop/variant/{product.variants.get().pk}/change/",  # the select2 product autocomplete
        f"/admin/shop/product/{product.pk}/change/",
        "/admin/shop/product/add/",
        "/admin/shop/checkout/",
        "/admin/payments/pixcharge/",
    ]

    violations: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 800})
            page.on(
                "console",
                lambda m: (
                    violations.append(f"{page.url}: {m.text}")
                    if m.type == "error" and "Content Security Policy" in m.text
                    else None
                ),
            )
            statuses = {}
            # when a buyer visits the storefront, adds to the cart and opens the checkout
            for path in storefront:
                statuses[path] = page.goto(f"{live_server.url}{path}").status
            page.goto(f"{live_server.url}/produtos/{product.slug}/")
            page.click("form[action$='/carrinho/adicionar'] button[type=submit]")
            page.wait_for_url(f"{live_server.url}/carrinho/")
            page.goto(f"{live_server.url}/checkout/")
            statuses["checkout"] = 200 if "/checkout/" in page.url else 0
            # and staff signs in and opens the admin pages
            page.goto(f"{live_server.url}/admin/login/")
            page.fill("#id_username", "lojista")
            page.fill("#id_password", "senha-forte-123")
            page.click("input[type=submit]")
            page.wait_for_url(f"{live_server.url}/admin/")
            for path in admin:
                statuses[path] = page.goto(f"{live_server.url}{path}").status
        finally:
            browser.close()
    # then every page loaded and the browser blocked nothing, under a policy that allows no inline style attribute
    policy = page_policy(live_server.url)
    assert "unsafe-inline" not in policy and "style-src-attr" not in policy, policy
    assert set(statuses.values()) == {200}, statuses
    assert violations == [], "\n".join(violations)


def test_no_page_template_writes_a_style_attribute() -> None:
    """The policy blocks `style="…"` on pages (QA walk: the NF-e justification box on the order page lost its width,
    the browser logging a violation); the browser test above opens only some pages, so every page template is read.
    E-mail templates keep inline styles: mail clients need them, and no CSP applies there."""
    project = Path(__file__).resolve().parents[2]
    offenders = [
        str(path.relative_to(project))
        for root in (project / "templates", project / "shop" / "templates")
        for path in sorted(root.rglob("*.html"))
        if "email" not in path.relative_to(root).as_posix() and ' style="' in path.read_text()
    ]
    assert offenders == []
