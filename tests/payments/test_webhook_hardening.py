"""Pix webhook against hostile bodies (issue 13 §3, §4, §10): control characters, deep nesting, size.

Each case answered 500 before (a `DataError` for U+0000, a `RecursionError` for deep nesting); now a
clean 400/413 and nothing is stored. PIX.md §4.4, §5.
"""

from __future__ import annotations

import pytest
from django.test import Client

from payments.models import PixWebhookEvent
from tests.payments.helpers import body, e2eid, item, post_signed


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("extra", "where"),
    [
        ({"infoPagador": "pagamento\x00"}, "pix[0].infoPagador"),
        ({"infoPagador": "sino\x07"}, "pix[0].infoPagador"),
        ({"devolucoes": [{"id": "d\x00"}]}, "pix[0].devolucoes[0].id"),
    ],
)
def test_control_characters_in_a_signed_delivery_are_a_400(client: Client, extra: dict, where: str) -> None:
    raw = body(item(e2e=e2eid(), txid="a" * 32, valor="10.00", **extra))
    response = post_signed(client, raw)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "malformed"
    assert where in response.json()["detail"]
    assert PixWebhookEvent.objects.count() == 0


@pytest.mark.django_db
def test_newline_in_info_pagador_is_still_accepted(client: Client) -> None:
    raw = body(item(e2e=e2eid(), txid="a" * 32, valor="10.00", infoPagador="linha 1\nlinha 2"))
    assert post_signed(client, raw).status_code == 200
    assert PixWebhookEvent.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("raw", [b"[" * 100_000 + b"]" * 100_000, b'{"pix": [' + b"[" * 100 + b"]" * 100 + b"]}"])
def test_deeply_nested_signed_delivery_is_a_400(client: Client, raw: bytes) -> None:
    response = post_signed(client, raw)
    assert response.status_code == 400
    assert response.json() == {"error": "malformed", "detail": "JSON nested deeper than 64 levels"}
    assert PixWebhookEvent.objects.count() == 0


def deploy_check_ids() -> set[str]:
    from django.core.checks import run_checks

    return {message.id for message in run_checks(include_deployment_checks=True)}


def test_bacen_mode_without_the_mtls_header_fails_the_deploy_check(settings) -> None:
    # Before: `check --deploy` was clean while the webhook accepted anyone's deliveries.
    settings.BCP_PIX_SANDBOX = False
    settings.PIX_WEBHOOK_MTLS_HEADER = ""
    assert "payments.E001" in deploy_check_ids()
    settings.PIX_WEBHOOK_MTLS_HEADER = "X-SSL-Client-Verify"
    assert "payments.E001" not in deploy_check_ids()
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_WEBHOOK_MTLS_HEADER = ""
    assert "payments.E001" not in deploy_check_ids()


@pytest.mark.django_db
def test_a_declared_oversize_body_is_refused_unread(client: Client) -> None:
    raw = b'{"pix": [' + b" " * 300_000 + b"]}"
    response = post_signed(client, raw)
    assert (response.status_code, response.json()) == (413, {"error": "body_too_large"})
    assert PixWebhookEvent.objects.count() == 0


@pytest.mark.django_db
def test_bacen_mode_without_the_mtls_header_configured_refuses_every_delivery(client: Client, settings) -> None:
    # Before (issue 31 §3): with PIX_WEBHOOK_MTLS_HEADER unset, 10 unsigned junk deliveries were 10 × 200, each
    # stored and queueing a PSP lookup; the deploy check said so, nothing at run time refused them.
    settings.BCP_PIX_SANDBOX = False
    settings.PIX_WEBHOOK_MTLS_HEADER = ""
    # when 10 deliveries arrive, even one claiming the usual proxy header
    responses = [
        client.post(
            "/payments/pix/webhook/pix",
            data=body(item(e2e=e2eid(), txid="a" * 32, valor="10.00")),
            content_type="application/json",
            headers={"X-SSL-Client-Verify": "SUCCESS"} if n == 0 else {},
        )
        for n in range(10)
    ]
    # then every one is a 401 saying why, and nothing is stored
    assert [response.status_code for response in responses] == [401] * 10
    assert responses[0].json() == {
        "error": "unauthenticated",
        "detail": "PIX_WEBHOOK_MTLS_HEADER is not configured: the PSP's client certificate cannot be verified",
    }
    assert PixWebhookEvent.objects.count() == 0
