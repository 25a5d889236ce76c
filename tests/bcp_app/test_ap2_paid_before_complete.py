"""AP2 checkouts paid by Pix before complete, over A2A against a live uvicorn (PIX.md §3.1, §7, §10 D1).

PIX.md §3.1: "If no complete arrives within `completion_grace_seconds` — without AP2: auto-complete (the Pix
itself is the buyer's explicit authorisation); with AP2: a mandate is mandatory, so refund in full." §10 D1:
"with AP2 active it refunds in full". A checkout created while the AP2 mandates extension was negotiated is
locked to it (§7); a platform whose mandate no longer verifies (expired) cannot complete it, and the shop
must not keep the money nor complete it on its own: the Pix goes to the refund outbox.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.bcp_app.test_a2a_helpers import (  # noqa: F401 (fixtures "live" and "server")
    build_checkout_mandate,
    checkout_of,
    live_fixture,
    rpc,
    server_fixture,
)
from tests.bcp_app.test_ap2_a2a import (  # noqa: F401 (fixtures)
    PLATFORM_KID,
    ap2_server,
    complete_with,
    mandate,
    platform_keys,
    ready_with_pix,
)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def _paid(server: Any) -> dict[str, Any]:
    from payments.sandbox.services import PayOptions, pay
    from shop.models import Checkout

    ready = ready_with_pix(server)
    pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=PayOptions())
    checkout = Checkout.objects.get(public_id=ready["id"])
    assert (checkout.status, checkout.mandate_required) == ("ready_for_complete", True)  # locked to AP2 (§7)
    assert checkout.paid_at is not None
    return ready


def test_ap2_checkout_paid_before_complete_with_an_expired_mandate_is_refunded_pix_10_d1(
    ap2_server: Any,  # noqa: F811
    platform_keys: Any,  # noqa: F811
    settings: Any,
) -> None:
    from orders.models import Order
    from payments.models import PixRefund
    from shop.checkout.services import checkout_expire_due
    from shop.models import Checkout

    settings.PIX_COMPLETION_GRACE_SECONDS = 900
    ready = _paid(ap2_server)
    expired = build_checkout_mandate(
        signed_checkout=ready,
        platform_key=platform_keys["platform"],
        platform_kid=PLATFORM_KID,
        holder_key=platform_keys["holder"],
        audience=f"{ap2_server.base_url}/.well-known/bcp",
        exp_in=-3600,
    )

    refused = checkout_of(rpc(ap2_server.a2a_url, complete_with(expired)))
    checkout_expire_due(now=timezone.now() + timedelta(seconds=901))

    assert "mandate_expired" in [m.get("code") for m in refused["messages"]]
    assert refused["status"] == "ready_for_complete"
    assert Checkout.objects.get(public_id=ready["id"]).status == "canceled"
    assert not Order.objects.filter(checkout_id=ready["id"]).exists()
    refund = PixRefund.objects.get(reference=ready["id"])
    total = next(t["amount"] for t in ready["totals"] if t["type"] == "total")
    assert (refund.kind, refund.amount) == ("automatic", total)


def test_ap2_checkout_paid_before_complete_with_a_valid_mandate_completes_pix_3_1(
    ap2_server: Any,  # noqa: F811
    platform_keys: Any,  # noqa: F811
) -> None:
    """The counterpart: a verified mandate after the payment completes at once (PIX.md §3.1), nothing refunded."""
    from payments.models import PixRefund

    ready = _paid(ap2_server)

    done = checkout_of(rpc(ap2_server.a2a_url, complete_with(mandate(ap2_server, ready, platform_keys))))

    assert done["status"] == "completed", done.get("messages")
    assert done["order"]["id"].startswith("order_")
    assert not PixRefund.objects.filter(reference=ready["id"]).exists()
