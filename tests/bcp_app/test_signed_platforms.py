"""Signature-authenticated platforms (BCP §7, §18, BCP-ORD-02, BCP-SIG-08), over REST.

BCP §7 Get Order: "Caller must be authenticated (API key, OAuth, mTLS or signature); platform credentials
see only orders of checkouts created by that platform". A platform that signs every request with a key of
its own profile but never registered used to get `unauthorized` on its own orders.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from django.test import Client

from bcp_app.protocol.signatures import HttpMessage, content_digest, sign_message
from tests.bcp_app.bcp_fixtures import PLATFORM_KID, FakePlatform, agent
from tests.bcp_app.rest_helpers import catalog, full_update

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
CARD = {
    "id": "instr_card",
    "handler_id": "gpay",
    "type": "card",
    "selected": True,
    "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"},
}


class Signer:
    """A platform that signs every REST request (RFC 9421) with `key`, naming `profile_url`."""

    def __init__(self, client: Client, profile_url: str, key: ec.EllipticCurvePrivateKey) -> None:
        self.client, self.profile_url, self.key = client, profile_url, key

    def __call__(self, method: str, path: str, body: Any = None, *, key: str | None = None) -> dict[str, Any]:
        raw = json.dumps(body).encode() if body is not None else b""
        headers = {"BCP-Agent": f'profile="{self.profile_url}"'}
        components = ["@method", "@authority", "@path", "bcp-agent"]
        if body is not None:
            headers.update({"Content-Type": "application/json", "Content-Digest": content_digest(raw)})
            components += ["content-digest", "content-type"]
        if key:
            headers["Idempotency-Key"] = key
            components.append("idempotency-key")
        message = HttpMessage(method=method.upper(), authority="testserver", path=f"/bcp/v1{path}", headers=headers)
        headers.update(sign_message(message, components, key=self.key, keyid=PLATFORM_KID))
        kwargs: dict[str, Any] = {"headers": headers}
        if body is not None:
            kwargs.update(data=raw, content_type="application/json")
        response = getattr(self.client, method)(f"/bcp/v1{path}", **kwargs)
        assert response.status_code in (200, 201), response.content
        return response.json()


def _order_by_signed_platform(sign: Signer) -> dict[str, Any]:
    created = sign(
        "post",
        "/checkout-sessions",
        {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "buyer": {"email": "ana@example.com.br"}},
    )
    addressed = sign("put", f"/checkout-sessions/{created['id']}", full_update(created, pix=False))
    ready = sign(
        "put",
        f"/checkout-sessions/{created['id']}",
        {**full_update(addressed, pix=False), "payment": {"instruments": [CARD]}},
    )
    assert ready["status"] == "ready_for_complete", ready.get("messages")
    done = sign(
        "post",
        f"/checkout-sessions/{created['id']}/complete",
        {"payment": {"instruments": [CARD]}},
        key=str(uuid.uuid4()),
    )
    assert done["status"] == "completed", done.get("messages")
    return done


def test_a_signed_unregistered_platform_reads_its_own_order_bcp_ord_02_sig_08(
    client: Client, fake_platform: FakePlatform
) -> None:
    catalog()
    url = fake_platform.publish(handlers=fake_platform.with_card())
    sign = Signer(client, url, fake_platform.key)
    done = _order_by_signed_platform(sign)
    # when the same platform (a key of the same profile) asks for the order
    order = sign("get", f"/orders/{done['order']['id']}")
    # then it is authenticated by its signature and sees its order
    assert (order["id"], order["checkout_id"]) == (done["order"]["id"], done["id"])
    assert order["permalink_url"] == done["order"]["permalink_url"]
    # and the checkout is its own: also readable by a signed get
    assert sign("get", f"/checkout-sessions/{done['id']}")["status"] == "completed"


def test_unsigned_or_other_profiles_still_get_unauthorized_bcp_ord_02(
    client: Client, fake_platform: FakePlatform
) -> None:
    catalog()
    url = fake_platform.publish(handlers=fake_platform.with_card())
    done = _order_by_signed_platform(Signer(client, url, fake_platform.key))
    path = f"/bcp/v1/orders/{done['order']['id']}"
    # an unsigned request naming the same profile is anonymous
    unsigned = client.get(path, headers=agent(url)).json()
    # another platform signing with the keys of its own profile is someone else (BCP-SIG-08)
    other = FakePlatform(
        port=fake_platform.port, routes=fake_platform.routes, key=ec.generate_private_key(ec.SECP256R1())
    )
    other_url = fake_platform.serve_json(
        "/outro.json",
        other.profile(handlers=fake_platform.with_card()),
        headers={"Cache-Control": "public, max-age=300"},
    )
    signed_by_other = Signer(client, other_url, other.key)("get", f"/orders/{done['order']['id']}")
    for body in (unsigned, signed_by_other):
        assert body["ucp"]["status"] == "error"
        assert [m["code"] for m in body["messages"]] == ["unauthorized"]
