"""Receiving Pix Automático recurrence notices: authenticate like the Pix webhook, store raw, answer fast.

Bacen PSPs call `{webhookUrl}/rec` (registered with `PUT /webhookrec`, API Pix 2.9.0) with `{"recs": [...]}`.
The body is only a hint, as for Pix: `payments.tasks.process_recurrence_webhook` confirms it with `GET /rec/{idRec}`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from django.utils import timezone

from kernel.rows import insert_each_once
from kernel.tasks import enqueue_on_commit
from payments.automatic.models import PixRecurrenceWebhookEvent, PixRecurringChargeWebhookEvent
from payments.psp.recurring import (
    COBR_STATUSES,
    REC_STATUSES,
    RecurrenceNotice,
    RecurringChargeNotice,
    parse_recurrence_notification,
    parse_recurring_charge_notification,
)
from payments.webhooks import Refusal, kept_headers, read_pix_notice

# English status → the Bacen name stored (the inbox keeps the PSP's words).
_BACEN_STATUS = {english: bacen for bacen, english in REC_STATUSES.items()}
_BACEN_COBR_STATUS = {english: bacen for bacen, english in COBR_STATUSES.items()}


def recurrence_events_store(
    *, notices: list[RecurrenceNotice], raw_body: bytes, headers: Mapping[str, str]
) -> tuple[int, int]:
    """One inbox row per notice, unique on (idRec, status); a replay writes nothing. Returns (stored, duplicates)."""
    digest = hashlib.sha256(raw_body).hexdigest()
    received_at = timezone.now()
    events = (
        PixRecurrenceWebhookEvent(
            id_rec=notice.id_rec,
            status=_BACEN_STATUS[notice.status],
            cancelled_by=notice.cancellation.requester if notice.cancellation else "",
            cancellation_code=notice.cancellation.code[:4] if notice.cancellation else "",
            payload=notice.raw,
            raw_body=raw_body,
            body_sha256=digest,
            headers=dict(headers),
            received_at=received_at,
        )
        for notice in notices
    )
    return insert_each_once(  # a dead broker: logged, the beat re-drives the row
        events, ("id_rec", "status"),
        inserted=lambda event: enqueue_on_commit("payments.tasks.process_recurrence_webhook", event.pk),
    )  # fmt: skip


def receive_recurrence_webhook(raw_body: bytes, headers: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON body). 413 too large, 401 forged, 400 malformed (nothing stored), 200 stored/duplicate."""
    return _receive(raw_body, headers, parse_recurrence_notification, recurrence_events_store)


def _item_digest(item: Any) -> str:
    """A `cobsr[]` item's identity: the SHA-256 of its canonical JSON (a replay of the same item is the same)."""
    return hashlib.sha256(json.dumps(item, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def recurring_charge_events_store(
    *, notices: list[RecurringChargeNotice], raw_body: bytes, headers: Mapping[str, str]
) -> tuple[int, int]:
    """One inbox row per `cobsr[]` item, unique on (txid, the item's hash): a replay writes nothing."""
    received_at = timezone.now()
    events = (
        PixRecurringChargeWebhookEvent(
            txid=notice.txid,
            status=_BACEN_COBR_STATUS[notice.status],
            item_sha256=_item_digest(notice.raw),
            payload=notice.raw,
            raw_body=raw_body,
            headers=dict(headers),
            received_at=received_at,
        )
        for notice in notices
    )
    return insert_each_once(  # a dead broker: logged, the beat re-drives the row
        events, ("txid", "item_sha256"),
        inserted=lambda event: enqueue_on_commit("payments.tasks.process_recurring_charge_webhook", event.pk),
    )  # fmt: skip


def receive_recurring_charge_webhook(raw_body: bytes, headers: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
    """`POST {webhookUrl}/cobr` (registered with `PUT /webhookcobr`): the same answers as the `/rec` inbox."""
    return _receive(raw_body, headers, parse_recurring_charge_notification, recurring_charge_events_store)


def _receive(
    raw_body: bytes,
    headers: Mapping[str, str],
    parse: Callable[[Any], list[Any]],
    store: Callable[..., tuple[int, int]],
) -> tuple[int, dict[str, Any]]:
    """Both Pix Automático inboxes: read the notice like every Pix inbox, then `store(notices=…, raw_body=…,
    headers=…)` its items and say how many were new."""
    read = read_pix_notice(raw_body, headers, parse)
    if isinstance(read, Refusal):
        return read.status, read.body
    _body, notices = read
    stored, duplicates = store(notices=notices, raw_body=raw_body, headers=kept_headers(headers))
    return 200, {"received": stored, "duplicates": duplicates}
