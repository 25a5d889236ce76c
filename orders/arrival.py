"""An expectation's arrival as dates: its business days ("Chega em 3 a 5 dias úteis", kept at checkout) counted from
the shipment, or, when the shop set handling days ("prazo de postagem"), its handling + the carrier's days from the
payment (the order: it is placed once paid) until it ships, then the carrier's from the shipment; on the shop's
calendar (kernel.business_days: no weekends, national holidays or Carnival).

The buyer's page, the admin, the shipped e-mail and BCP Get Order (its expectation's `description`: the spec has
no member for a dated window) read it here. An expectation without days (an order placed before they were kept,
a pickup, a promise staff re-worded) has no dates: its words stay.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

from django.utils import formats, timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from kernel.business_days import add_business_days
from kernel.money import PT_BR
from orders.models import DeliveryDaysFrom, FulfillmentEvent, FulfillmentEventType, FulfillmentExpectation, Order
from orders.summary import ExpectationProgress


def last_shipment(line_ids: Iterable[str], events: Iterable[FulfillmentEvent]) -> datetime | None:
    """When the last shipment with any of these lines left (the estimate runs from the latest), or None."""
    lines = set(line_ids)
    return max(
        (
            e.occurred_at
            for e in events
            if e.type == FulfillmentEventType.SHIPPED and any(i["id"] in lines for i in e.line_items)
        ),
        default=None,
    )


def days_from_payment(days: tuple[int, int], handling_days: int) -> tuple[int, int]:
    """The shop's one rule for a shipping promise when it set handling days ("prazo de postagem"): it posts within
    `handling_days` business days of the payment, then the carrier's `days`: (handling + low, handling + high)
    business days from the payment. The order keeps these (orders/services/placement.py), the agents' options and
    the admin's "Prazo" say them (`promise_words`)."""
    low, high = (max(0, int(day)) for day in days)
    handling = max(0, int(handling_days))
    return handling + min(low, high), handling + max(low, high)


def promise_words(carrier_words: str, handling_days: int, days: tuple[int, int] | None) -> str:
    """A shipping promise as the buyer's checkout says it (the carrier's days under the options, and "the days count
    from the posting: the shop posts within N business days of the payment"), in one text for those who read only
    the option's or the order's words (BCP agents, the admin's "Prazo"): "Chega em 3 a 5 dias úteis após a postagem;
    a loja posta em até 2 dias úteis após o pagamento (5 a 7 dias úteis desde o pagamento)". The carrier's words
    alone when the shop set no handling days; without the carrier's days (words kept before they were), no total."""
    if handling_days <= 0 or not carrier_words:
        return carrier_words
    posting = ngettext(
        "a loja posta em até %(n)d dia útil após o pagamento",
        "a loja posta em até %(n)d dias úteis após o pagamento",
        handling_days,
    ) % {"n": handling_days}
    if days is None:
        return _("%(promise)s; %(posting)s") % {"promise": carrier_words, "posting": posting}
    low, high = days_from_payment(days, handling_days)
    if low == high:
        total = ngettext("%(n)d dia útil desde o pagamento", "%(n)d dias úteis desde o pagamento", high) % {"n": high}
    else:
        total = ngettext(
            "%(min)d a %(max)d dia útil desde o pagamento", "%(min)d a %(max)d dias úteis desde o pagamento", high
        ) % {"min": low, "max": high}
    return _("%(promise)s após a postagem; %(posting)s (%(total)s)") % {
        "promise": carrier_words,
        "posting": posting,
        "total": total,
    }


def expectation_promise(expectation: FulfillmentExpectation, words: str) -> str:
    """`promise_words` of an order's shipping expectation (its kept days count from the payment when the shop set
    handling days: the carrier's are those less the handling); its `words` as they are otherwise."""
    handling = expectation.handling_days or 0
    low, high = expectation.days_min, expectation.days_max
    if expectation.days_from != DeliveryDaysFrom.PAYMENT or not handling or low is None or high is None:
        return words
    return promise_words(words, handling, (max(0, low - handling), max(0, high - handling)))


def arrival_window(
    expectation: FulfillmentExpectation, order: Order, *, shipped_at: datetime | None
) -> tuple[date, date] | None:
    """(first, last) day the expectation's parcel should arrive, or None when that cannot be said: no days kept, or
    days that count from shipping and nothing shipped yet (the shop set no handling days to date the posting).

    Days that count from the payment (the shop's handling days + the carrier's) date the window from the payment
    until the parcel ships; from then on the carrier's part alone counts from the shipment, as the carrier does."""
    low, high = expectation.days_min, expectation.days_max
    if low is None or high is None:
        return None
    if expectation.days_from == DeliveryDaysFrom.PAYMENT and shipped_at is None:
        start: datetime | None = order.placed_at or timezone.now()  # placement renders its BCP body before the INSERT
    elif expectation.days_from == DeliveryDaysFrom.PAYMENT:
        start, handling = shipped_at, expectation.handling_days or 0
        low, high = max(0, low - handling), max(0, high - handling)
    elif expectation.days_from == DeliveryDaysFrom.SHIPPING:
        start = shipped_at
    else:
        return None
    if start is None:
        return None
    day = timezone.localdate(start)  # the shop's day (America/Sao_Paulo), not UTC's
    return add_business_days(day, low), add_business_days(day, high)


def expectation_arrival(
    expectation: FulfillmentExpectation,
    order: Order,
    progress: ExpectationProgress,
    events: Iterable[FulfillmentEvent],
) -> tuple[date, date] | None:
    """The expectation's arrival window, from its lines' last shipment once some of its own units left (a part split
    off and still in the shop does not take the date of the part that shipped)."""
    sent = sum(progress.planned.values()) > sum(progress.to_send.values())
    return arrival_window(expectation, order, shipped_at=last_shipment(progress.planned, events) if sent else None)


def shipping_days_words(days_min: int, days_max: int) -> str:
    """A delivery promise in business days, in the active language: "Chega em 3 a 5 dias úteis" (the checkout's
    words for a shipping option, shop.checkout.fulfillment.days_text, which says them with this)."""
    if days_max == 0:
        return _("Chega hoje")
    if days_min == days_max:
        return ngettext("Chega em %(n)d dia útil", "Chega em %(n)d dias úteis", days_max) % {"n": days_max}
    if days_min == 0:
        return ngettext("Chega em até %(n)d dia útil", "Chega em até %(n)d dias úteis", days_max) % {"n": days_max}
    return ngettext("Chega em %(min)d a %(max)d dia útil", "Chega em %(min)d a %(max)d dias úteis", days_max) % {
        "min": days_min,
        "max": days_max,
    }


def expectation_words(expectation: FulfillmentExpectation) -> str:
    """What a shipping expectation promises, in the reader's language. The checkout stored its words in Portuguese
    ("Chega em 3 a 5 dias úteis"); when it kept the carrier's days counted from the shipment (the shop set no
    "prazo de postagem"), they are said again from the days, so an English page or e-mail reads "Arrives in 3 to 5
    business days". Words staff re-worded, or kept without days, stay as written."""
    low, high = expectation.days_min, expectation.days_max
    if expectation.days_from != DeliveryDaysFrom.SHIPPING or low is None or high is None:
        return expectation.description
    return shipping_days_words(low, high)


def _day(day: date) -> str:
    # Translators: a day and month without the year, as in "entre 09/12 e 11/12" (Django's date format letters).
    return formats.date_format(day, pgettext("arrival day", "d/m"))


def window_words(window: tuple[date, date]) -> str:
    """ "entre 09/12 e 11/12" (or "em 09/12" for one day), in the active language: the page's "Previsão de entrega"."""
    first, last = window
    if first == last:
        return _("em %(day)s") % {"day": _day(first)}
    return _("entre %(first)s e %(last)s") % {"first": _day(first), "last": _day(last)}


def window_words_pt(window: tuple[date, date]) -> str:
    """The same in Portuguese whatever the language (BCP texts, the timeline)."""
    with translation.override(PT_BR):
        return window_words(window)
