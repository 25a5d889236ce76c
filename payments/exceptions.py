"""Errors the payments services raise for bad input (nothing is changed when they are raised), and the checks of a
refund request that every method (Pix, card, boleto) shares."""

from __future__ import annotations

from django.db.models import Model


class PaymentInputError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def refund_replayed[R: Model](model: type[R], *, refund_id: str, reference: str, amount: int) -> R | None:
    """The refund (Pix, card or boleto `model`) already asked under `refund_id`: a replay answers it, None for a new
    id; the same id for another reference or amount is refused."""
    existing = model._default_manager.filter(refund_id=refund_id).first()
    if existing is not None and (existing.reference != reference or existing.amount != amount):
        raise PaymentInputError("refund_id", "already used for a different refund")
    return existing


def refund_fits(amount: int, available: int) -> None:
    """A refund asks at most what the payment still has (`available`, centavos)."""
    if amount > available:
        raise PaymentInputError("amount", f"exceeds what can still be refunded ({available} centavos)")
