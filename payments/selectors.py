"""Payments reads (one query each)."""

from __future__ import annotations

from payments.models import CardPayment, PixCharge, PixRefund


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
