"""The gateway's webhook: authenticate, store raw in the inbox once per event id, process in Celery.

Pagar.me authenticates a webhook with the HTTP Basic credentials configured on the hook in its dashboard
(`PAGARME_WEBHOOK_USER` / `PAGARME_WEBHOOK_PASSWORD` here). The body is only a hint: processing reads the
charge back with `GET /charges/{id}` (fetch to confirm) and records the gateway's own values, so a forged
or replayed notice settles nothing.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.utils import timezone

from kernel.json_limits import loads_notice
from kernel.tasks import enqueue_on_commit
from payments.boleto.service import boleto_settle_confirmed
from payments.card.gateway import GatewayNotFound
from payments.card.models import CardPayment, CardWebhookEvent
from payments.card.service import get_card_gateway
from payments.card.settle import settle_recorded

logger = logging.getLogger(__name__)
MAX_BODY_BYTES = 256 * 1024
# The charge events that can change what we know; others (order.*, customer.*) are stored and ignored.
CHARGE_EVENTS = frozenset(
    {
        "charge.paid",
        "charge.payment_failed",
        "charge.refunded",
        "charge.partial_canceled",
        "charge.canceled",
        "charge.processing",
        "charge.pending",
        # boleto (payments/boleto/): more or less than the amount arrived
        "charge.overpaid",
        "charge.underpaid",
    }
)


def authenticate(headers: Mapping[str, str]) -> str | None:
    """None when the Basic credentials match the configured ones, else why the delivery is refused."""
    user = getattr(settings, "PAGARME_WEBHOOK_USER", "")
    password = getattr(settings, "PAGARME_WEBHOOK_PASSWORD", "")
    if not user or not password:
        return "no webhook credentials configured (PAGARME_WEBHOOK_USER/PAGARME_WEBHOOK_PASSWORD)"
    header = next((value for key, value in headers.items() if key.lower() == "authorization"), "")
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic" or not encoded:
        return "missing Basic authorization"
    try:
        given = base64.b64decode(encoded.strip(), validate=True)
    except (binascii.Error, ValueError):
        return "malformed Basic authorization"
    if not hmac.compare_digest(given, f"{user}:{password}".encode()):
        return "wrong webhook credentials"
    return None


def receive_card_webhook(raw_body: bytes, headers: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON body). 401 unauthenticated, 400 malformed (nothing stored), 200 stored or duplicate."""
    if len(raw_body) > MAX_BODY_BYTES:
        return 413, {"error": "body_too_large"}
    refusal = authenticate(headers)
    if refusal is not None:
        return 401, {"error": "unauthenticated", "detail": refusal}
    try:
        body = loads_notice(raw_body, max_bytes=MAX_BODY_BYTES)
        if not isinstance(body, dict) or not isinstance(body.get("id"), str) or not isinstance(body.get("type"), str):
            raise ValueError("a webhook needs string `id` and `type`")
        data = body.get("data")
        if not isinstance(data, dict):
            raise ValueError("a webhook needs an object `data`")
        if not 1 <= len(body["id"]) <= 64 or len(body["type"]) > 64:
            raise ValueError("`id` or `type` too long")
    except (ValueError, UnicodeDecodeError) as exc:
        return 400, {"error": "malformed", "detail": str(exc)[:200]}
    return 200, card_webhook_store(body, raw_body)


def card_webhook_store(body: dict[str, Any], raw_body: bytes) -> dict[str, int]:
    """One inbox row per hook id, processing enqueued after commit; also how the sandbox gateway "posts" its
    webhooks in-process (it is the gateway: no HTTP call to ourselves, which would deadlock a sync server)."""
    data = body.get("data") or {}
    charge_id = str(data.get("id") or "")[:64] if body["type"].startswith("charge.") else ""
    event, created = CardWebhookEvent.objects.get_or_create(
        event_id=body["id"],
        defaults={
            "type": body["type"],
            "charge_id": charge_id,
            "payload": body,
            "body_sha256": hashlib.sha256(raw_body).hexdigest(),
        },
    )
    if created:
        enqueue_on_commit("payments.tasks.process_card_webhook", event.pk)  # durable: a dead broker is the sweep's
    return {"received": int(created), "duplicates": int(not created)}


def _reference_of(charge_id: str, payload: dict[str, Any]) -> str:
    """Ours by the charge id we recorded; else the order code the gateway echoes (a timed-out authorize)."""
    known = CardPayment.objects.filter(gateway_reference=charge_id).values_list("reference", flat=True).first()
    if known:
        return known
    data = payload.get("data") or {}
    order = data.get("order") if isinstance(data.get("order"), dict) else {}
    return str(order.get("code") or "")[:64]


def card_webhook_event_process(*, event_id: int) -> str:
    """Process one inbox row: confirm the charge at the gateway, record it, announce a final outcome. Idempotent."""
    event = CardWebhookEvent.objects.get(pk=event_id)
    if event.processed_at is not None:
        return event.outcome
    CardWebhookEvent.objects.filter(pk=event_id).update(attempts=event.attempts + 1)
    gateway = get_card_gateway()
    if event.type not in CHARGE_EVENTS or not event.charge_id or gateway is None:
        outcome = "ignored"
    else:
        try:
            charge = gateway.get_charge(event.charge_id)
        except GatewayNotFound:
            charge = None
        reference = _reference_of(event.charge_id, event.payload) or (charge.code if charge is not None else "")
        if charge is not None and charge.payment_method == "boleto":
            # A boleto's charge: settled by its own row (payments/boleto/service.py), once.
            outcome = boleto_settle_confirmed(charge=charge, source="webhook")
        elif charge is None or not reference:
            outcome = "unconfirmed"
        else:
            outcome = settle_recorded(reference=reference, charge=charge, gateway=gateway.name, source="webhook")
            outcome = "approved" if outcome.approved else ("pending" if outcome.pending else "declined")
    CardWebhookEvent.objects.filter(pk=event_id, processed_at__isnull=True).update(
        processed_at=timezone.now(), outcome=outcome
    )
    return outcome
