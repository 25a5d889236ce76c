"""QA walk: the order page's LGPD consent box showed the decision's time as stored ("2026-12-06T16:45:19Z"); staff
read it in the shop's time zone, as Brazilians write it."""

from __future__ import annotations

import pytest
from django.test import Client

from orders.services import order_place_from_checkout
from shop.models import Checkout
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db


def test_the_consent_time_reads_local_and_brazilian(admin_client: Client) -> None:
    order = order_place_from_checkout(checkout=make_checkout())
    Checkout.objects.create(
        public_id=order.checkout_id, status="completed", order_id=order.public_id, buyer_email=order.buyer_email,
        buyer_consent={"marketing": {"granted": True, "captured_by": "storefront", "at": "2026-12-06T16:45:19Z"}},
    )  # fmt: skip
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    box = html.split('data-testid="consent-marketing"')[1].split("</div>")[0]
    assert "06/12/2026 13:45" in box  # America/Sao_Paulo, UTC−3
    assert "2026-12-06T16:45:19Z" not in html
