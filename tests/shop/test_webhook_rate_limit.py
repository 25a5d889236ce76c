"""The webhook endpoints are rate-limited per source IP (issue 13 §10; PIX.md §4.4).

Before: 101 junk deliveries to the Pix webhook were all answered (and each accepted one queued a PSP
lookup); nothing limited them, nor the NF-e provider webhook. Now each endpoint counts deliveries per
source IP (`WEBHOOK_RATE_LIMIT`): junk from one address is refused with 429 + Retry-After while the
PSP's own deliveries from its address keep being accepted.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from payments.models import PixWebhookEvent
from tests.payments.helpers import body, e2eid, item, post_signed

pytestmark = pytest.mark.django_db
JUNK = b'{"pix":[{"endToEndId":"junk"}]}'


def test_junk_from_one_address_is_limited_and_the_psp_is_not_starved(settings) -> None:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_SECRET = "sandbox-secret"  # the secret post_signed signs with
    settings.WEBHOOK_RATE_LIMIT = "5/minute"
    junk = Client(REMOTE_ADDR="203.0.113.9")
    psp = Client(REMOTE_ADDR="198.51.100.7")
    # when one address sends more junk deliveries than the limit
    answers = [junk.post("/payments/pix/webhook/pix", data=JUNK, content_type="application/json") for _ in range(7)]
    # then the first ones are refused as junk, the rest as over the limit, with a Retry-After
    assert [a.status_code for a in answers[:5]] == [401] * 5
    assert [a.status_code for a in answers[5:]] == [429, 429]
    assert 1 <= int(answers[-1]["Retry-After"]) <= 60
    assert answers[-1].json()["error"] == "rate_limited"
    # and the PSP's signed deliveries from its own address are accepted meanwhile
    delivered = [post_signed(psp, body(item(e2e=e2eid(str(n)), txid="a" * 32, valor="1.00"))) for n in range(5)]
    assert [d.status_code for d in delivered] == [200] * 5
    assert PixWebhookEvent.objects.count() == 5


def test_the_nfe_provider_webhook_is_limited_too(settings) -> None:
    settings.WEBHOOK_RATE_LIMIT = "3/minute"
    junk = Client(REMOTE_ADDR="203.0.113.9")
    payload = json.dumps({"ref": "order_x", "status": "autorizado"})
    answers = [
        junk.post("/fiscal/webhooks/provider/", data=payload, content_type="application/json").status_code
        for _ in range(4)
    ]
    assert answers[:3] != [429] * 3 and 429 not in answers[:3]
    assert answers[3] == 429
    other = Client(REMOTE_ADDR="198.51.100.7")
    assert other.post("/fiscal/webhooks/provider/", data=payload, content_type="application/json").status_code != 429


def test_the_default_is_generous() -> None:
    from django.conf import settings
    from limits import parse

    assert parse(settings.WEBHOOK_RATE_LIMIT).amount >= 600
