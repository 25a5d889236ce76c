"""Who may open a storefront checkout page (issue 13 §12): the session that created it, or a signed link.

A checkout id alone opens nothing: `/checkout/<id>`, its Pix page, "Gerar novo Pix" and the status poll
answer 404 (as REST answers `not_found`) unless

- the browser's session created the checkout (the storefront cart), or
- the URL carries the checkout's `continue_url` token (`?t=…`): the link an agent hands the buyer and the
  reminder e-mail. The token is the checkout id and an expiry, signed with `SECRET_KEY`
  (`django.core.signing`); it is valid for
  `SHOP_CHECKOUT_LINK_MAX_AGE_SECONDS` after the checkout was created. A valid token admits the browser's
  session to that checkout, so the next pages (the form's POST, the Pix page, the poll) need no token.

So enumerating ids never shows an agent checkout's buyer e-mail, phone or address. The expiry is fixed by the
creation time, so every response carries the same `continue_url` (no per-response churn).
"""

from __future__ import annotations

from django.conf import settings
from django.core import signing
from django.http import Http404, HttpRequest
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from shop.models import Checkout

TOKEN_PARAM = "t"  # noqa: S105 (a query parameter name, not a secret)
_SALT = "shop.checkout.continue"
_SESSION_KEY = "checkout_access"
_SESSION_MAX = 20  # checkouts one browser may have been admitted to (most recent kept)


def _signer() -> signing.Signer:
    return signing.Signer(salt=_SALT)


def _expiry(checkout: Checkout) -> int:
    created = checkout.created_at or timezone.now()
    return int(created.timestamp()) + int(settings.SHOP_CHECKOUT_LINK_MAX_AGE_SECONDS)


def continue_token(checkout: Checkout) -> str:
    """`<expiry>:<signature>` for this checkout (the `t` parameter of its continue_url)."""
    signed = _signer().sign(f"{checkout.public_id}:{_expiry(checkout)}")
    return signed.split(":", 1)[1]


def token_valid(checkout_id: str, token: str) -> bool:
    try:
        value = _signer().unsign(f"{checkout_id}:{token}")
    except signing.BadSignature:
        return False
    public_id, _, expiry = value.rpartition(":")
    if not constant_time_compare(public_id, checkout_id) or not expiry.isdigit():
        return False
    return int(expiry) > timezone.now().timestamp()


def _admitted(request: HttpRequest) -> list[str]:
    value = request.session.get(_SESSION_KEY)
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def may_open(request: HttpRequest, checkout: Checkout) -> bool:
    """True when this browser may see `checkout`; admits its session when the request carries a valid token."""
    session_key = request.session.session_key
    if checkout.session_key and session_key and constant_time_compare(checkout.session_key, session_key):
        return True
    if checkout.public_id in _admitted(request):
        return True
    token = request.GET.get(TOKEN_PARAM, "")
    if token and token_valid(checkout.public_id, token):
        admitted = [item for item in _admitted(request) if item != checkout.public_id]
        request.session[_SESSION_KEY] = [*admitted, checkout.public_id][-_SESSION_MAX:]
        return True
    return False


def require_access(request: HttpRequest, checkout: Checkout) -> Checkout:
    """`checkout` when this browser may open it; else the same 404 as an id that does not exist."""
    if not may_open(request, checkout):
        raise Http404("checkout não encontrado")
    return checkout
