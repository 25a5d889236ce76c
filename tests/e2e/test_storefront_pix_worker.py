"""Issue 4 end to end, as in production: a buyer on the storefront (over HTTP, with a session) pays
with Pix; the sandbox PSP sends its signed webhook over HTTP; a real Celery worker on Redis settles
the charge, the shop places the order and the worker sends the order e-mail.

Nothing runs eagerly: the live server and the worker only meet through Postgres and the broker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from orders.models import EmailDelivery, Order
from payments.models import PixCharge
from tests.bcp_app.live import CeleryWorker, LiveServer, pix_settlement_stack, wait_for
from tests.shop.checkout_factories import make_shipping, make_variant
from tests.shop.test_checkout_storefront import ADDRESS, CONTACT

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture
def stack(transactional_db: Any, settings: Any) -> Iterator[tuple[LiveServer, CeleryWorker]]:
    settings.DEBUG = True  # the sandbox "pay" button is a development tool
    with pix_settlement_stack(settings, secret="storefront-e2e-secret") as stack:
        yield stack


def post_form(browser: httpx.Client, path: str, page: httpx.Response, data: dict[str, str]) -> httpx.Response:
    """Submit a form the way a browser does: with the CSRF token the page rendered."""
    token = CSRF_INPUT.search(page.text)
    assert token, f"no CSRF token on {page.request.url}"
    return browser.post(path, data={"csrfmiddlewaretoken": token.group(1), **data})


def test_storefront_pix_purchase_settled_by_the_real_worker(stack: tuple[LiveServer, CeleryWorker]) -> None:
    server, _ = stack
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    browser = httpx.Client(base_url=server.url, timeout=30)

    # given two coffees in the cart and the one-page checkout filled in with SEDEX
    cart = browser.get("/carrinho/")
    assert post_form(browser, "/carrinho/adicionar", cart, {"sku": "SKU-CAFE-500G", "quantity": "2"}).status_code == 302
    started = browser.get("/checkout/")
    assert started.status_code == 302
    checkout_path = started.headers["location"]
    checkout_id = checkout_path.rsplit("/", 1)[1]
    form = {**CONTACT, **ADDRESS, "shipping_option": "sedex"}
    page = browser.get(checkout_path)
    filled = post_form(browser, checkout_path, page, {"action": "update", **form})
    assert 'data-testid="total">R$ 118,70<' in filled.text  # 85,80 + 32,90 SEDEX

    # when the buyer clicks "Pagar com Pix" and the sandbox bank pays the charge
    paying = post_form(browser, checkout_path, filled, {"action": "pay", **form})
    assert (paying.status_code, paying.headers["location"]) == (302, f"/checkout/{checkout_id}/pix")
    pix_page = browser.get(f"/checkout/{checkout_id}/pix")
    charge = PixCharge.objects.get(reference=checkout_id, status="active")
    assert charge.br_code in pix_page.text and charge.amount == 11870
    pay_path = f"/_sandbox/psp/cob/{charge.txid}/pay"
    paid = post_form(browser, pay_path, pix_page, {"next": f"/checkout/{checkout_id}/pix"})
    assert paid.status_code == 302

    # then the worker settles it: exactly one order, paid, and its e-mail sent once by the worker
    order = wait_for(lambda: Order.objects.filter(checkout_id=checkout_id).first())
    sent = wait_for(lambda: EmailDelivery.objects.filter(order=order, kind="placed", sent_at__isnull=False).first())
    assert sent.to_email == "ana@example.com.br"
    order.refresh_from_db()
    assert (order.payment_status, Order.objects.filter(checkout_id=checkout_id).count()) == ("paid", 1)
    # and the buyer's Pix page polls its way to the order permalink
    status = browser.get(f"/checkout/{checkout_id}/status").json()
    assert status["status"] == "completed"
    permalink = browser.get(status["order_url"])
    assert permalink.status_code == 200 and f"#{order.number}" in permalink.text
