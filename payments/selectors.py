"""Payments reads (one query each)."""

from __future__ import annotations

from payments.boleto.service import boleto_latest_for_reference, boleto_live_for_reference
from payments.models import BoletoPayment, CardPayment, PixCharge, PixRefund

__all__ = [
    "boleto_for_payment_id",
    "boleto_latest_for_reference",
    "boleto_live_for_reference",
    "card_payment_for_reference",
    "pix_charge_active_for_reference",
    "pix_charge_by_txid",
    "pix_charge_latest_for_reference",
    "pix_refunds_for_reference",
]


def boleto_for_payment_id(payment_id: str) -> BoletoPayment | None:
    return BoletoPayment.objects.filter(payment_id=payment_id).first()


def pix_charge_active_for_reference(reference: str) -> PixCharge | None:
    return PixCharge.objects.filter(reference=reference, status=PixCharge.Status.ACTIVE).first()


def pix_charge_latest_for_reference(reference: str) -> PixCharge | None:
    return PixCharge.objects.filter(reference=reference).order_by("-created_at", "-id").first()


def pix_charge_by_txid(txid: str) -> PixCharge | None:
    return PixCharge.objects.filter(txid=txid).first()


def card_payment_for_reference(reference: str) -> CardPayment | None:
    return CardPayment.objects.filter(reference=reference).first()


def pix_refunds_for_reference(reference: str) -> list[PixRefund]:
    return list(PixRefund.objects.filter(reference=reference).order_by("created_at", "id"))
