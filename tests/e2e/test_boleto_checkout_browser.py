"""A boleto purchase on a 360 px phone in a real browser (Playwright + Debian's chromium), with the sandbox
gateway as under `make run` (issue 37): "Pagar com boleto" on the one-page checkout → the boleto page (linha
digitável, "Copiar linha digitável" puts it on the clipboard, the barcode, the PDF link, the order's summary) with
no horizontal scroll → "Pagar boleto no sandbox" → the order page, one order, paid by boleto."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.test import Client

from orders.models import Order
from payments.boleto.codes import barcode_from_line
from payments.models import BoletoPayment
from tests.e2e.test_card_checkout_browser import phone_checkout
from tests.shop.test_phone_layout_browser import _overflow, _ready_checkout, _shot, off_loop, seed_demo

CHROMIUM = Path("/usr/bin/chromium")
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}

# Where the boleto's textarea wraps its linha digitável: a copy of the text in a div of the same width and font, each
# character's line read off a Range; returns the characters just before each new line.
LINE_BREAKS_JS = """() => {
  const area = document.getElementById('boleto-line');
  const style = getComputedStyle(area);
  const copy = document.createElement('div');
  for (const name of ['font', 'letterSpacing', 'padding', 'border', 'boxSizing', 'whiteSpace', 'wordBreak',
                      'overflowWrap', 'width']) copy.style[name] = style[name];
  copy.textContent = area.value;
  area.parentElement.appendChild(copy);
  const text = copy.firstChild;
  const range = document.createRange();
  const before = [];
  let top = null;
  for (let i = 0; i < area.value.length; i++) {
    range.setStart(text, i);
    range.setEnd(text, i + 1);
    const rect = range.getClientRects()[0];
    if (!rect) continue;
    if (top !== null && rect.top > top + 1) before.push(area.value[i - 1]);
    top = rect.top;
  }
  copy.remove();
  return before;
}"""

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"),
]


def test_boleto_purchase_on_a_phone_with_copy_barcode_pdf_and_the_sandbox_pay_button(
    live_server, transactional_db, settings
):
    from playwright.sync_api import expect

    settings.BCP_PIX_SANDBOX = True
    settings.BCP_PUBLIC_URL = live_server.url
    # given the demo shop and a filled checkout (contact with CPF, address, SEDEX)
    seed_demo()
    shopper = Client()
    checkout_id = _ready_checkout(shopper)
    posted: list[str] = []
    with phone_checkout(live_server, shopper, checkout_id, posted, lambda req: req.url) as page:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
        # Pix is the method open by default; the boleto panel shows once chosen
        expect(page.get_by_test_id("boleto-pay")).to_be_hidden()
        # when the buyer chooses the boleto and pays with it
        page.get_by_test_id("choose-boleto").check()
        expect(page.get_by_test_id("boleto-pay")).to_be_visible()
        page.get_by_test_id("pay-boleto").click()
        # then the boleto page shows the line, the barcode and the PDF, and fits the phone
        expect(page.get_by_test_id("boleto-page")).to_be_visible()
        boleto = off_loop(lambda: BoletoPayment.objects.get(reference=checkout_id))
        line = page.get_by_test_id("boleto-line").input_value()
        assert barcode_from_line(line) == barcode_from_line(boleto.line)
        assert page.locator("[data-testid=boleto-barcode] svg rect").count() > 100
        assert page.get_by_test_id("boleto-pdf").get_attribute("href") == boleto.pdf_url
        # and, as on the Pix page, what is being paid for (buyer walk: only the amount, no items nor delivery)
        summary = page.get_by_test_id("boleto-summary")
        expect(summary).to_contain_text("Camiseta Básica Preta")
        expect(summary).to_contain_text("2 × Café Cerrado Mineiro 1 kg")
        expect(summary).to_contain_text("Frete — SEDEX")
        expect(summary.get_by_test_id("boleto-summary-total")).to_have_text(
            page.get_by_test_id("boleto-amount").inner_text()
        )
        scroll_width, inner_width, culprits = _overflow(page)
        _shot(page, "boleto-page", 360)
        assert scroll_width <= inner_width, culprits
        # and the line wraps on the phone only between its groups, never inside one
        breaks = page.evaluate(LINE_BREAKS_JS)
        assert breaks and set(breaks) == {" "}, breaks
        page.get_by_test_id("boleto-copy").click()
        expect(page.get_by_test_id("boleto-copy")).to_have_text("Copiado!")
        assert page.evaluate("navigator.clipboard.readText()") == line
        # and the sandbox bank pays it: the webhook path places the order
        page.get_by_test_id("sandbox-boleto-pay").click()
        expect(page.get_by_test_id("order-page")).to_be_visible()
        expect(page.get_by_test_id("order-boleto")).to_have_text("Boleto")
        scroll_width, inner_width, culprits = _overflow(page)
        assert scroll_width <= inner_width, culprits
    order = off_loop(lambda: Order.objects.get(checkout_id=checkout_id))
    assert (order.payment_type, order.paid_amount) == ("boleto", order.total_amount)
    assert off_loop(lambda: BoletoPayment.objects.get(reference=checkout_id).status) == "paid"
