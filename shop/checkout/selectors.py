"""Checkout reads (the Styleguide's selectors): who may open a checkout, the buyer's consent, and the
`CheckoutView` every transport and page presents. Nothing here writes a checkout.

## Access

Who may open a storefront checkout page (issue 13 §12): the session that created it, or a signed link.

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

## Consent

Buyer consent (LGPD; BCP buyer consent extension): what the buyer decided, when, and through whom.

Stored on the checkout as `buyer_consent` = {purpose: {"granted": bool, "captured_by": "...", "at": RFC 3339}}
for the purposes the buyer decided; a purpose never decided has no entry (the business default applies:
not granted). A decision keeps its timestamp while it stays the same; a change gets a new one and a
`consent_changed` timeline event (append-only history). `captured_by` is `storefront` (the shop's own
checkout page) or `platform:<id>` / `platform:anonymous` (an agent platform over BCP).

Honoured: the shop sends no marketing e-mail; abandoned-checkout reminders (a service e-mail about the
buyer's own checkout, with opt-out) are not sent to a buyer who refused marketing.

## The presented checkout

What `checkout_view()` returns: every member of a BCP checkout response
that the shop decides, already in BCP order and shape, so the presenter only maps names.

Checkout reads: load a checkout, and turn it into the BCP-ready `CheckoutView`.

`checkout_view()` runs a fixed number of queries: none beyond the prefetched checkout, plus one
for the Pix charge when Pix is the selected instrument (payments selector). The order reference is
stored on the checkout itself when it is completed.

## Admin panel

The buyer consent box on the admin order page (`ORDERS_ADMIN_PANELS`): what the buyer decided, when and where.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from django.conf import settings
from django.core import signing
from django.db import connection, models
from django.http import Http404, HttpRequest
from django.template.loader import render_to_string
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.translation import gettext_lazy as _

from orders.labels import local_time_label
from orders.models import Order
from payments.models import CardPayment
from payments.selectors import boleto_for_payment_id, card_payment_for_reference, pix_charge_latest_for_reference
from shop.catalog.schema_org import _absolute as absolute_url_of
from shop.checkout.pricing import is_pix_instrument, pix_offer
from shop.checkout.types import (
    STATUS_CANCELED,
    STATUS_COMPLETED,
    STATUS_IN_PROGRESS,
    STATUS_READY,
    TERMINAL_STATUSES,
    AllocationView,
    AppliedDiscountView,
    BuyerInput,
    CheckoutMessage,
    ContextInput,
    MethodType,
    OptionView,
    Total,
)
from shop.models import Cart, Checkout, CheckoutLine
from shop.store.policies import Policy, store_policies
from shop.store.services import AGENT_ANONYMOUS, AGENT_REGISTERED, AGENT_SIGNED

TOKEN_PARAM = "t"  # noqa: S105 (a query parameter name, not a secret)
_SALT = "shop.checkout.continue"
_SESSION_KEY = "checkout_access"
_SESSION_MAX = 20  # checkouts one browser may have been admitted to (most recent kept)


# `session_key` of a checkout staff made in the back office ("Nova venda", a Pix link sent to a buyer):
# `admin:<user pk>`, written by shop/admin/manual_order.py. The buyer did not start it (no reminder).
STAFF_KEY_PREFIX = "admin:"
AGENT_KEY_PREFIX = "profile:"  # `session_key` of an anonymous agent's checkout: `profile:<sha256 of its URL>`


def agent_key(profile_url_hash: str) -> str:
    return AGENT_KEY_PREFIX + profile_url_hash


def made_on_the_shop(checkout: Checkout) -> bool:
    """Made by a buyer's browser (storefront, permalink) or the admin, not by an agent: nobody will call
    complete, so a payment completes it at once (shop/checkout/settle.py)."""
    return bool(checkout.session_key) and not checkout.session_key.startswith(AGENT_KEY_PREFIX)


SIGNED_PLATFORM_PREFIX = "sig_"  # `platform_id` of a platform that signs but never registered (bcp_app context)


def creator_tier(checkout: Checkout) -> str | None:
    """The trust tier (issue 35) of the agent that created `checkout`, None when no agent did (made on the shop).

    As recorded at creation (`Checkout.creator_tier`); for a checkout created before it was recorded, the least
    trusted tier its row allows: a signing platform's `sig_…` id is signed, another platform registered (it may
    also have signed), no platform anonymous. Erring low refunds a paid checkout rather than placing an order
    the store's setting forbids (shop/checkout/settle.py)."""
    if made_on_the_shop(checkout):
        return None
    if checkout.creator_tier:
        return checkout.creator_tier
    if not checkout.platform_id:
        return AGENT_ANONYMOUS
    return AGENT_SIGNED if checkout.platform_id.startswith(SIGNED_PLATFORM_PREFIX) else AGENT_REGISTERED


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
    value = f"{checkout.public_id}:{_expiry(checkout)}"
    key = (value, settings.SECRET_KEY)
    token = _tokens.get(key)
    if token is None:
        if len(_tokens) >= _TOKENS_MAX:
            _tokens.clear()
        token = _tokens[key] = _signer().sign(value).split(":", 1)[1]
    return token


# The token is a pure function of the checkout's id, its expiry and the secret key; every BCP checkout answer
# carries it, and an agent's create → update → complete are answered by the same process (one keep-alive
# connection): signing it once per checkout saves an HMAC key derivation and signing per answer (issue 34).
_tokens: dict[tuple[str, str], str] = {}
_TOKENS_MAX = 4096


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


MARKETING = "marketing"
PURPOSES = ("marketing", "analytics", "preferences", "sale_of_data")
LABELS = {
    "marketing": _("Ofertas e novidades por e-mail (marketing)"),
    "analytics": _("Análise de navegação e compras (analytics)"),
    "preferences": _("Lembrar preferências"),
    "sale_of_data": _("Venda ou compartilhamento de dados com terceiros"),
}

Decisions = tuple[tuple[str, bool], ...]


def _stamp(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def consent_state(previous: dict | None, decisions: Decisions | None, captured_by: str, now: datetime) -> dict | None:
    """The stored consent after a write that gave `decisions` (None: the buyer gave no consent object)."""
    if decisions is None:
        return None
    previous = previous or {}
    state: dict[str, dict[str, object]] = {}
    for purpose, granted in decisions:
        if purpose not in PURPOSES:
            continue
        before = previous.get(purpose)
        if isinstance(before, dict) and before.get("granted") is granted:
            state[purpose] = before  # same decision: its original time and channel stay the evidence
        else:
            state[purpose] = {"granted": granted, "captured_by": captured_by or "platform:anonymous", "at": _stamp(now)}
    return state


def consent_decisions(stored: dict | None) -> Decisions | None:
    """The stored consent as input again (re-evaluations keep it unchanged)."""
    if stored is None:
        return None
    return tuple(
        (purpose, bool(entry.get("granted")))
        for purpose, entry in stored.items()
        if purpose in PURPOSES and isinstance(entry, dict)
    )


def consent_rows(stored: dict | None) -> list[dict[str, object]]:
    """For the admin pages: one row per purpose, decided or not, in display order."""
    rows = []
    for purpose in PURPOSES:
        entry = (stored or {}).get(purpose)
        decided = isinstance(entry, dict)
        rows.append(
            {
                "purpose": purpose,
                "label": LABELS[purpose],
                "decided": decided,
                "granted": bool(entry.get("granted")) if decided else False,
                "captured_by": entry.get("captured_by", "") if decided else "",
                "at": local_time_label(str(entry.get("at", ""))) if decided else "",
            }
        )
    return rows


if TYPE_CHECKING:
    from shop.models import Checkout


@dataclass(frozen=True)
class LineView:
    id: str  # li_…
    sku: str  # item.id
    title: str
    price: int
    quantity: int
    image_url: str
    totals: tuple[Total, ...]
    requires_shipping: bool


@dataclass(frozen=True)
class DestinationView:
    """`shipping_address` (the buyer's address) or `business_location` (a pickup point)."""

    id: str
    type: Literal["shipping_address", "business_location"]
    name: str = ""  # business_location only
    first_name: str = ""
    last_name: str = ""
    phone_number: str = ""
    street_address: str = ""  # "Rua das Flores, 123"
    extended_address: str = ""  # "Apto 45 - Jardim Paulista"
    address_locality: str = ""
    address_region: str = ""
    postal_code: str = ""  # "01310-100"
    address_country: str = "BR"
    opening_hours: str = ""  # business_location only, human text


@dataclass(frozen=True)
class GroupView:
    id: str
    line_item_ids: tuple[str, ...]
    options: tuple[OptionView, ...]
    selected_option_id: str | None


@dataclass(frozen=True)
class MethodView:
    id: str
    type: MethodType
    line_item_ids: tuple[str, ...]
    destinations: tuple[DestinationView, ...]
    selected_destination_id: str | None
    groups: tuple[GroupView, ...]


@dataclass(frozen=True)
class AvailableMethodView:
    """`fulfillment.available_methods[]`: alternatives the caller can switch to."""

    type: MethodType
    line_item_ids: tuple[str, ...]
    description: str
    fulfillable_on: str = "now"


@dataclass(frozen=True)
class LinkView:
    type: str
    url: str
    title: str = ""


@dataclass(frozen=True)
class InstrumentView:
    """Display-only instrument echo (no credential). `pix` is filled by the selector from payments."""

    id: str
    handler_id: str
    type: str
    selected: bool = True
    installments: int = 1  # card: the chosen plan (shop/checkout/pricing.py)
    installment_amount: int = 0
    first_installment: int = 0
    # card: brand and last four digits of the card charged, as the gateway told them (never the number)
    brand: str = ""
    last_digits: str = ""


@dataclass(frozen=True)
class OrderRef:
    id: str
    permalink_url: str


@dataclass(frozen=True)
class CheckoutView:
    """Everything the BCP checkout response needs, decided by the shop (BCP §4.1)."""

    checkout: Checkout
    id: str
    status: str
    currency: str
    lines: tuple[LineView, ...]
    buyer: BuyerInput | None  # None when the caller never gave a buyer
    totals: tuple[Total, ...]
    messages: tuple[CheckoutMessage, ...]
    links: tuple[LinkView, ...]
    expires_at: datetime | None  # None only on terminal checkouts
    continue_url: str | None  # None on terminal checkouts (BCP-CHK-09)
    fulfillment_methods: tuple[MethodView, ...]
    available_methods: tuple[AvailableMethodView, ...]
    discount_codes: tuple[str, ...]
    discounts_applied: tuple[AppliedDiscountView, ...]
    instruments: tuple[InstrumentView, ...]
    pix_charge: object | None  # payments.models.PixCharge of the selected Pix instrument, if any
    pix_available: bool  # total inside [PIX_MIN_AMOUNT, PIX_MAX_AMOUNT]: the handler may be advertised
    order: OrderRef | None  # only when completed
    platform_id: str | None
    language: str
    signals: dict[str, str]
    context: ContextInput | None
    boleto: object | None = None  # payments.models.BoletoPayment attached to a boleto checkout (issue 37)

    @property
    def pix_total(self) -> int:
        """The total if paid by Pix (the shop's Pix discount applied; the total itself when Pix is selected).

        Lazy: it reads the cached store row, which a non-Pix checkout view otherwise never needs.
        """
        items = sum(t.amount for t in self.totals if t.type in ("subtotal", "discount", "items_discount"))
        selected = is_pix_instrument(self.checkout.payment_instrument)
        # a card's installment interest is not paid by Pix
        total = self.checkout.total_amount - self.card_interest
        return pix_offer(items_after_coupons=items, total=total, pix_selected=selected)[1]

    @property
    def stock_held_until(self) -> datetime | None:
        """Until when this checkout's items are held for the buyer, or None when nothing is held.

        Stock is taken only with a Pix charge (shop.checkout.charge.hold_for_charge) and given back when that
        charge expires: its `expires_at` is the promise. The checkout's own `expires_at` holds nothing."""
        charge = self.pix_charge
        held = self.checkout.stock_reserved and self.checkout.paid_at is None and self.status == STATUS_READY
        if not held or charge is None or getattr(charge, "status", "") != "active":
            return None
        expires_at: datetime = charge.expires_at  # type: ignore[attr-defined]
        return expires_at

    @property
    def card_interest(self) -> int:
        """The installment interest in the total while a card with interest is the selected instrument."""
        instrument = self.checkout.payment_instrument or {}
        return int(instrument.get("interest") or 0) if instrument.get("type") == "card" else 0


class CheckoutNotFound(LookupError):
    """No checkout with that public id (BCP `not_found`)."""


class RowReader:
    """Model instances from the columns of a hand-written SELECT: `columns(...)` lists every concrete column of
    each model (built once, with the SQL), `instances(values)` turns one row's values into the models, each
    column through the converters the ORM applies (JSON text, SQLite's booleans, …) and `Model.from_db`, so
    the instances are the ORM's own. Hot reads use it where compiling a query set cost more CPU than Postgres
    spent running it (issue 34)."""

    def __init__(self, *models_: type[models.Model]) -> None:
        self.models = models_

    def columns(self, *aliases: str) -> str:
        return ", ".join(
            f"{alias}.{connection.ops.quote_name(field.column)}"
            for alias, model in zip(aliases, self.models, strict=True)
            for field in model._meta.concrete_fields
        )

    @functools.cache  # noqa: B019 (a few module-level readers, kept for the process)
    def _readers(self, vendor: str) -> tuple[tuple[type[models.Model], list[str], list[tuple[Any, list[Any]]]], ...]:
        """Per model: its attnames and, per field, the ORM's converters (they depend on the backend only)."""
        readers = []
        for model in self.models:
            fields = model._meta.concrete_fields
            converters = []
            for field in fields:
                column = field.get_col(model._meta.db_table)
                converters.append(
                    (column, connection.ops.get_db_converters(column) + field.get_db_converters(connection))
                )
            readers.append((model, [field.attname for field in fields], converters))
        return tuple(readers)

    def instances(self, values: Any) -> list[Any]:
        """One instance per model (None where a LEFT JOIN found no row: a NULL primary key)."""
        return [self.instance(values, index) for index in range(len(self.models))]

    def instance(self, values: Any, index: int) -> Any:
        """The instance of the `index`-th model of one row's values (None: a NULL primary key)."""
        readers = self._readers(connection.vendor)
        start = sum(len(attnames) for _, attnames, _ in readers[:index])
        model, attnames, converters = readers[index]
        chunk = values[start : start + len(attnames)]
        if chunk[0] is None:
            return None
        converted = []
        for value, (column, functions) in zip(chunk, converters, strict=True):
            for convert in functions:
                value = convert(value, column, connection)
            converted.append(value)
        return model.from_db(connection.alias, attnames, converted)


_CHECKOUT_ROWS = RowReader(Checkout, CheckoutLine)


@functools.cache
def _checkout_sql() -> str:
    checkout, line = Checkout._meta.db_table, CheckoutLine._meta.db_table  # from the models; the id is a parameter
    return (
        f"SELECT {_CHECKOUT_ROWS.columns('c', 'l')} FROM {checkout} c"  # noqa: S608
        f" LEFT JOIN {line} l ON l.checkout_id = c.id WHERE c.public_id = %s ORDER BY l.position, l.id"
    )


def checkout_by_public_id(public_id: str) -> Checkout:
    """The checkout with its lines (ordered, CheckoutLine's ordering) in one hand-written statement built once:
    compiling the ORM's join was most of the storefront checkout page's own read (issue 34). Raises
    CheckoutNotFound."""
    if "\x00" in public_id:
        raise CheckoutNotFound(public_id)  # no row can match, and PostgreSQL would refuse the parameter
    with connection.cursor() as cursor:
        cursor.execute(_checkout_sql(), [public_id])
        rows = cursor.fetchall()
    if not rows:
        raise CheckoutNotFound(public_id)
    checkout: Checkout = _CHECKOUT_ROWS.instance(rows[0], 0)
    lines: list[CheckoutLine] = []
    for row in rows:
        line = _CHECKOUT_ROWS.instance(row, 1)
        if line is not None:
            line._state.fields_cache["checkout"] = checkout  # one instance for all of them, as a prefetch gives
            lines.append(line)
    return with_lines(checkout, lines)


def kept_lines(checkout: Checkout) -> list[CheckoutLine]:
    """`list(checkout.lines.all())`: the lines kept on the checkout (read with it, or `with_lines`) without a related
    manager and a queryset made per call (issue 34: the hot path asks five times a request); read otherwise."""
    cache = getattr(checkout, "_prefetched_objects_cache", None)
    rows = cache.get("lines") if cache else None
    kept = getattr(rows, "_result_cache", None)
    return list(kept) if kept is not None else list(checkout.lines.all())


def with_lines(checkout: Checkout, lines: list[CheckoutLine]) -> Checkout:
    """Remember the lines just written or read (in position order) as `checkout.lines`: the response is
    rendered from memory instead of reading the checkout and its lines again."""
    rows = checkout.lines.all()
    rows._result_cache = list(lines)
    rows._prefetch_done = True
    checkout._prefetched_objects_cache = {"lines": rows}
    return checkout


def absolute_url(path: str) -> str:
    return f"{settings.BCP_PUBLIC_URL}{path}"


def checkout_continue_url(checkout: Checkout, *, page: str = "checkout:resume") -> str:
    """The buyer's link to the checkout (or its Pix page), with the signed token that opens it (access.py)."""
    return absolute_url(f"{_checkout_path(page, checkout.public_id)}?{TOKEN_PARAM}={continue_token(checkout)}")


def _checkout_path(page: str, checkout_id: str) -> str:
    """`reverse(page, kwargs={"checkout_id": …})`, reversed once per page, URLconf and script prefix with a stand-in id
    that the id replaces (issue 34: every BCP checkout answer reversed its continue URL). An id with a character
    the URL would quote (none of ours) is reversed as before."""
    if not _URL_SAFE_ID.fullmatch(checkout_id):
        return reverse(page, kwargs={"checkout_id": checkout_id})
    key = (page, get_urlconf(), get_script_prefix())
    kept = _PATHS.get(key)
    if kept is None:
        if len(_PATHS) >= 64:
            _PATHS.clear()
        kept = _PATHS[key] = reverse(page, kwargs={"checkout_id": _STAND_IN}).partition(_STAND_IN)
    head, _found, tail = kept
    return f"{head}{checkout_id}{tail}"


_URL_SAFE_ID = re.compile(r"[A-Za-z0-9_-]+")
_STAND_IN = "checkout_0STANDIN0"
_PATHS: dict[tuple[str, str | None, str], tuple[str, str, str]] = {}


def checkout_links(language: str = "pt-br") -> tuple[LinkView, ...]:
    """BCP §4.3 links: terms and privacy (required), returns and shipping; a policy kept elsewhere links there.
    Titles in `language`, the checkout's (BCP §5.1), like its `policies[]`. Built once per set of policies (kept
    by the process under the store token: `store_policies` gives back the same tuple until the settings change);
    every BCP checkout answer carries them (issue 34)."""
    policies = store_policies(language)
    kept = _LINKS.get(id(policies))
    if kept is None or kept[0] is not policies:
        if len(_LINKS) >= 64:
            _LINKS.clear()
        kept = _LINKS[id(policies)] = (
            policies,
            tuple(LinkView(policy.link_type, policy.url, policy.title) for policy in policies),
        )
    return kept[1]


# id of a `store_policies` tuple → (that tuple, its links): the tuple is kept with them, so an id reused by another
# tuple after the first was dropped never matches.
_LINKS: dict[int, tuple[tuple[Policy, ...], tuple[LinkView, ...]]] = {}


def _totals(raw: list[dict[str, object]]) -> tuple[Total, ...]:
    return tuple(
        Total(type=str(t["type"]), amount=int(t["amount"]), display_text=str(t.get("display_text", "")))  # type: ignore[arg-type]
        for t in raw
    )


def _destination(raw: dict[str, object]) -> DestinationView:
    known = DestinationView.__dataclass_fields__
    return DestinationView(**{k: v for k, v in raw.items() if k in known})  # type: ignore[arg-type]


def _methods(snapshot: dict[str, object]) -> tuple[MethodView, ...]:
    methods = []
    for m in snapshot.get("methods", []) or []:  # type: ignore[union-attr]
        groups = tuple(
            GroupView(
                id=g["id"],
                line_item_ids=tuple(g["line_item_ids"]),
                options=tuple(
                    OptionView(
                        id=o["id"],
                        title=o["title"],
                        description=o["description"],
                        amount=o["amount"],
                        carrier=o["carrier"],
                        days_min=o.get("days_min"),
                        days_max=o.get("days_max"),
                    )
                    for o in g["options"]
                ),
                selected_option_id=g["selected_option_id"],
            )
            for g in m["groups"]
        )
        methods.append(
            MethodView(
                id=m["id"],
                type=m["type"],
                line_item_ids=tuple(m["line_item_ids"]),
                destinations=tuple(_destination(d) for d in m["destinations"]),
                selected_destination_id=m["selected_destination_id"],
                groups=groups,
            )
        )
    return tuple(methods)


def _boleto(checkout: Checkout) -> object | None:
    """The boleto attached to a boleto checkout (a query only for those): line, barcode, PDF for the agent."""
    if (checkout.payment_instrument or {}).get("type") != "boleto" or not checkout.payment_txid:
        return None
    return boleto_for_payment_id(checkout.payment_txid)


CHARGED_STATUSES = (STATUS_IN_PROGRESS, STATUS_COMPLETED)
CARD_IN_USE = (CardPayment.Status.APPROVED, CardPayment.Status.PENDING)


def _card_used(checkout: Checkout) -> dict[str, str]:
    """Brand and last four digits of the card charged for a card checkout: kept with the instrument when complete
    placed the order (`complete._finish_card`), else (settled later by the webhook or the sweep, or still pending)
    read from the card payment the gateway's answer wrote, a query only once it was charged. A declined attempt's
    card is not the one in use: only an approved or pending payment's card is named."""
    instrument = checkout.payment_instrument or {}
    if instrument.get("type") != "card" or checkout.status not in CHARGED_STATUSES:
        return {}
    if instrument.get("last_digits"):
        return {"brand": str(instrument.get("brand") or ""), "last_digits": str(instrument["last_digits"])}
    payment = card_payment_for_reference(checkout.public_id)
    if payment is None or payment.status not in CARD_IN_USE or not payment.card_last_digits:
        return {}
    return {"brand": payment.card_brand, "last_digits": payment.card_last_digits}


def _pix_charge(checkout: Checkout) -> object | None:
    if (checkout.payment_instrument or {}).get("type") != "pix":
        return None

    charge = pix_charge_latest_for_reference(checkout.public_id)
    # A revoked charge was replaced or withdrawn (total changed, checkout no longer ready): not shown. Nor is the
    # active charge of a canceled checkout: its revoke runs after the cancel commits (PIX.md §2.4), and the cancel's
    # own answer must not hand the agent a QR code the buyer could still pay.
    if charge is None or charge.status == "revoked":
        return None
    return None if checkout.status == STATUS_CANCELED and charge.status == "active" else charge


def buyer_input_of(checkout: Checkout) -> BuyerInput | None:
    """The stored buyer as input, or None when the buyer was never given (shared by view and re-evaluation)."""
    if not checkout.buyer_given:
        return None
    return BuyerInput(
        first_name=checkout.buyer_first_name,
        last_name=checkout.buyer_last_name,
        email=checkout.buyer_email,
        phone_number=checkout.buyer_phone,
        tax_id=checkout.buyer_tax_id,
        consent=consent_decisions(checkout.buyer_consent),
    )


def checkout_view(
    checkout: Checkout, *, messages: list[CheckoutMessage] | None = None, page: bool = False
) -> CheckoutView:
    """Everything a BCP checkout response needs. `messages` defaults to the stored ones. `page`: for the
    storefront's own checkout page, which shows neither the policy links nor the continue URL (a reverse and a
    signature per view, issue 34): both are left empty."""
    terminal = checkout.status in TERMINAL_STATUSES
    lines = tuple(
        LineView(
            id=line.public_id,
            sku=line.sku,
            title=line.title,
            price=line.unit_price,
            quantity=line.quantity,
            # Lines stored before image URLs were made absolute still hold a path.
            image_url=absolute_url_of(settings.BCP_PUBLIC_URL, line.image_url) if line.image_url else "",
            totals=(
                Total("subtotal", line.unit_price * line.quantity),
                Total("total", line.unit_price * line.quantity),
            ),
            requires_shipping=line.requires_shipping,
        )
        for line in kept_lines(checkout)
    )
    buyer = buyer_input_of(checkout)
    snapshot = checkout.fulfillment_snapshot or {}
    instrument = checkout.payment_instrument
    instruments = (
        (
            InstrumentView(
                id=instrument["id"],
                handler_id=instrument["handler_id"],
                type=instrument["type"],
                installments=int(instrument.get("installments") or 1),
                installment_amount=int(instrument.get("installment_amount") or 0),
                first_installment=int(instrument.get("first_installment") or 0),
                **_card_used(checkout),
            ),
        )
        if instrument
        else ()
    )
    order = (
        OrderRef(id=checkout.order_id, permalink_url=checkout.order_permalink_url)
        if checkout.status == STATUS_COMPLETED and checkout.order_id
        else None
    )
    expires_at: datetime | None = None if terminal else checkout.expires_at
    return CheckoutView(
        checkout=checkout,
        id=checkout.public_id,
        status=checkout.status,
        currency=checkout.currency,
        lines=lines,
        buyer=buyer,
        totals=_totals(checkout.totals),
        messages=tuple(messages if messages is not None else [CheckoutMessage.from_dict(m) for m in checkout.messages]),
        links=() if page else checkout_links(checkout.language),
        expires_at=expires_at,
        continue_url=None if terminal or page else checkout_continue_url(checkout),
        fulfillment_methods=_methods(snapshot),
        available_methods=tuple(
            AvailableMethodView(
                type=a["type"],
                line_item_ids=tuple(a["line_item_ids"]),
                description=a["description"],
                fulfillable_on=a.get("fulfillable_on", "now"),
            )
            for a in snapshot.get("available_methods", []) or []
        ),
        discount_codes=tuple(checkout.discount_codes or ()),
        discounts_applied=tuple(
            AppliedDiscountView(
                code=d["code"],
                title=d["title"],
                amount=d["amount"],
                method=d.get("method", "across"),
                automatic=bool(d.get("automatic", False)),
                allocations=tuple(AllocationView(a["path"], a["amount"]) for a in d.get("allocations", [])),
            )
            for d in checkout.discounts_applied
        ),
        instruments=instruments,
        pix_charge=_pix_charge(checkout),
        pix_available=settings.PIX_MIN_AMOUNT <= checkout.total_amount <= settings.PIX_MAX_AMOUNT,
        order=order,
        platform_id=checkout.platform_id,
        language=checkout.language,
        signals=dict(checkout.signals or {}),
        context=ContextInput.stored(checkout.context) if checkout.context else None,
        boleto=_boleto(checkout),
    )


def consent_admin_panel(request: HttpRequest, order: Order) -> str:
    stored = Checkout.objects.filter(public_id=order.checkout_id).values_list("buyer_consent", flat=True).first()
    context = {"rows": consent_rows(stored), "given": stored is not None}
    return render_to_string("shop/checkout/consent_panel.html", context)
