"""Sandbox webhook signature (PIX.md §4.4): `BCP-Sandbox-Signature: t=<unix>,v1=<hex hmac>`.

v1 = hex(HMAC_SHA256(secret, f"{t}.".encode() + raw_body)) over the exact bytes received. Several
v1 values are allowed (secret rotation); timestamps older or newer than 300 s are refused (replay).
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterable

HEADER = "BCP-Sandbox-Signature"
TOLERANCE_SECONDS = 300


class SignatureError(ValueError):
    """The delivery is unsigned, forged, malformed or outside the replay window."""


def compute(secret: str, timestamp: int, raw_body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + raw_body, hashlib.sha256).hexdigest()


def sign(secret: str, raw_body: bytes, *, timestamp: int | None = None) -> str:
    t = int(time.time()) if timestamp is None else timestamp
    return f"t={t},v1={compute(secret, t, raw_body)}"


def verify(
    header: str | None,
    raw_body: bytes,
    *,
    secrets: Iterable[str],
    now: float | None = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> int:
    """Return the signed timestamp, or raise SignatureError saying which rule failed."""
    if not header:
        raise SignatureError(f"missing {HEADER} header")
    timestamp: int | None = None
    signatures: list[str] = []
    for part in header.split(","):
        name, sep, value = part.strip().partition("=")
        if not sep:
            raise SignatureError(f"malformed {HEADER} header")
        if name == "t":
            if not value.isdigit() or timestamp is not None:
                raise SignatureError(f"malformed timestamp in {HEADER}")
            timestamp = int(value)
        elif name == "v1":
            signatures.append(value.lower())
    if timestamp is None or not signatures:
        raise SignatureError(f"{HEADER} needs t= and at least one v1=")
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise SignatureError("signature timestamp outside the 300 s window (replay?)")
    usable = [secret for secret in secrets if secret]
    if not usable:
        raise SignatureError("no webhook secret configured")
    for secret in usable:
        expected = compute(secret, timestamp, raw_body)
        if any(hmac.compare_digest(expected, candidate) for candidate in signatures):
            return timestamp
    raise SignatureError("signature does not match the body")
