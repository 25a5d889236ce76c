"""Small builders shared by the payments tests (Bacen-shaped notification bodies, signed deliveries)."""

from __future__ import annotations

import json
import secrets
import string
import time
from typing import Any

from django.test import Client

from payments import webhook_auth

SECRET = "sandbox-secret"


def e2eid(seed: str = "") -> str:
    tail = (seed + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(11)))[:11]
    return f"E99999999202607281504{tail}"


def item(*, e2e: str, txid: str, valor: str, horario: str = "2026-07-28T15:04:10.123Z", **extra: Any) -> dict[str, Any]:
    return {"endToEndId": e2e, "txid": txid, "valor": valor, "horario": horario, **extra}


def body(*items: dict[str, Any]) -> bytes:
    return json.dumps({"pix": list(items)}, separators=(",", ":")).encode()


def post_signed(
    client: Client, raw: bytes, *, secret: str = SECRET, timestamp: int | None = None, path: str = ""
) -> Any:
    signature = webhook_auth.sign(secret, raw, timestamp=int(time.time()) if timestamp is None else timestamp)
    return client.post(
        path or "/payments/pix/webhook/pix",
        data=raw,
        content_type="application/json",
        headers={webhook_auth.HEADER: signature},
    )
