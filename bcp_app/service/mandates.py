"""AP2 inside the BCP operations (BCP-PAY-09, BCP.md §11.5, PIX.md §7): while AP2 is negotiated every checkout
response carries the shop's merchant authorization, and complete is refused before any payment unless the
checkout mandate verifies. The signatures and the mandate check are protocol (bcp_app/protocol/ap2.py,
ap2_mandate.py); the verified mandate is kept with the order (ap2_store.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bcp_app.protocol import keys
from bcp_app.protocol.ap2 import Ap2Error, with_merchant_authorization
from bcp_app.protocol.ap2_mandate import verify_checkout_mandate
from bcp_app.protocol.names import AP2_MANDATE
from bcp_app.service import discovery
from bcp_app.service.ap2_store import latest, record


def _is_checkout(body: Mapping[str, Any]) -> bool:
    return isinstance(body.get("id"), str) and body.get("ucp", {}).get("status") != "error"


def sign_response(ctx: Any, body: dict[str, Any]) -> dict[str, Any]:
    """Every checkout response carries `ap2.merchant_authorization` while AP2 is negotiated (BCP.md §11.5)."""
    if not ctx.has(AP2_MANDATE) or not _is_checkout(body):
        return body
    signed = with_merchant_authorization(body, private_key=keys.signing_key(), kid=keys.signing_key_id())
    if body.get("status") in ("complete_in_progress", "completed"):
        stored = latest(str(body["id"]))  # the verified mandate kept with the order (PIX.md §7.3 step 7)
        if stored is not None:
            signed["ap2"] = {**signed["ap2"], "checkout_mandate": stored.mandate}
    return signed


def mandate_refusal(ctx: Any, current: dict[str, Any], ap2_member: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """At complete under AP2 (PIX.md §7.3), before any payment: None when the checkout mandate verifies,
    else the unchanged checkout with a recoverable error naming the problem (no order, no charge)."""
    if not ctx.has(AP2_MANDATE) or not _is_checkout(current):
        return None
    mandate = ap2_member.get("checkout_mandate") if isinstance(ap2_member, Mapping) else None
    try:
        verified = verify_checkout_mandate(
            mandate,
            platform_keys=ctx.profile.get("keys") or [],
            shop_keys=keys.published_jwks(),
            audience=discovery.profile_url(),
            checkout=current,
        )
    except Ap2Error as exc:
        refused = {key: value for key, value in current.items() if key != "ap2"}
        message = {
            "type": "error",
            "code": exc.code,
            "severity": "recoverable",
            "path": "$.ap2.checkout_mandate",
            "content": exc.content,
        }
        refused["messages"] = [*(current.get("messages") or []), message]
        return sign_response(ctx, refused)
    record(ctx, current, verified, audience=discovery.profile_url())  # evidence, before any payment
    return None
