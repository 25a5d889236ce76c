"""Typed inputs and results of the checkout engine (`shop/checkout/services.py`, `shop/checkout/selectors.py`).

The BCP layer (REST, MCP, A2A) and the storefront fill the *input* dataclasses; the engine
never sees a request body. Field names follow BCP (BCP.md §4.1, §9, §10) so mapping is 1:1.
Response-only members (prices, totals, status, ids of business objects) have no input field:
they can never come from a caller (BCP-SEC-03).

The engine's results (`CheckoutMessage`, `CheckoutResult`) are here too, with the value objects that pricing
and fulfillment produce (`Total`, `OptionView`, `AppliedDiscountView`); the presented checkout (`CheckoutView`
and friends) is in `shop/checkout/selectors.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from django.utils.translation import gettext

if TYPE_CHECKING:
    from shop.models import Checkout

# --- statuses and vocabularies -------------------------------------------------------------------

STATUS_INCOMPLETE = "incomplete"
STATUS_REQUIRES_ESCALATION = "requires_escalation"
STATUS_READY = "ready_for_complete"
STATUS_IN_PROGRESS = "complete_in_progress"
STATUS_COMPLETED = "completed"
STATUS_CANCELED = "canceled"
STATUSES = (
    STATUS_INCOMPLETE,
    STATUS_REQUIRES_ESCALATION,
    STATUS_READY,
    STATUS_IN_PROGRESS,
    STATUS_COMPLETED,
    STATUS_CANCELED,
)
TERMINAL_STATUSES = (STATUS_COMPLETED, STATUS_CANCELED)

MessageType = Literal["error", "warning", "info"]
Severity = Literal["recoverable", "requires_buyer_input", "requires_buyer_review", "unrecoverable", ""]
MethodType = Literal["shipping", "pickup"]
# The `requires_buyer_review` error of a checkout an agent may not complete (CheckoutInput.caller_may_complete);
# the buyer's own page does not show it (it speaks to the agent).
AGENT_COMPLETE_FORBIDDEN = "agent_complete_forbidden"


# --- inputs ----------------------------------------------------------------------------------------


class CheckoutInputError(ValueError):
    """Structurally invalid input (a protocol error for BCP: `invalid_request`); nothing changes."""

    def __init__(self, path: str, content: str) -> None:
        super().__init__(f"{path}: {content}")
        self.path = path
        self.content = content


def bounded(value: str, limit: int, path: str) -> str:
    """`value` stripped; CheckoutInputError naming `path` when longer than the column holding it."""
    value = (value or "").strip()
    if len(value) > limit:
        raise CheckoutInputError(path, gettext("No máximo %(max)d caracteres.") % {"max": limit})
    return value


@dataclass(frozen=True)
class LineInput:
    """One `line_items[]` entry: `item.id` (= variant SKU), `quantity`, and on update the line `id`."""

    sku: str
    quantity: int
    line_id: str | None = None  # "li_…" of an existing line (update); None = new line


@dataclass(frozen=True)
class BuyerInput:
    """`buyer`. Empty string = not given. `tax_id` is the BCP Brazilian extension (CPF/CNPJ digits)."""

    first_name: str = ""
    last_name: str = ""
    email: str = ""
    phone_number: str = ""  # E.164, e.g. "+5511987654321"
    tax_id: str = ""  # CPF (11 digits) or CNPJ (14 digits); punctuation is stripped
    # Buyer consent extension: ((purpose, granted), …) decided by the buyer; None = no consent object given.
    consent: tuple[tuple[str, bool], ...] | None = None
    consent_captured_by: str = ""  # "storefront" | "platform:<id>" (shop/checkout/selectors.py)


@dataclass(frozen=True)
class AddressInput:
    """A shipping destination written by the caller.

    BCP callers fill the PostalAddress members (`street_address` "Rua das Flores, 123",
    `extended_address` "Apto 45 - Jardim Paulista", …); the storefront fills the separate
    Brazilian columns (`street`, `number`, `complement`, `neighborhood`). When a separate column
    is empty the engine derives it from the PostalAddress members, so either style works.
    `id` is the business-assigned destination id echoed back by the platform (or None).
    """

    id: str | None = None
    first_name: str = ""
    last_name: str = ""
    phone_number: str = ""
    street_address: str = ""
    extended_address: str = ""
    address_locality: str = ""  # city
    address_region: str = ""  # UF
    postal_code: str = ""  # CEP, "01310-100" or "01310100"
    address_country: str = "BR"
    street: str = ""
    number: str = ""
    complement: str = ""
    neighborhood: str = ""  # bairro


@dataclass(frozen=True)
class GroupInput:
    """`fulfillment.methods[i].groups[j]`: only the selection is writable."""

    id: str | None = None
    selected_option_id: str | None = None


@dataclass(frozen=True)
class FulfillmentMethodInput:
    """`fulfillment.methods[i]`. The engine serves one method covering every physical line."""

    type: MethodType = "shipping"
    id: str | None = None
    line_item_ids: tuple[str, ...] = ()
    destinations: tuple[AddressInput, ...] = ()  # shipping only; pickup destinations are business-owned
    selected_destination_id: str | None = None
    groups: tuple[GroupInput, ...] = ()


@dataclass(frozen=True)
class FulfillmentInput:
    methods: tuple[FulfillmentMethodInput, ...] = ()


@dataclass(frozen=True)
class InstrumentInput:
    """`payment.instruments[i]`. `credential` is passed through to the handler, never stored or echoed."""

    id: str
    handler_id: str
    type: str  # "pix" | "card"
    selected: bool = True
    credential: dict[str, str] | None = None  # e.g. {"type": "PAYMENT_GATEWAY", "token": "success_token"}
    installments: int = 1  # card only: the parcelamento chosen (shop/checkout/pricing.py)


@dataclass(frozen=True)
class PaymentInput:
    instruments: tuple[InstrumentInput, ...] = ()


@dataclass(frozen=True)
class ContextInput:
    """`context`: hints only (BCP §4.1). Unknown entries are dropped by the transport."""

    address_country: str = ""
    address_region: str = ""
    postal_code: str = ""
    language: str = ""  # "pt-BR" | "en"; decides the language of `content` and of the order
    intent: str = ""
    # `context.payment`: the buyer's preferred methods ("pix", "card", "boleto"), most preferred first (BCP-PAY-08)
    payment: tuple[str, ...] = ()

    @classmethod
    def stored(cls, data: dict[str, Any]) -> ContextInput:
        """The context as `Checkout.context` keeps it (JSON: the tuple came back a list)."""
        return cls(**{**data, "payment": tuple(data.get("payment", ()))})


@dataclass(frozen=True)
class CheckoutInput:
    """The whole writable state (create and full-replacement update, BCP §4.3).

    `None` for an extension member (`fulfillment`, `discount_codes`) means "extension not
    negotiated": the engine keeps no such state (BCP-NEG-08). An empty value clears it.
    """

    lines: tuple[LineInput, ...]
    buyer: BuyerInput | None = None
    fulfillment: FulfillmentInput | None = None
    discount_codes: tuple[str, ...] | None = None
    payment: PaymentInput | None = None
    context: ContextInput | None = None
    signals: dict[str, str] = field(default_factory=dict)  # e.g. {"br.dev.bcp.buyer_ip": "203.0.113.42"}
    # Handler ids offered to the caller (BCP-PAY-03: only those its platform lists); None = every configured
    # handler (the storefront, and a stored state re-evaluated).
    offered_handler_ids: tuple[str, ...] | None = None
    # False: an agent the store does not let complete (bcp_app/service/trust.py) writes it, so the checkout is
    # handed to the buyer (`requires_escalation`, BCP §4) and no Pix charge is issued that no order could follow.
    caller_may_complete: bool = True
    # True: the caller cannot write `fulfillment` (an agent that did not negotiate the extension, BCP-NEG-08), so
    # a physical checkout's delivery is the buyer's to choose on `continue_url` (`requires_escalation`, BCP §4.2).
    fulfillment_by_buyer: bool = False


@dataclass(frozen=True)
class CompleteInput:
    """Body of complete (BCP §4.3): exactly one instrument, optional signals."""

    payment: PaymentInput
    signals: dict[str, str] = field(default_factory=dict)
    # Handler ids this checkout offered to the caller (BCP §11.1, `ucp.payment_handlers`); None = every
    # configured handler (the storefront).
    offered_handler_ids: tuple[str, ...] | None = None


# --- outputs ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckoutMessage:
    """A BCP §5.1 message. `path` is RFC 9535 JSONPath relative to the checkout response root."""

    type: MessageType
    code: str
    content: str
    severity: Severity = ""  # required for errors, "" for warnings/info
    path: str = ""  # "" = the whole response

    def as_dict(self) -> dict[str, str]:
        data = {"type": self.type, "code": self.code, "content": self.content}
        if self.severity:
            data["severity"] = self.severity
        if self.path:
            data["path"] = self.path
        return data

    @classmethod
    def from_dict(cls, data: dict[str, str]) -> CheckoutMessage:
        return cls(
            type=data["type"],  # type: ignore[arg-type]
            code=data.get("code", ""),
            content=data.get("content", ""),
            severity=data.get("severity", ""),  # type: ignore[arg-type]
            path=data.get("path", ""),
        )


@dataclass(frozen=True)
class CheckoutResult:
    """What every checkout service returns: the checkout (lines prefetched) and this call's messages.

    `messages` is the full list for the response (the state's messages plus those produced by
    this call only, e.g. a rejected selection or `invalid_checkout_status`).
    """

    checkout: Checkout
    messages: list[CheckoutMessage]


# --- value objects of pricing and fulfillment, presented as they are -----------------------------


@dataclass(frozen=True)
class Total:
    """A BCP §6 total entry. `lines` is an optional breakdown summing to `amount`."""

    type: str
    amount: int
    display_text: str = ""
    lines: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class OptionView:
    id: str
    title: str  # unique among siblings: "PAC", "SEDEX", "Motoboy", "Retirada na loja"
    description: str  # plain text for Description {"plain": …}; never repeats title or price
    amount: int
    carrier: str = ""
    earliest_fulfillment_time: datetime | None = None
    latest_fulfillment_time: datetime | None = None
    # The business days behind `description` (a carrier quote's or a table rate's), kept with the checkout's
    # selected option so the order can date its arrival; never on the wire (the presenters name their members).
    days_min: int | None = None
    days_max: int | None = None

    @property
    def totals(self) -> tuple[Total, ...]:
        return (Total("fulfillment", self.amount), Total("total", self.amount))


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
