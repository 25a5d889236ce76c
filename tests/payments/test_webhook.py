"""Webhook endpoint (PIX.md §4.4, §5; BCP-PAY-07): authentication good/forged/replayed/malformed, inbox dedupe."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.test import Client

from payments import webhook_auth
from payments.models import PixWebhookEvent
from tests.payments.helpers import body, e2eid, item, post_signed

VECTOR_BODY = (
    b'{"pix":[{"endToEndId":"E99999999202607281504xixWhrEFcz1","txid":"4dbaa2bc0a4a45d8b63e50117f566fca",'
    b'"valor":"5999.00","horario":"2026-07-28T15:04:10.123Z"}]}'
)
VECTOR_V1 = "f694a082fae1ff563ba98ac95aa10d5f88ad7316c2e48760bc7db60355f48a83"


def test_pix_md_signature_test_vector_verifies() -> None:
    # given the test vector of PIX.md §4.4
    header = f"t=1785250800,v1={VECTOR_V1}"
    # when it is computed and verified at its own time
    computed = webhook_auth.sign("sandbox-secret", VECTOR_BODY, timestamp=1785250800)
    verified_at = webhook_auth.verify(header, VECTOR_BODY, secrets=["sandbox-secret"], now=1785250800 + 299)
    # then both agree with the published value
    assert computed == header
    assert verified_at == 1785250800


@pytest.mark.parametrize(
    ("header", "now", "message"),
    [
        (None, 1785250800, "missing BCP-Sandbox-Signature header"),
        ("t=1785250800", 1785250800, "BCP-Sandbox-Signature needs t= and at least one v1="),
        ("garbage", 1785250800, "malformed BCP-Sandbox-Signature header"),
        (f"t=abc,v1={VECTOR_V1}", 1785250800, "malformed timestamp in BCP-Sandbox-Signature"),
        (f"t=1785250800,v1={VECTOR_V1}", 1785250800 + 301, "signature timestamp outside the 300 s window (replay?)"),
        (f"t=1785250800,v1={'0' * 64}", 1785250800, "signature does not match the body"),
    ],
)
def test_signature_failures_say_why(header: str | None, now: int, message: str) -> None:
    with pytest.raises(webhook_auth.SignatureError) as excinfo:
        webhook_auth.verify(header, VECTOR_BODY, secrets=["sandbox-secret"], now=now)

    assert str(excinfo.value) == message


def test_rotation_accepts_any_listed_v1_and_any_configured_secret() -> None:
    header = f"t=1785250800,v1={'1' * 64},v1={VECTOR_V1}"

    assert webhook_auth.verify(header, VECTOR_BODY, secrets=["old", "sandbox-secret"], now=1785250800) == 1785250800


@pytest.mark.django_db
def test_good_delivery_is_stored_raw_and_answered_200(client: Client) -> None:
    # given a signed Bacen body with one Pix
    e2e = e2eid()
    raw = body(item(e2e=e2e, txid="a" * 32, valor="10.00"))
    # when it is delivered to the `/pix` URL (the PSP appends /pix)
    response = post_signed(client, raw)
    # then it is stored once, raw, with the signature header kept
    event = PixWebhookEvent.objects.get()
    assert response.status_code == 200
    assert response.json() == {"received": 1, "duplicates": 0}
    assert bytes(event.raw_body) == raw
    assert event.end_to_end_id == e2e
    assert event.source == "webhook"
    assert sorted(event.headers) == ["bcp-sandbox-signature", "content-type"]


@pytest.mark.django_db
def test_both_webhook_urls_accept_deliveries(client: Client) -> None:
    first = post_signed(client, body(item(e2e=e2eid("a"), txid="a" * 32, valor="1.00")), path="/payments/pix/webhook")
    second = post_signed(client, body(item(e2e=e2eid("b"), txid="a" * 32, valor="1.00")))

    assert (first.status_code, second.status_code) == (200, 200)
    assert PixWebhookEvent.objects.count() == 2


@pytest.mark.django_db
def test_duplicate_delivery_answers_200_and_is_stored_once(client: Client) -> None:
    raw = body(item(e2e=e2eid(), txid="a" * 32, valor="10.00"))

    answers = [post_signed(client, raw).json() for _ in range(3)]

    assert answers == [
        {"received": 1, "duplicates": 0},
        {"received": 0, "duplicates": 1},
        {"received": 0, "duplicates": 1},
    ]
    assert PixWebhookEvent.objects.count() == 1


@pytest.mark.django_db
def test_forged_signature_is_401_and_stores_nothing(client: Client) -> None:
    raw = body(item(e2e=e2eid(), txid="a" * 32, valor="10.00"))

    response = post_signed(client, raw, secret="not-the-secret")

    assert response.status_code == 401
    assert response.json()["error"] == "unauthenticated"
    assert PixWebhookEvent.objects.count() == 0


@pytest.mark.django_db
def test_body_tampered_after_signing_is_401(client: Client) -> None:
    raw = body(item(e2e=e2eid(), txid="a" * 32, valor="10.00"))
    header = webhook_auth.sign("sandbox-secret", raw)

    response = client.post(
        "/payments/pix/webhook/pix",
        data=raw.replace(b"10.00", b"99.00"),
        content_type="application/json",
        headers={webhook_auth.HEADER: header},
    )

    assert response.status_code == 401
    assert PixWebhookEvent.objects.count() == 0


@pytest.mark.django_db
def test_replayed_delivery_older_than_300s_is_401(client: Client) -> None:
    raw = body(item(e2e=e2eid(), txid="a" * 32, valor="10.00"))

    response = post_signed(client, raw, timestamp=int(time.time()) - 301)

    assert response.status_code == 401
    assert response.json()["detail"] == "signature timestamp outside the 300 s window (replay?)"
    assert PixWebhookEvent.objects.count() == 0


@pytest.mark.django_db
def test_unsigned_delivery_is_401(client: Client) -> None:
    response = client.post("/payments/pix/webhook/pix", data=body(), content_type="application/json")

    assert response.status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("raw", "detail_start"),
    [
        (b"{not json", "Expecting property name"),
        (b'{"pix":[]}', "pix: expected a non-empty array"),
        (b'{"pix":[{"endToEndId":"short","txid":"x","valor":"1.00","horario":"2026-07-28T15:04:10Z"}]}', "endToEndId"),
        (body(item(e2e=e2eid(), txid="a" * 32, valor="10,00")), "amount must be a decimal string"),
        (body(item(e2e=e2eid(), txid="a" * 32, valor="10.00", horario="yesterday")), "horario"),
        (body(item(e2e=e2eid(), txid="a" * 32, valor="0.00")), "valor: must be positive"),
    ],
)
def test_malformed_signed_delivery_is_400_and_stores_nothing(client: Client, raw: bytes, detail_start: str) -> None:
    response = post_signed(client, raw)

    assert response.status_code == 400
    assert response.json()["detail"].startswith(detail_start)
    assert PixWebhookEvent.objects.count() == 0


@pytest.mark.django_db
def test_bare_array_body_and_object_devolucoes_are_accepted(client: Client) -> None:
    # Inter posts a bare array; the official example shows `devolucoes` as an object (PIX.md §4.2 quirks).
    e2e = e2eid()
    refund = {
        "id": "abc",
        "rtrId": "D" + "9" * 31,
        "valor": "1.00",
        "horario": {"solicitacao": "2026-07-28T15:05:00Z"},
        "status": "DEVOLVIDO",
    }
    raw = json.dumps([item(e2e=e2e, txid="a" * 32, valor="10.00", devolucoes=refund)]).encode()

    response = post_signed(client, raw)

    assert response.status_code == 200
    assert PixWebhookEvent.objects.get().refund_state == "abc:RETURNED"


@pytest.mark.django_db
def test_get_is_not_allowed(client: Client) -> None:
    assert client.get("/payments/pix/webhook/pix").status_code == 405


@pytest.mark.django_db
def test_bacen_mode_requires_the_proxy_mtls_header(client: Client, settings: Any) -> None:
    # given the Bacen adapter behind a TLS proxy that sets X-SSL-Client-Verify
    settings.BCP_PIX_SANDBOX = False
    settings.PIX_WEBHOOK_MTLS_HEADER = "X-SSL-Client-Verify"
    raw = body(item(e2e=e2eid(), txid="a" * 32, valor="10.00"))
    # when one delivery lacks the verified header and one has it
    refused = client.post("/payments/pix/webhook/pix", data=raw, content_type="application/json")
    accepted = client.post(
        "/payments/pix/webhook/pix",
        data=raw,
        content_type="application/json",
        headers={"X-SSL-Client-Verify": "SUCCESS"},
    )
    # then only the verified one is stored
    assert (refused.status_code, accepted.status_code) == (401, 200)
    assert PixWebhookEvent.objects.count() == 1
