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

Over BCP the same rule holds (`CheckoutOwner`, issue 31): a platform's checkout is its platform's; a checkout
created without a platform is bound to who created it, the caller's profile URL (its `session_key` holds
`profile:<sha256 of the URL>`) or, through a permalink, the browser's session. Anyone else gets `not_found`.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.http import Http404, HttpRequest
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from shop.models import Cart, Checkout

TOKEN_PARAM = "t"  # noqa: S105 (a query parameter name, not a secret)
_SALT = "shop.checkout.continue"
_SESSION_KEY = "checkout_access"
_SESSION_MAX = 20  # checkouts one browser may have been admitted to (most recent kept)


AGENT_KEY_PREFIX = "profile:"  # `session_key` of an anonymous agent's checkout: `profile:<sha256 of its URL>`


def agent_key(profile_url_hash: str) -> str:
    return AGENT_KEY_PREFIX + profile_url_hash


def made_on_the_shop(checkout: Checkout) -> bool:
    """Made by a buyer's browser (storefront, permalink) or the admin, not by an agent: nobody will call
    complete, so a payment completes it at once (shop/checkout/settle.py)."""
    return bool(checkout.session_key) and not checkout.session_key.startswith(AGENT_KEY_PREFIX)


@dataclass(frozen=True)
class CheckoutOwner:
    """A BCP caller as an owner: its platform id (None: anonymous) and the key an anonymous caller's checkouts
    carry in `session_key` (`profile:<hash>` for an agent, the session key for a permalink's browser)."""

    platform_id: str | None
    key: str

    def owns(self, row: Checkout | Cart) -> bool:
        if row.platform_id:
            return row.platform_id == self.platform_id
        # no owner recorded (made before the binding): nobody over BCP
        return bool(row.session_key) and constant_time_compare(row.session_key, self.key)


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
