"""The card gateway boundary: value objects, errors, and the protocol every gateway speaks.

The shape is Pagar.me API v5's orders/charges (`payments/card/pagarme.py`); the sandbox gateway
(`payments/card/sandbox.py`) answers the same objects in-process. Only tokens ever cross it: the card
number is typed into the gateway's JS in the buyer's browser, never into a form of ours.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol

# Pagar.me v5 charge statuses: the charge is money moved (`paid`) or not; `pending` + a transaction
# `authorized_pending_capture` is an authorization waiting for its capture.
PAID = "paid"
PENDING = "pending"
FAILED = "failed"
CANCELED = "canceled"
AUTHORIZED = "authorized_pending_capture"
NOT_PAID = frozenset({FAILED, CANCELED})


class GatewayError(Exception):
    """Base of every card gateway failure."""


class GatewayUnavailable(GatewayError):
    """Timeout, connection failure, 5xx/429 after retries, or an unusable answer: the outcome is unknown."""


class GatewayRejected(GatewayError):
    """4xx: the gateway refused the request itself (nothing was charged by it)."""

    def __init__(self, status_code: int, detail: str) -> None:
        self.status_code = status_code
        super().__init__(f"{status_code}: {detail}"[:300])


class GatewayNotFound(GatewayError):
    """404: no such charge/order at the gateway."""


@dataclass(frozen=True)
class CardCustomer:
    name: str
    email: str
    tax_id: str = ""  # CPF/CNPJ digits


@dataclass(frozen=True)
class StoredCard:
    """A card kept in the gateway's wallet for a customer (Pagar.me `cus_…` / `card_…`): what a subscription
    charges each cycle. Only ids, brand and last four digits: the number never reaches the shop."""

    customer_id: str
    card_id: str
    brand: str = ""
    last4: str = ""


@dataclass(frozen=True)
class StoredCardCharge:
    """What `charge_stored_card` sends: one charge, captured at once (`capture: true`), of a stored card;
    `first`: the first of a recurrence (Pagar.me `recurrence_cycle` "first", else "subsequent")."""

    reference: str
    amount: int
    customer_id: str
    card_id: str
    idempotency_key: str
    description: str
    first: bool = False


@dataclass(frozen=True)
class BoletoRequest:
    """What `create_boleto_order` sends (Pagar.me `payments[0].boleto`): the due date (Brasília calendar day),
    the instructions printed on it (≤ 256) and the payer, whose CPF/CNPJ a registered boleto requires."""

    reference: str
    amount: int
    due_date: date
    instructions: str
    customer: CardCustomer
    description: str
    idempotency_key: str


@dataclass(frozen=True)
class GatewayCharge:
    """One charge as the gateway reports it (Pagar.me `charge` with its `last_transaction`)."""

    charge_id: str
    order_id: str
    code: str  # our reference (the order code we sent)
    status: str  # pending | paid | failed | canceled | processing
    amount: int
    paid_amount: int = 0
    canceled_amount: int = 0  # refunded so far
    installments: int = 1
    transaction_status: str = ""  # authorized_pending_capture | captured | not_authorized | refunded | …
    return_code: str = ""  # acquirer return code (ABECS) of a decline
    return_message: str = ""
    card_brand: str = ""
    card_last_digits: str = ""
    # Boleto charges (Pagar.me `payment_method: "boleto"`, payments/boleto/): the transaction's `line` (linha
    # digitável), `barcode` (an image URL at Pagar.me), `pdf`, `qr_code` (the Pix on the boleto), `due_at`.
    payment_method: str = ""
    boleto_line: str = ""
    boleto_barcode_url: str = ""
    boleto_pdf: str = ""
    boleto_qr_code: str = ""
    boleto_due_at: str = ""
    boleto_nosso_numero: str = ""
    paid_at: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def paid(self) -> bool:
        return self.status == PAID

    @property
    def authorized(self) -> bool:
        return self.status == PENDING and self.transaction_status == AUTHORIZED


class CardGateway(Protocol):
    name: str

    def create_order(
        self,
        *,
        reference: str,
        amount: int,
        installments: int,
        token: str,
        idempotency_key: str,
        customer: CardCustomer | None,
        description: str,
    ) -> GatewayCharge:
        """`POST /orders` with one credit card payment, `capture: false` (authorize only)."""
        ...

    def capture(self, *, charge_id: str, amount: int, idempotency_key: str) -> GatewayCharge: ...

    def refund(self, *, charge_id: str, amount: int, idempotency_key: str) -> GatewayCharge:
        """`DELETE /charges/{id}` with `amount`: full or partial estorno."""
        ...

    def get_charge(self, charge_id: str) -> GatewayCharge: ...

    def create_boleto_order(self, request: BoletoRequest) -> GatewayCharge:
        """`POST /orders` with one `boleto` payment: a `pending` charge whose last transaction carries the
        line, barcode and PDF; it becomes `paid` when the bank reports the payment (webhook `charge.paid`)."""
        ...

    def cancel(self, *, charge_id: str, idempotency_key: str) -> GatewayCharge:
        """`DELETE /charges/{id}` without amount: an unpaid boleto is canceled (it can no longer be paid)."""
        ...

    def find_charges(self, *, reference: str) -> list[GatewayCharge]:
        """Every charge of the orders whose `code` is `reference` (`GET /orders?code=`), newest first."""
        ...

    def store_card(self, *, customer: CardCustomer, token: str, idempotency_key: str) -> StoredCard:
        """`POST /customers` then `POST /customers/{id}/cards` with the card `token`: the card in the wallet."""
        ...

    def charge_stored_card(self, request: StoredCardCharge) -> GatewayCharge:
        """`POST /orders` with `customer_id` and `credit_card.card_id` (a subscription's cycle)."""
        ...

    def delete_card(self, *, customer_id: str, card_id: str) -> None:
        """`DELETE /customers/{customer_id}/cards/{card_id}`; an unknown card is already gone."""
        ...


# The acquirer's return code (ABECS list, as Pagar.me passes it on) → what the buyer reads. The code
# stays on the payment row for staff; the buyer gets a next step, never a bank's jargon.
_DECLINE_MESSAGES = {
    "51": "Saldo ou limite insuficiente. Use outro cartão ou pague com Pix.",
    "54": "Cartão vencido. Confira a validade ou use outro cartão.",
    "14": "Número do cartão inválido. Confira os dados digitados.",
    "82": "Código de segurança (CVV) inválido. Confira o verso do cartão.",
    "N7": "Código de segurança (CVV) inválido. Confira o verso do cartão.",
    "57": "Este cartão não permite este tipo de compra. Use outro cartão.",
    "59": "Pagamento recusado por segurança. Fale com o banco emissor ou use outro cartão.",
    "62": "Cartão bloqueado. Fale com o banco emissor ou use outro cartão.",
    "78": "Cartão ainda não desbloqueado. Desbloqueie-o no app do banco ou use outro cartão.",
    "1": "Pagamento não autorizado: ligue para o banco emissor para liberar a compra.",
    "01": "Pagamento não autorizado: ligue para o banco emissor para liberar a compra.",
}
DEFAULT_DECLINE = "Pagamento não autorizado pelo banco emissor. Use outro cartão ou pague com Pix."


def decline_message(return_code: str) -> str:
    return _DECLINE_MESSAGES.get((return_code or "").strip().upper(), DEFAULT_DECLINE)
