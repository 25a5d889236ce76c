"""AP2 completion (PIX.md §7.3 step 7, BCP.md §11.5): the verified checkout mandate is stored verbatim with the
order, returned on the checkout beside `merchant_authorization` (still valid), and shown on the admin order page.
Over A2A (the seed's AP2 binding) with a live server, and REST.

BCP-PAY-09.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bcp_app.models import Ap2Mandate
from bcp_app.protocol import ap2
from tests.bcp_app.test_a2a_checkout import SEED_COMPLETE, SEED_CONTEXT
from tests.bcp_app.test_a2a_helpers import (  # noqa: F401 (fixtures "live" and "server")
    checkout_of,
    data,
    live_fixture,
    rpc,
    send_message,
    server_fixture,
)
from tests.bcp_app.test_ap2_a2a import (  # noqa: F401 (fixtures)
    ap2_server,
    complete_with,
    mandate,
    platform_keys,
    ready_with_pix,
    shop_key,
)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def test_verified_mandate_is_kept_returned_and_shown_with_the_order(
    ap2_server: Any,  # noqa: F811
    platform_keys: Any,  # noqa: F811
    admin_client: Any,
) -> None:
    from orders.models import Order
    from payments.sandbox.services import PayOptions, pay

    ready = ready_with_pix(ap2_server)
    text = mandate(ap2_server, ready, platform_keys)

    completing = checkout_of(rpc(ap2_server.a2a_url, complete_with(text)))
    again = checkout_of(rpc(ap2_server.a2a_url, complete_with(text)))  # the same messageId: the stored reply

    stored = Ap2Mandate.objects.get()
    assert stored.checkout_id == ready["id"] and stored.mandate == text
    assert stored.issuer_kid == "agent-2026"
    assert stored.signed_total == next(t["amount"] for t in ready["totals"] if t["type"] == "total")
    assert stored.audience == f"{ap2_server.base_url}/.well-known/bcp"
    assert again == completing
    assert completing["status"] == "complete_in_progress"
    assert completing["ap2"]["checkout_mandate"] == text
    shop_jwk = ap2.public_jwk(shop_key(ap2_server).public_key, kid="loja-2026-07")
    assert ap2.verify_merchant_authorization(completing, [shop_jwk])["kid"] == "loja-2026-07"

    pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=PayOptions())
    completed = checkout_of(
        rpc(ap2_server.a2a_url, send_message([data({"action": "get_checkout"})], context_id=SEED_CONTEXT))
    )
    assert completed["status"] == "completed"
    assert completed["ap2"]["checkout_mandate"] == text
    order = Order.objects.get(checkout_id=ready["id"])
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Mandato AP2 do comprador" in page
    assert text in page and "agent-2026" in page


def test_a_refused_mandate_is_not_kept(ap2_server: Any, platform_keys: Any) -> None:  # noqa: F811
    ready_with_pix(ap2_server)
    request = copy.deepcopy(SEED_COMPLETE)
    request["params"]["message"]["parts"][1]["data"]["ap2"] = {"checkout_mandate": "a.b.c~d~e.f.g"}

    refused = checkout_of(rpc(ap2_server.a2a_url, request))

    assert refused["messages"][-1]["code"].startswith("mandate_")
    assert "checkout_mandate" not in refused["ap2"]
    assert Ap2Mandate.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_rest_complete_keeps_the_mandate_and_returns_it_bcp_pay_09(
    client: Any, bcp_settings: Any, fake_platform: Any
) -> None:
    from tests.bcp_app.bcp_fixtures import agent
    from tests.bcp_app.rest_helpers import PIX, call, catalog, ready_checkout
    from tests.bcp_app.test_a2a_helpers import build_checkout_mandate, ec_key, public_jwk

    bcp_settings.BCP_AP2_ENABLED = True
    keys = {"platform": ec_key(), "holder": ec_key()}
    profile = fake_platform.profile()
    spec, schema = "https://bcp.dev.br/draft/specification", "https://bcp.dev.br/draft/schemas"
    profile["ucp"]["capabilities"]["br.dev.bcp.shopping.ap2_mandate"] = [
        {
            "version": "2026-07-28",
            "spec": f"{spec}/ap2-mandates",
            "schema": f"{schema}/shopping/ap2_mandate.json",
            "extends": "br.dev.bcp.shopping.checkout",
        }
    ]
    profile["keys"] = [public_jwk(keys["platform"], "agent-rest")]
    headers = agent(fake_platform.serve_json("/ap2.json", profile, headers={"Cache-Control": "public, max-age=300"}))
    catalog()
    ready = ready_checkout(client, headers)
    text = build_checkout_mandate(
        signed_checkout=ready,
        platform_key=keys["platform"],
        platform_kid="agent-rest",
        holder_key=keys["holder"],
        audience="https://loja.example.com.br/.well-known/bcp",
    )

    body = call(
        client,
        "post",
        f"/checkout-sessions/{ready['id']}/complete",
        {**headers, "Idempotency-Key": "k-ap2-rest"},
        {"payment": {"instruments": [PIX]}, "ap2": {"checkout_mandate": text}},
    ).json()

    assert body["status"] == "complete_in_progress", body.get("messages")
    assert body["ap2"]["checkout_mandate"] == text and body["ap2"]["merchant_authorization"]
    assert Ap2Mandate.objects.get().issuer_kid == "agent-rest"
    shown = call(client, "get", f"/checkout-sessions/{ready['id']}", headers).json()
    assert shown["ap2"]["checkout_mandate"] == text
