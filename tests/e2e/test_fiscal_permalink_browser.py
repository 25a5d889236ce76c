"""A real browser (Playwright + Debian's chromium) on the buyer permalink of an order with an authorized
NF-e (issue 18): the DANFE link is there, downloads a PDF, and the page has no horizontal scroll at 360 px."""

from __future__ import annotations

import pytest
from django.db import transaction

from fiscal.models import FiscalDocument
from fiscal.services import document_request_issue
from orders.services import order_place_from_checkout, order_ship
from tests.e2e.test_admin_shipment_browser import CHROMIUM, IN_CI, LAUNCH_ARGS
from tests.fiscal.helpers import invoice
from tests.orders.conftest import make_checkout


@pytest.mark.e2e
@pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')")
def test_buyer_downloads_the_danfe_from_the_permalink_at_360px(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    # given a paid order whose NF-e the sandbox authorized (the after-commit task runs eagerly in tests)
    order = order_place_from_checkout(checkout=make_checkout(lines=[("CAM-P-AZUL", 3000, 2)]))
    with transaction.atomic():
        document_request_issue(
            order_ref=order.public_id, order_number=order.number, invoice=invoice(order_ref=order.public_id),
            problems=[], reissue=True,
        )  # fmt: skip
    document = FiscalDocument.objects.get(order_ref=order.public_id)
    assert document.status == "authorized"
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    permalink = f"{live_server.url}/orders/{order.permalink_token}"

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_context(locale="pt-BR", viewport={"width": 360, "height": 740}).new_page()
            # when the buyer opens the permalink on a phone
            page.goto(permalink)
            key = document.access_key
            expect(page.get_by_test_id("fiscal-access-key")).to_have_text(
                " ".join(key[i : i + 4] for i in range(0, 44, 4))
            )
            link = page.get_by_test_id("danfe-link")
            expect(link).to_have_text("Baixar DANFE (PDF)")
            # then the page fits the screen and the link gives the PDF
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            # and the links a thumb must hit are 44 px tall (the buyer's walk measured 19 px)
            for target in ("danfe-link", "xml-link", "tracking-link"):
                box = page.get_by_test_id(target).bounding_box()
                assert box is not None and box["height"] >= 44, (target, box)
            response = page.request.get(f"{live_server.url}{link.get_attribute('href')}")
            assert response.status == 200
            assert response.headers["content-type"] == "application/pdf"
            assert response.body().startswith(b"%PDF-")
        finally:
            browser.close()
