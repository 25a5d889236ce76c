"""Checkout reads: load a checkout, and turn it into the BCP-ready `CheckoutView`.

`checkout_view()` runs a fixed number of queries: none beyond the prefetched checkout, plus one
for the Pix charge when Pix is the selected instrument (payments selector). The order reference is
stored on the checkout itself when it is completed.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.urls import reverse

from payments.selectors import pix_charge_latest_for_reference
from shop.catalog.schema_org import _absolute as absolute_url_of
from shop.checkout.access import TOKEN_PARAM, continue_token
from shop.checkout.consent import consent_decisions
from shop.checkout.outputs import (
    AllocationView,
    AppliedDiscountView,
    AvailableMethodView,
    CheckoutView,
    DestinationView,
    GroupView,
    InstrumentView,
    LineView,
    LinkView,
    MethodView,
    OptionView,
    OrderRef,
    Total,
)
from shop.checkout.types import STATUS_COMPLETED, TERMINAL_STATUSES, BuyerInput, CheckoutMessage, ContextInput
from shop.models import Checkout, CheckoutLine
from shop.store.policies import store_policies


class CheckoutNotFound(LookupError):
    """No checkout with that public id (BCP `not_found`)."""


def checkout_by_public_id(public_id: str) -> Checkout:
    """The checkout with its lines (ordered) in one query: the lines with their checkout joined; a checkout
    without lines (rare: removing every line cancels it) takes a second one. Raises CheckoutNotFound."""
    lines = list(CheckoutLine.objects.filter(checkout__public_id=public_id).select_related("checkout"))
    if lines:
        checkout = lines[0].checkout
        for line in lines:
            line.checkout = checkout  # one instance for all of them, as a prefetch would give
        return with_lines(checkout, lines)
    found = Checkout.objects.filter(public_id=public_id).first()
    if found is None:
        raise CheckoutNotFound(public_id)
    return with_lines(found, [])


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
    path = reverse(page, kwargs={"checkout_id": checkout.public_id})
    return absolute_url(f"{path}?{TOKEN_PARAM}={continue_token(checkout)}")


def checkout_links(language: str = "pt-br") -> tuple[LinkView, ...]:
    """BCP §4.3 links: terms and privacy (required), returns and shipping; a policy kept elsewhere links there.
    Titles in `language`, the checkout's (BCP §5.1), like its `policies[]`."""
    return tuple(LinkView(policy.link_type, policy.url, policy.title) for policy in store_policies(language))


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


def _pix_charge(checkout: Checkout) -> object | None:
    if (checkout.payment_instrument or {}).get("type") != "pix":
        return None

    charge = pix_charge_latest_for_reference(checkout.public_id)
    # A revoked charge was replaced or withdrawn (total changed, checkout no longer ready): not shown.
    return charge if charge is not None and charge.status != "revoked" else None


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


def checkout_view(checkout: Checkout, *, messages: list[CheckoutMessage] | None = None) -> CheckoutView:
    """Everything a BCP checkout response needs. `messages` defaults to the stored ones."""
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
        for line in checkout.lines.all()
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
        links=checkout_links(checkout.language),
        expires_at=expires_at,
        continue_url=None if terminal else checkout_continue_url(checkout),
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
        context=ContextInput(**checkout.context) if checkout.context else None,
    )
