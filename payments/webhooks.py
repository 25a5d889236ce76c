"""Receiving PSP callbacks (PIX.md §4.4, §5): authenticate, store raw in the inbox, enqueue, answer fast.

Sandbox (`BCP_PIX_SANDBOX`): HMAC `BCP-Sandbox-Signature` over the exact bytes received.
Bacen PSPs: mTLS is terminated at the reverse proxy (`ssl_verify_client on`, CA of the PSP); the
proxy forwards the verification result in the header named by `PIX_WEBHOOK_MTLS_HEADER` (e.g.
`X-SSL-Client-Verify: SUCCESS`), which only it can set. Without that setting nothing vouches for a
delivery, so every one is refused (401; `check --deploy` names it, payments.E001). The body itself is only a
hint: the task confirms every Pix with `GET /cob/{txid}` before settling, so a forged callback cannot settle.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from kernel.json_limits import loads_notice
from payments import webhook_auth
from payments.med.notifications import parse_notification as parse_med_notification
from payments.med.services import infraction_event_store
from payments.psp.base import parse_notification
from payments.settlement import pix_webhook_events_store

MAX_BODY_BYTES = 256 * 1024
_KEPT_HEADERS = ("content-type", "user-agent", "x-forwarded-for", webhook_auth.HEADER.lower())


def kept_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The few request headers stored with an inbox row (what a later look at a delivery needs, nothing secret)."""
    return {key.lower(): value for key, value in headers.items() if key.lower() in _KEPT_HEADERS}


def _header(headers: Mapping[str, str], name: str) -> str | None:
    lowered = name.lower()
    for key, value in headers.items():
        if key.lower() == lowered:
            return value
    return None


def authenticate(raw_body: bytes, headers: Mapping[str, str]) -> str | None:
    """Return None when the delivery is authentic, else the reason it is refused."""
    if settings.BCP_PIX_SANDBOX:
        try:
            webhook_auth.verify(
                _header(headers, webhook_auth.HEADER),
                raw_body,
                secrets=[settings.PIX_SANDBOX_WEBHOOK_SECRET, getattr(settings, "PIX_SANDBOX_WEBHOOK_SECRET_OLD", "")],
            )
        except webhook_auth.SignatureError as exc:
            return str(exc)
        return None
    mtls_header = getattr(settings, "PIX_WEBHOOK_MTLS_HEADER", "")
    if not mtls_header:
        # Each accepted delivery queues a PSP lookup: unauthenticated, anyone could make the shop do that.
        return "PIX_WEBHOOK_MTLS_HEADER is not configured: the PSP's client certificate cannot be verified"
    value = _header(headers, mtls_header) or ""
    if not hmac.compare_digest(value.encode(), getattr(settings, "PIX_WEBHOOK_MTLS_VALUE", "SUCCESS").encode()):
        return "client certificate not verified by the proxy"
    return None


@dataclass(frozen=True)
class Refusal:
    """An inbox's answer when a delivery is not stored: the HTTP status and its JSON body."""

    status: int
    body: dict[str, Any]


def read_pix_notice[T](
    raw_body: bytes, headers: Mapping[str, str], parse: Callable[[Any], T]
) -> tuple[Any, T] | Refusal:
    """What every inbox the Pix PSP posts to shares (Pix, MED, Pix Automático `/rec` and `/cobr`): the size, the
    PSP's authentication, bounded JSON without control characters, then the notice's own parser. Returns the JSON
    and what `parse` made of it, or the Refusal: 413 too large, 401 forged, 400 malformed (nothing is stored)."""
    if len(raw_body) > MAX_BODY_BYTES:
        return Refusal(413, {"error": "body_too_large"})
    refusal = authenticate(raw_body, headers)
    if refusal is not None:
        return Refusal(401, {"error": "unauthenticated", "detail": refusal})
    try:
        body = loads_notice(raw_body, max_bytes=MAX_BODY_BYTES)
        return body, parse(body)
    except (ValueError, UnicodeDecodeError) as exc:
        return Refusal(400, {"error": "malformed", "detail": str(exc)[:200]})


def receive_pix_webhook(raw_body: bytes, headers: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON body). 401 forged, 400 malformed (nothing stored), 200 stored or duplicate."""
    read = read_pix_notice(raw_body, headers, parse_notification)
    if isinstance(read, Refusal):
        return read.status, read.body
    body, payments = read
    items = body.get("pix") if isinstance(body, dict) else body
    stored, duplicates = pix_webhook_events_store(
        items=list(zip(payments, items, strict=True)),
        raw_body=raw_body,
        headers=kept_headers(headers),
        source="webhook",
    )
    return 200, {"received": stored, "duplicates": duplicates}


def receive_med_webhook(raw_body: bytes, headers: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
    """The PSP's MED notification (`payments/med/notifications.py`), authenticated like the Pix webhook (the proxy's
    verified client certificate; the sandbox's HMAC). 401 forged, 400 malformed (nothing stored), 200 stored or a
    duplicate (the same event key again changes nothing)."""
    read = read_pix_notice(raw_body, headers, parse_med_notification)
    if isinstance(read, Refusal):
        return read.status, read.body
    body, notification = read
    stored = infraction_event_store(notification=notification, payload=body, raw_body=raw_body)
    return 200, {"received": 1 if stored else 0, "duplicates": 0 if stored else 1}
