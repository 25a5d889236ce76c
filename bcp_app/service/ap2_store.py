"""Verified AP2 checkout mandates kept with the order (PIX.md §7.3 step 7) and returned on the checkout.

`record(ctx, checkout, verified)` runs at complete right after the mandate verified, before any payment;
`latest(checkout_id)` is what checkout responses echo as `ap2.checkout_mandate` (the ap2_mandate schema
allows it beside `merchant_authorization`, which signs the checkout without `ap2`, so it stays valid) and
what the admin order page shows (`admin_panel`, in `ORDERS_ADMIN_PANELS`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.template.loader import render_to_string

from bcp_app.models import Ap2Mandate
from bcp_app.protocol.keys import b64url_decode


def _total(checkout: dict[str, Any]) -> int | None:
    for total in checkout.get("totals") or []:
        if isinstance(total, dict) and total.get("type") == "total" and isinstance(total.get("amount"), int):
            return total["amount"]
    return None


def _issuer_kid(mandate: str) -> str:

    try:
        header = json.loads(b64url_decode(mandate.split("~", 1)[0].split(".", 1)[0]))
    except (ValueError, UnicodeDecodeError):
        return ""
    return str(header.get("kid", ""))[:200] if isinstance(header, dict) else ""


def record(ctx: Any, checkout: dict[str, Any], verified: Any, *, audience: str) -> Ap2Mandate:
    digest = hashlib.sha256(verified.mandate.encode("ascii", "replace")).hexdigest()
    claims = {key: value for key, value in (verified.claims or {}).items() if key != "checkout_jwt"}
    try:
        with transaction.atomic():
            return Ap2Mandate.objects.create(
                checkout_id=str(checkout["id"]),
                platform_id=ctx.platform_id or "",
                mandate=verified.mandate,
                mandate_sha256=digest,
                issuer_kid=_issuer_kid(verified.mandate),
                audience=audience[:500],
                signed_total=_total(verified.checkout),
                claims=json.loads(json.dumps(claims, default=str)),
            )
    except IntegrityError:  # the same mandate presented again (a retried complete)
        return Ap2Mandate.objects.get(checkout_id=str(checkout["id"]), mandate_sha256=digest)


def latest(checkout_id: str) -> Ap2Mandate | None:
    return Ap2Mandate.objects.filter(checkout_id=checkout_id).first()


def admin_panel(request: HttpRequest, order: Any) -> str:
    mandates = list(Ap2Mandate.objects.filter(checkout_id=order.checkout_id))
    if not mandates:
        return ""
    return render_to_string("bcp/ap2_admin_panel.html", {"mandates": mandates})
