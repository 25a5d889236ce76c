"""What `checkout_view()` returns (`shop/checkout/selectors.py`): every member of a BCP checkout response
that the shop decides, already in BCP order and shape, so the presenter only maps names.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from shop.checkout.pix_discount import is_pix_instrument, pix_offer
from shop.checkout.types import BuyerInput, CheckoutMessage, ContextInput, MethodType

if TYPE_CHECKING:
    from shop.models import Checkout


@dataclass(frozen=True)
class Total:
    """A BCP §6 total entry. `lines` is an optional breakdown summing to `amount`."""

    type: str
    amount: int
    display_text: str = ""
    lines: tuple[tuple[str, int], ...] = ()


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
class OptionView:
    id: str
    title: str  # unique among siblings: "PAC", "SEDEX", "Motoboy", "Retirada na loja"
    description: str  # plain text for Description {"plain": …}; never repeats title or price
    amount: int
    carrier: str = ""
    earliest_fulfillment_time: datetime | None = None
    latest_fulfillment_time: datetime | None = None

    @property
    def totals(self) -> tuple[Total, ...]:
        return (Total("fulfillment", self.amount), Total("total", self.amount))


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
class AllocationView:
    path: str  # e.g. "$.line_items[0]"
    amount: int


@dataclass(frozen=True)
class AppliedDiscountView:
    code: str
    title: str
    amount: int  # > 0
    method: str = "across"
    automatic: bool = False
    allocations: tuple[AllocationView, ...] = ()


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
    installments: int = 1  # card: the chosen plan (shop/checkout/card_terms.py)
    installment_amount: int = 0
    first_installment: int = 0


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
    def card_interest(self) -> int:
        """The installment interest in the total while a card with interest is the selected instrument."""
        instrument = self.checkout.payment_instrument or {}
        return int(instrument.get("interest") or 0) if instrument.get("type") == "card" else 0
