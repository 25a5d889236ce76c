"""Payments data: Pix charges, received Pix, webhook inbox, refunds (devoluções), card payments, timeline.

Money is integer centavos (BigIntegerField). Public references are strings owned by the caller
(`reference` = checkout public id); database primary keys never leave the process.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from payments.sandbox.models import SandboxCob, SandboxPix, SandboxRefund

__all__ = [
    "CardPayment",
    "PaymentEvent",
    "PixCharge",
    "PixPayment",
    "PixRefund",
    "PixWebhookEvent",
    "SandboxCob",
    "SandboxPix",
    "SandboxRefund",
]


class PixCharge(models.Model):
    """An immediate Pix charge (`cob`) issued at the PSP for one checkout (`reference`)."""

    class Status(models.TextChoices):
        ACTIVE = "active", "ativa"
        PAID = "paid", "paga"
        REVOKED = "revoked", "revogada"
        EXPIRED = "expired", "expirada"
        REFUNDED = "refunded", "devolvida"

    txid = models.CharField(max_length=35, unique=True)
    reference = models.CharField(max_length=64, db_index=True)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3, default="BRL")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # Why the charge left `active` without a payment (replaced, canceled, amount_mismatch, expired).
    status_reason = models.CharField(max_length=64, blank=True, default="")
    description = models.CharField(max_length=140, blank=True, default="")
    br_code = models.TextField()
    location = models.CharField(max_length=200, blank=True, default="")
    psp_created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    paid_amount = models.BigIntegerField(null=True, blank=True)
    end_to_end_id = models.CharField(max_length=32, blank=True, default="")
    paid_at = models.DateTimeField(null=True, blank=True)
    # True once the PSP acknowledged the PATCH to REMOVIDA_PELO_USUARIO_RECEBEDOR.
    psp_removed = models.BooleanField(default=False)
    psp_payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("cobrança Pix")
        verbose_name_plural = _("cobranças Pix")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["reference"], condition=Q(status="active"), name="payments_pixcharge_one_active_per_ref"
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="payments_pixcharge_amount_positive"),
            models.CheckConstraint(
                condition=Q(status__in=["active", "paid", "revoked", "expired", "refunded"]),
                name="payments_pixcharge_status_valid",
            ),
            models.CheckConstraint(condition=Q(txid__regex=r"^[A-Za-z0-9]{26,35}$"), name="payments_pixcharge_txid"),
        ]

    def __str__(self) -> str:
        return f"{self.txid} ({self.status})"


class PixPayment(models.Model):
    """A Pix received at the PSP (unique by endToEndId) and what we did with it."""

    class Outcome(models.TextChoices):
        SETTLED = "settled", "liquidado"
        REFUNDED_MISMATCH = "refunded_amount_mismatch", "devolvido: valor divergente"
        REFUNDED_LATE = "refunded_late", "devolvido: pagamento tardio"
        REFUNDED_REJECTED = "refunded_rejected", "devolvido: checkout recusou"
        REFUNDED_DUPLICATE = "refunded_duplicate", "devolvido: pagamento em duplicidade"
        UNKNOWN_CHARGE = "unknown_charge", "cobrança desconhecida"

    end_to_end_id = models.CharField(max_length=32, unique=True)
    charge = models.ForeignKey(PixCharge, null=True, blank=True, on_delete=models.PROTECT, related_name="payments")
    txid = models.CharField(max_length=35, blank=True, default="")
    amount = models.BigIntegerField()
    paid_at = models.DateTimeField()
    payer_message = models.CharField(max_length=140, blank=True, default="")
    outcome = models.CharField(max_length=32, choices=Outcome.choices)
    source = models.CharField(max_length=16, default="webhook")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("Pix recebido")
        verbose_name_plural = _("Pix recebidos")
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=Q(amount__gt=0), name="payments_pixpayment_amount_positive")]

    def __str__(self) -> str:
        return f"{self.end_to_end_id} ({self.outcome})"


class PixWebhookEvent(models.Model):
    """Inbox row: one `pix[]` item of a delivery, stored raw before any processing (append-only).

    Unique on endToEndId for payment notices (`refund_state` empty), so a re-delivered payment is
    stored once; a notice carrying `devolucoes` is keyed by e2eid + the refund states it reports.
    """

    class Source(models.TextChoices):
        WEBHOOK = "webhook", "webhook"
        POLL = "poll", "consulta"

    source = models.CharField(max_length=16, choices=Source.choices, default=Source.WEBHOOK)
    end_to_end_id = models.CharField(max_length=32)
    refund_state = models.CharField(max_length=255, blank=True, default="")
    txid = models.CharField(max_length=35, blank=True, default="")
    payload = models.JSONField()
    raw_body = models.BinaryField()
    body_sha256 = models.CharField(max_length=64)
    headers = models.JSONField(default=dict, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=64, blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        verbose_name = _("evento de webhook Pix")
        verbose_name_plural = _("eventos de webhook Pix")
        ordering = ["-received_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["end_to_end_id", "refund_state"], name="payments_webhookevent_e2e_unique")
        ]

    def __str__(self) -> str:
        return f"{self.end_to_end_id} {self.refund_state or 'pix'}"


class PixRefund(models.Model):
    """A devolução of (part of) a received Pix; `refund_id` is the caller's idempotency key."""

    class Status(models.TextChoices):
        PENDING = "pending", "pendente"
        COMPLETED = "completed", "concluída"
        FAILED = "failed", "falhou"

    class Kind(models.TextChoices):
        REQUESTED = "requested", "solicitada"
        AUTOMATIC = "automatic", "automática"

    refund_id = models.CharField(max_length=64, unique=True)
    # Our id at the PSP, `[a-zA-Z0-9]{1,35}`, generated and stored before calling it (PIX.md §4.5).
    psp_refund_id = models.CharField(max_length=35, unique=True)
    payment = models.ForeignKey(PixPayment, on_delete=models.PROTECT, related_name="refunds")
    reference = models.CharField(max_length=64, db_index=True)
    end_to_end_id = models.CharField(max_length=32)
    amount = models.BigIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.REQUESTED)
    reason = models.CharField(max_length=140, blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    rtr_id = models.CharField(max_length=32, blank=True, default="")
    psp_status = models.CharField(max_length=32, blank=True, default="")
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("devolução Pix")
        verbose_name_plural = _("devoluções Pix")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="payments_pixrefund_amount_positive"),
            models.CheckConstraint(
                condition=Q(psp_refund_id__regex=r"^[A-Za-z0-9]{1,35}$"), name="payments_pixrefund_psp_id"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.refund_id} ({self.status})"


class CardPayment(models.Model):
    """A tokenized card payment through a gateway; one per reference (a decline may be retried)."""

    class Status(models.TextChoices):
        APPROVED = "approved", "aprovado"
        DECLINED = "declined", "recusado"

    payment_id = models.CharField(max_length=40, unique=True)
    reference = models.CharField(max_length=64, unique=True)
    handler_id = models.CharField(max_length=64)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3, default="BRL")
    status = models.CharField(max_length=16, choices=Status.choices)
    code = models.CharField(max_length=32, blank=True, default="")
    message = models.CharField(max_length=200, blank=True, default="")
    gateway = models.CharField(max_length=64)
    gateway_reference = models.CharField(max_length=64, blank=True, default="")
    # Never the token itself: a SHA-256 fingerprint is enough to recognise a replay.
    token_fingerprint = models.CharField(max_length=64)
    attempts = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("pagamento com cartão")
        verbose_name_plural = _("pagamentos com cartão")
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=Q(amount__gt=0), name="payments_cardpayment_amount_positive")]

    def __str__(self) -> str:
        return f"{self.payment_id} ({self.status})"


class PaymentEvent(models.Model):
    """Append-only payments timeline, written in the same transaction as each status change."""

    reference = models.CharField(max_length=64, db_index=True)
    kind = models.CharField(max_length=48)
    txid = models.CharField(max_length=35, blank=True, default="")
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("evento de pagamento")
        verbose_name_plural = _("eventos de pagamento")
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.reference} {self.kind}"
