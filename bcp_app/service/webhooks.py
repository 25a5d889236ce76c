"""Signed order webhooks to the originating platform (BCP §8, PIX.md §8).

`orders.signals.order_changed` (sent by the orders outbox, in the order's one task, with no transaction
open) → `order_webhook_send` builds the full order snapshot once, stores it as a `WebhookDelivery` (stable
`Webhook-Id`, exact body bytes) already claimed for its first attempt, and tries it at once; failures are
retried with backoff for more than 24 h by the beat sweep `retry_order_webhooks`. Only a profile that could
not be read sends the event to Celery's `prepare_order_webhook`, which retries it. Every attempt is recorded
(`WebhookAttempt`, visible in the admin).
"""

from __future__ import annotations

import copy
import json
import logging
import time
import uuid
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import orjson
from django.db import connection, transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from bcp_app.models import Platform, WebhookAttempt, WebhookDelivery
from bcp_app.protocol import ucp
from bcp_app.protocol.ap2 import sign_detached_unencoded
from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.keys import signing_key, signing_key_id
from bcp_app.protocol.names import FISCAL_DOCUMENT, ORDER
from bcp_app.protocol.results import body_bytes
from bcp_app.protocol.schemas.order import OrderResponse
from bcp_app.protocol.signatures import WEBHOOK_COMPONENTS, HttpMessage, content_digest, sign_message
from bcp_app.service import negotiation, outbound, presenters
from bcp_app.service.context import RequestContext
from bcp_app.service.discovery import profile_url as our_profile_url
from bcp_app.service.discovery import ucp_profile_url
from bcp_app.service.platforms import platform_get, platform_get_kept
from kernel import rows
from kernel.tasks import enqueue
from orders.models import Order
from orders.outbox_models import OutboxMessage
from orders.selectors import order_presented

logger = logging.getLogger("bcp_app.service.webhooks")

BACKOFF = (30, 120, 600, 1800, 3600, 7200, 14400, 21600)  # seconds; the last value repeats
GIVE_UP_AFTER = timedelta(hours=26)  # ≥ 24 h of retries (BCP-WH-05)
LEASE = timedelta(minutes=5)  # a claimed attempt that never reported back is retried after this
_OUTCOME = ("last_status_code", "last_error", "status", "delivered_at", "next_attempt_at")


Negotiated = tuple[dict[str, Any], dict[str, str]]  # a platform's profile, the capabilities negotiated with it


class WebhookNotReady(Exception):
    """The platform profile could not be read; the caller retries later."""


def next_delay(attempts: int) -> int:
    return BACKOFF[min(attempts - 1, len(BACKOFF) - 1)]


def order_webhook_send(
    *,
    order_id: str,
    event: str,
    source_key: str | None = None,
    snapshot: str = "",
    platform: Platform | None = None,
    order: Order | None = None,
    negotiated: Negotiated | None = None,
) -> str:
    """Prepare the delivery for `event` of `order_id` and make its first attempt at once: "none" when no
    webhook is due (BCP-WH-01), else the delivery's status. Raises WebhookNotReady when the platform profile
    cannot be read. No transaction may be open (the POST is network I/O).

    A new delivery is written claimed for this attempt, so the attempt needs no claim of its own.
    `source_key` (the orders outbox row) makes a re-run find the delivery made the first time, which goes
    through the usual claim (a first run that died mid-attempt left its lease, after which the beat sweep
    tries it). `snapshot`: the order as presented when the event happened (`Order.bcp_json`), so the webhook
    of an event shows that moment even when a later change was made before this ran. `platform`: the
    order's, when the caller has it; `order`: the order, when the caller has read it (the outbox task);
    `negotiated`: `platform`'s profile and the capabilities negotiated with it, when the caller has them."""
    delivery, fresh = _prepare(
        order_id=order_id,
        event=event,
        source_key=source_key,
        snapshot=snapshot,
        platform=platform,
        order=order,
        negotiated=negotiated,
    )
    if delivery is None:
        return "none"
    if fresh and delivery.status == WebhookDelivery.Status.SUPERSEDED:
        return delivery.status  # written superseded: a newer event's webhook went first (never sent)
    return _attempt(delivery) if fresh else webhook_deliver(delivery_id=delivery.pk)


def _prepare(
    *,
    order_id: str,
    event: str,
    source_key: str | None,
    snapshot: str,
    platform: Platform | None,
    order: Order | None,
    negotiated: Negotiated | None,
) -> tuple[WebhookDelivery | None, bool]:
    """The delivery and whether this call created it (then claimed for its first attempt)."""
    if order is None or order.public_id != order_id or not (snapshot or order.bcp_json):
        order = order_presented(order_id)  # one query: the stored presentation (or the snapshot) is the body
    if order is None or not order.platform_id:
        return None, False
    platform_id = order.platform_id
    if snapshot and snapshot != order.bcp_json:
        order = copy.copy(order)  # the caller's order stays as read (other receivers share it)
        order.bcp_json = snapshot
    if platform is None or platform.public_id != platform_id:
        platform, negotiated = platform_get(platform_id), None
    if platform is None or not platform.active or not platform.profile_url:
        return None, False
    if negotiated is None:
        try:
            profile = negotiation.get_platform_profile(platform.profile_url)
        except ProtocolError as exc:
            raise WebhookNotReady(exc.content) from exc
        negotiated = (profile, negotiation.negotiate(profile))
    profile, active = negotiated
    url = _webhook_url(profile, active)
    if url is None:  # orders not negotiated, or no webhook wanted (BCP §8): nothing to write
        return None, False
    if event.startswith("fiscal_") and FISCAL_DOCUMENT not in active:
        # An NF-e step changes only `fiscal_documents`, which this platform does not see: its webhook would repeat
        # the last one with a new updated_at (agent QA walk).
        return None, False
    ctx = RequestContext(transport="webhook", profile_url=platform.profile_url, profile=profile, capabilities=active)
    presented = OrderResponse.produce(presenters.order(order, ctx))  # the get_order output model
    webhook_id = uuid.uuid4()
    now = timezone.now()
    if profile["ucp"].get("ucp_version"):
        # A plain UCP platform (its profile was read through the name map): UCP's order event body, whose
        # `event_id` is the delivery's stable Webhook-Id.
        presented = ucp.order_event_to_ucp(
            presented, event_id=str(webhook_id), created_time=now.isoformat(timespec="seconds").replace("+00:00", "Z")
        )
    body = body_bytes(presented).decode()
    fields = {
        "order_id": order_id,
        "platform_id": platform.public_id,
        "url": url,
        "event": event,
        "body": body,
        "attempts": 1,
        "next_attempt_at": now + LEASE,
        "webhook_id": webhook_id,
    }
    if source_key:
        # The unique key decides, in one statement: a re-run of the same outbox row (or a concurrent one) finds
        # the delivery the first run wrote, and goes through its claim (this run's body is dropped). The same
        # statement writes it only while no newer event's delivery exists (`_superseded` on a first attempt).
        delivery = WebhookDelivery(source_key=source_key, **fields)
        if rows.insert_once(delivery, ["source_key"], guard=_none_newer(delivery)):
            return delivery, True
        existing = WebhookDelivery.objects.filter(source_key=source_key).first()
        if existing is not None:
            return existing, False
        return _written_superseded(delivery)
    return WebhookDelivery.objects.create(**fields), True


def _none_newer(delivery: WebhookDelivery) -> tuple[str, list[Any]]:
    """A guard (`rows.insert_once`): one row while no delivery of a newer event (a later orders-outbox row) of the
    same order exists to the same platform and URL, else none. Such a delivery was made claimed for its first
    attempt, so the platform has (or is getting) the whole newer order: this older one must never follow it
    (BCP-WH-02). Without an outbox row of its own the delivery is the newest made (as `_superseded` ranks it)."""
    table, outbox = WebhookDelivery._meta.db_table, OutboxMessage._meta.db_table
    sql = (
        f'SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM "{table}" d JOIN "{outbox}" o ON o."key" = d."source_key" '  # noqa: S608
        f'WHERE d."order_id" = %s AND d."platform_id" = %s AND d."url" = %s '
        f'AND o."id" > (SELECT m."id" FROM "{outbox}" m WHERE m."key" = %s))'
    )
    return sql, [delivery.order_id, delivery.platform_id, delivery.url, delivery.source_key]


def _written_superseded(delivery: WebhookDelivery) -> tuple[WebhookDelivery, bool]:
    """The delivery a newer one supersedes before its first attempt, kept (never sent) so a re-run of its outbox
    row finds it and the admin shows why the platform did not get it. Off the hot path: only after the guard."""
    delivery.status = WebhookDelivery.Status.SUPERSEDED
    delivery.attempts, delivery.next_attempt_at = 0, None
    if not rows.insert_once(delivery, ["source_key"]):
        # A concurrent run of the same outbox row wrote it first: that run attempts it (or it is superseded).
        return WebhookDelivery.objects.get(source_key=delivery.source_key), False
    logger.info("order webhook %s superseded by a later one of order %s", delivery.webhook_id, delivery.order_id)
    return delivery, True


def signed_headers(delivery: WebhookDelivery, raw: bytes, *, now: int | None = None) -> dict[str, str]:
    parts = urlsplit(delivery.url)
    timestamp = str(int(now if now is not None else time.time()))
    headers = {
        "Content-Type": "application/json",
        "BCP-Agent": f'profile="{our_profile_url()}"',
        "Webhook-Id": str(delivery.webhook_id),
        "Webhook-Timestamp": timestamp,
        "Content-Digest": content_digest(raw),
    }
    components = list(WEBHOOK_COMPONENTS)
    if parts.query:
        components.insert(3, "@query")
    message = HttpMessage(
        method="POST",
        authority=parts.netloc.rsplit("@", 1)[-1],
        path=parts.path or "/",
        query=parts.query or None,
        headers=headers,
    )
    headers.update(sign_message(message, components, created=int(timestamp)))
    version = _ucp_version(raw)
    if version is not None:
        # UCP 2026-01-11 order.md "Webhook Signature Verification": a detached JWS over the body in
        # `Request-Signature`, its `kid` one of the `signing_keys` of our /.well-known/ucp.
        headers["UCP-Agent"] = f'profile="{ucp_profile_url(version)}"'
        headers["Request-Signature"] = sign_detached_unencoded(raw, private_key=signing_key(), kid=signing_key_id())
    return headers


def _ucp_version(raw: bytes) -> str | None:
    """The UCP version of a delivery's body, None for a BCP one (decided when it was prepared)."""
    try:
        try:
            parsed = orjson.loads(raw)  # the body as body_bytes wrote it, read at a fraction of json's CPU
        except orjson.JSONDecodeError:  # what orjson refuses (an integer past 64 bits) json still reads
            parsed = json.loads(raw)
        version = parsed.get("ucp", {}).get("version")
    except (ValueError, AttributeError):
        return None
    return version if version in ucp.UCP_VERSIONS else None


def _superseded(delivery: WebhookDelivery) -> bool:
    """Whether a later delivery of the same order (or A2A task) to the same URL exists: its body is the whole
    newer state (BCP-WH-02), so this older one must not be sent after it. "Later" is the order of the events
    (their orders-outbox rows) where both came from that outbox, else the order the deliveries were made in."""
    others = WebhookDelivery.objects.filter(
        order_id=delivery.order_id, platform_id=delivery.platform_id, url=delivery.url
    ).exclude(pk=delivery.pk)
    event_row = OutboxMessage.objects.filter(key=OuterRef("source_key")).values("pk")[:1]
    mine = OutboxMessage.objects.filter(key=delivery.source_key).values_list("pk", flat=True).first()
    if mine is None:
        return others.filter(pk__gt=delivery.pk).exists()
    ranked = others.annotate(event_row=Subquery(event_row))
    return ranked.filter(Q(event_row__gt=mine) | Q(event_row__isnull=True, pk__gt=delivery.pk)).exists()


def _claim(delivery_id: int) -> WebhookDelivery | None:
    """The delivery, leased to this run for one attempt, when it is pending and due; None otherwise. A delivery
    that a later one of the same order supersedes is marked so instead (a first attempt is checked by the
    statement that writes the delivery: `_none_newer`)."""
    now = timezone.now()
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(skip_locked=True)
            .filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now)
            .first()
        )
        if delivery is None:
            return None
        if _superseded(delivery):
            delivery.status = WebhookDelivery.Status.SUPERSEDED
            delivery.next_attempt_at = None
            delivery.save(update_fields=["status", "next_attempt_at"])
            logger.info(
                "order webhook %s superseded by a later one of order %s", delivery.webhook_id, delivery.order_id
            )
            return None
        delivery.attempts += 1
        delivery.next_attempt_at = now + LEASE
        delivery.save(update_fields=["attempts", "next_attempt_at"])
    return delivery


def webhook_deliver(*, delivery_id: int) -> str:
    """One attempt (if due); returns the delivery status afterwards."""
    delivery = _claim(delivery_id)
    if delivery is None:
        return "skipped"
    return _attempt(delivery)


def _attempt(delivery: WebhookDelivery) -> str:
    """POST a delivery this run holds the claim of (attempt number `delivery.attempts`), then record it."""
    raw = delivery.body.encode()
    status_code: int | None = None
    error = ""
    started = time.monotonic()
    try:
        headers = {**(delivery.extra_headers or {}), **signed_headers(delivery, raw)}
        response = outbound.post(delivery.url, raw, headers, max_bytes=64 * 1024)
        status_code = response.status_code
    except outbound.OutboundError as exc:
        error = f"{exc.kind}: {exc.message}"[:300]
    duration = int((time.monotonic() - started) * 1000)
    now = timezone.now()
    attempt = WebhookAttempt(
        delivery=delivery, number=delivery.attempts, status_code=status_code, error=error, duration_ms=duration
    )
    delivery.last_status_code = status_code
    delivery.last_error = error or ("" if status_code and 200 <= status_code < 300 else f"HTTP {status_code}")
    if status_code is not None and 200 <= status_code < 300:
        delivery.status = WebhookDelivery.Status.DELIVERED
        delivery.delivered_at = now
        delivery.next_attempt_at = None
    elif now - delivery.created_at > GIVE_UP_AFTER:
        delivery.status = WebhookDelivery.Status.FAILED
        delivery.next_attempt_at = None
        logger.warning("order webhook %s abandoned after %d attempts", delivery.webhook_id, delivery.attempts)
    else:
        delivery.next_attempt_at = now + timedelta(seconds=next_delay(delivery.attempts))
    # The delivery's outcome and its attempt's log line in one statement (both or neither, no transaction).
    update = rows.Update(delivery, _OUTCOME, {})
    if connection.vendor == "postgresql":
        rows.update_then_insert(update, attempt)
    else:
        with transaction.atomic():  # there the parts run one after another
            rows.update_then_insert(update, attempt)
    return delivery.status


def due_deliveries(*, limit: int = 100) -> list[int]:
    return list(
        WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=timezone.now())
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )


def _webhook_url(profile: dict[str, Any], active: dict[str, str]) -> str | None:
    """The platform's order webhook URL when orders are negotiated and it names one (BCP §8), else None."""
    if ORDER not in active:
        return None
    url = negotiation.platform_capability_config(profile, ORDER).get("webhook_url")
    return url if isinstance(url, str) and url else None


def on_order_changed(
    sender: Any, order_id: str, event: str, outbox_key: str | None = None, order: Order | None = None, **kwargs: Any
) -> None:
    """Receiver of `orders.signals.order_changed`, sent by the orders outbox from the order's task, with no
    transaction open: the webhook is prepared and tried right here, so a placed order stays one Celery task.
    The last receiver (INSTALLED_APPS order), so a slow platform (bounded by `outbound`'s deadline) holds
    back neither the buyer's e-mail nor the NF-e request.

    A database error propagates: the outbox row stays pending and its sweep sends it again; `outbox_key`
    makes that re-run find the delivery a first, half-finished run made. A platform profile that cannot be
    read goes to `prepare_order_webhook`, which retries with backoff (an enqueue failure propagates too).
    A platform whose profile names no `webhook_url` (BCP §8) costs a cached profile read and writes nothing.
    `order`: the order as the outbox task read it, shared by every receiver (not read again here).
    """
    platform = None
    negotiated = None
    snapshot = kwargs.get("snapshot", "")
    if "platform_id" in kwargs:  # absent from rows written before the outbox carried it: the order names it
        platform = platform_get_kept(kwargs["platform_id"]) if kwargs["platform_id"] else None
        if platform is None or not platform.active or not platform.profile_url:
            return  # the storefront's order, or a revoked platform
        try:
            # This process's copy of the profile and its negotiation while the cache's version token is the one
            # it was made under (a token read, no profile unpickled, nothing negotiated again).
            negotiated = negotiation.negotiated(platform.profile_url)
        except ProtocolError:
            enqueue("bcp_app.tasks.prepare_order_webhook", order_id, event, outbox_key, snapshot)
            return
        if _webhook_url(*negotiated) is None:
            return
    try:
        order_webhook_send(
            order_id=order_id,
            event=event,
            source_key=outbox_key,
            snapshot=snapshot,
            platform=platform,
            order=order,
            negotiated=negotiated,
        )
    except WebhookNotReady:
        enqueue("bcp_app.tasks.prepare_order_webhook", order_id, event, outbox_key, snapshot)
