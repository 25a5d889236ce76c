"""What the shop needs of a carrier, in the carrier's neutral words: parcels, quotes, labels, tracking events.

Every adapter (carriers/melhorenvio.py, carriers/correios.py) speaks its provider's API and answers with these
types. Money is integer centavos; sizes are grams and whole centimetres; times are aware UTC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from kernel.http import Deadline

# Tracking states the shop turns into fulfillment events (orders' BCP event types).
TrackingKind = Literal["posted", "in_transit", "out_for_delivery", "delivered", "failed_attempt", "returned", "other"]
LabelStatus = Literal["pending", "purchased", "generated", "posted", "delivered", "canceled"]


class CarrierUnavailable(Exception):
    """Timeout, refused connection, 5xx, 429, bad credentials: nothing was decided; try again (or fall back)."""


class CarrierRejected(Exception):
    """The carrier refused the request for a reason a person can fix (bad CEP, parcel too heavy, no balance).

    `message` is in Portuguese, names the field when the carrier did, and is shown to staff as is."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class WebhookRejected(Exception):
    """A notification that does not authenticate or cannot be read: answered 4xx, nothing stored."""


@dataclass(frozen=True)
class Parcel:
    """One box as the carrier sees it. `weight_g` includes the packaging."""

    weight_g: int
    length_cm: int
    width_cm: int
    height_cm: int
    declared_value: int = 0  # centavos, for the carrier's insurance (valor declarado)

    @property
    def cubic_weight_g(self) -> int:
        return cubic_weight_g(self.length_cm, self.width_cm, self.height_cm)

    @property
    def billable_weight_g(self) -> int:
        """What the carriers charge by: the larger of the real and the cubic weight."""
        return max(self.weight_g, self.cubic_weight_g)


def cubic_weight_g(length_cm: int, width_cm: int, height_cm: int) -> int:
    """Correios' cubic weight: L × W × H / 6000 kg (https://www.correios.com.br, "peso cúbico"), in grams,
    rounded up: 30 × 20 × 10 cm is 1 kg."""
    volume = length_cm * width_cm * height_cm
    return -(-volume * 1000 // 6000)


@dataclass(frozen=True)
class Address:
    """A sender or recipient as a label needs them (CEP as 8 digits)."""

    name: str
    postal_code: str
    street: str = ""
    number: str = ""
    complement: str = ""
    district: str = ""
    city: str = ""
    state: str = ""
    phone: str = ""
    email: str = ""
    document: str = ""  # CPF or CNPJ, digits


@dataclass(frozen=True)
class ServiceQuote:
    """One service a carrier offers for the parcels: `code` is stable ("melhorenvio:1", "correios:03220")."""

    code: str
    carrier: str  # who carries it ("Correios", "Jadlog", …)
    name: str  # "SEDEX", "PAC", ".Package"
    price: int  # centavos for all parcels
    days_min: int
    days_max: int


@dataclass(frozen=True)
class LabelItem:
    name: str
    quantity: int
    unit_price: int  # centavos


@dataclass(frozen=True)
class LabelRequest:
    """Everything a purchase needs. `reference` is ours (the label's public id), sent where the API keeps it."""

    reference: str
    service_code: str
    sender: Address
    recipient: Address
    parcels: tuple[Parcel, ...]
    items: tuple[LabelItem, ...] = ()
    invoice_key: str = ""  # NF-e access key, when issued


@dataclass
class LabelState:
    """How far a purchase got at the carrier. `remote_id` is written as soon as the carrier gives it, so a
    rerun continues from there instead of buying again."""

    remote_id: str = ""
    status: LabelStatus = "pending"
    tracking_code: str = ""
    cost: int = 0  # centavos actually charged
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TrackingEvent:
    """One carrier event. `event_id` is stable across deliveries (dedup key)."""

    event_id: str
    kind: TrackingKind
    occurred_at: datetime
    description: str = ""
    tracking_code: str = ""
    remote_id: str = ""  # the carrier's label id (Melhor Envio's order id), when the event names it


class Carrier(Protocol):
    name: str  # "melhorenvio" | "correios"

    def quote(
        self, *, parcels: tuple[Parcel, ...], from_cep: str, to_cep: str, deadline: Deadline
    ) -> list[ServiceQuote]: ...

    def buy(self, *, request: LabelRequest, state: LabelState, deadline: Deadline, save: SaveState) -> LabelState:
        """Continue the purchase from `state`; `save(state)` is called after every step the carrier recorded."""
        ...

    def cancel(self, *, state: LabelState, deadline: Deadline) -> None: ...

    def label_pdf(self, *, state: LabelState, deadline: Deadline) -> bytes: ...

    def tracking(self, *, state: LabelState, deadline: Deadline) -> list[TrackingEvent]: ...


class SaveState(Protocol):
    def __call__(self, state: LabelState) -> None: ...
