"""Payments data: Pix charges, received Pix, webhook inbox, refunds (devoluções), timeline; cards in `card/models.py`.

Money is integer centavos (BigIntegerField). Public references are strings owned by the caller
(`reference` = checkout public id); database primary keys never leave the process.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from payments.automatic.models import PixRecurrenceWebhookEvent, PixRecurringCharge, PixRecurringChargeWebhookEvent
from payments.boleto.models import BoletoPayment, BoletoRefund
from payments.card.models import CardPayment, CardRefund, CardWebhookEvent, SandboxCardCharge
from payments.due import AmountDue, DueTerms, amount_due
from payments.med.models import PixInfraction, PixInfractionAnswer, PixInfractionEvent
from payments.sandbox.models import SandboxCob, SandboxPix, SandboxRecord, SandboxRefund

__all__ = [
    "BoletoPayment",
    "BoletoRefund",
    "CardPayment",
    "CardRefund",
    "CardWebhookEvent",
    "PaymentEvent",
    "PixCharge",
    "PixInfraction",
    "PixInfractionAnswer",
    "PixInfractionEvent",
    "PixPayment",
    "PixRecurrenceWebhookEvent",
    "PixRecurringCharge",
    "PixRecurringChargeWebhookEvent",
    "PixRefund",
    "PixWebhookEvent",
    "SandboxCardCharge",
    "SandboxCob",
    "SandboxPix",
    "SandboxRecord",
    "SandboxRefund",
]


class PixCharge(models.Model):
    """A Pix charge issued at the PSP for one checkout (`reference`): immediate (`cob`) or with a due date (`cobv`)."""

    class Kind(models.TextChoices):
        COB = "cob", _("Imediata (cob)")
        COBV = "cobv", _("Com vencimento (cobv)")

    class Status(models.TextChoices):
        ACTIVE = "active", _("Ativa")
        PAID = "paid", _("Paga")
        REVOKED = "revoked", _("Revogada")
        EXPIRED = "expired", _("Expirada")
        REFUNDED = "refunded", _("Devolvida")

    txid = models.CharField(max_length=35, unique=True, verbose_name=_("txid"))
    reference = models.CharField(max_length=64, db_index=True, verbose_name=_("referência"))
    amount = models.BigIntegerField(verbose_name=_("valor"))
    currency = models.CharField(max_length=3, default="BRL", verbose_name=_("moeda"))
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE, verbose_name=_("situação"))
    # Why the charge left `active` without a payment (replaced, canceled, amount_mismatch, expired).
    status_reason = models.CharField(max_length=64, blank=True, default="", verbose_name=_("motivo da situação"))
    description = models.CharField(max_length=140, blank=True, default="", verbose_name=_("descrição"))
    br_code = models.TextField(verbose_name=_("BR Code (copia e cola)"))
    location = models.CharField(max_length=200, blank=True, default="", verbose_name=_("location"))
    psp_created_at = models.DateTimeField(verbose_name=_("criada no PSP em"))
    expires_at = models.DateTimeField(verbose_name=_("expira em"))
    paid_amount = models.BigIntegerField(null=True, blank=True, verbose_name=_("valor pago"))
    end_to_end_id = models.CharField(max_length=32, blank=True, default="", verbose_name=_("endToEndId"))
    paid_at = models.DateTimeField(null=True, blank=True, verbose_name=_("pago em"))
    # True once the PSP acknowledged the PATCH to REMOVIDA_PELO_USUARIO_RECEBEDOR.
    psp_removed = models.BooleanField(default=False, verbose_name=_("removida no PSP"))
    psp_payload = models.JSONField(default=dict, blank=True, verbose_name=_("resposta do PSP"))
    kind = models.CharField(max_length=4, choices=Kind.choices, default=Kind.COB, verbose_name=_("tipo"))
    # cobv only: payments.due.DueTerms as JSON (due date, validity, fine, interest, discount).
    due_date = models.DateField(null=True, blank=True, verbose_name=_("vencimento"))
    due_terms = models.JSONField(default=dict, blank=True, verbose_name=_("condições do vencimento"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("criado em"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("atualizado em"))

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
            models.CheckConstraint(
                condition=Q(kind="cob") | Q(kind="cobv", due_date__isnull=False), name="payments_pixcharge_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.txid} ({self.get_status_display()})"

    @property
    def terms(self):  # -> payments.due.DueTerms | None

        return DueTerms.from_json(self.due_terms) if self.kind == self.Kind.COBV and self.due_terms else None

    def amount_due_on(self, day):  # -> payments.due.AmountDue
        """What this charge costs paid on `day` (a Brasília date): the original for a cob, with fine/interest/
        discount for a cobv."""
        terms = self.terms
        if terms is None:
            return AmountDue(original=self.amount, fine=0, interest=0, discount=0, overdue_days=0)
        return amount_due(self.amount, terms, day)


class PixPayment(models.Model):
    """A Pix received at the PSP (unique by endToEndId) and what we did with it."""

    class Outcome(models.TextChoices):
        SETTLED = "settled", _("Liquidado")
        REFUNDED_MISMATCH = "refunded_amount_mismatch", _("Devolvido: valor divergente")
        REFUNDED_LATE = "refunded_late", _("Devolvido: pagamento tardio")
        REFUNDED_REJECTED = "refunded_rejected", _("Devolvido: checkout recusou")
        REFUNDED_DUPLICATE = "refunded_duplicate", _("Devolvido: pagamento em duplicidade")
        UNKNOWN_CHARGE = "unknown_charge", _("Cobrança desconhecida")

    end_to_end_id = models.CharField(max_length=32, unique=True, verbose_name=_("endToEndId"))
    charge = models.ForeignKey(
        PixCharge, null=True, blank=True, on_delete=models.PROTECT, related_name="payments", verbose_name=_("cobrança")
    )
    txid = models.CharField(max_length=35, blank=True, default="", verbose_name=_("txid"))
    amount = models.BigIntegerField(verbose_name=_("valor"))
    paid_at = models.DateTimeField(verbose_name=_("pago em"))
    payer_message = models.CharField(max_length=140, blank=True, default="", verbose_name=_("mensagem do pagador"))
    outcome = models.CharField(max_length=32, choices=Outcome.choices, verbose_name=_("resultado"))
    source = models.CharField(max_length=16, default="webhook", verbose_name=_("origem"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("criado em"))

    class Meta:
        verbose_name = _("Pix recebido")
        verbose_name_plural = _("Pix recebidos")
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=Q(amount__gt=0), name="payments_pixpayment_amount_positive")]

    def __str__(self) -> str:
        return f"{self.end_to_end_id} ({self.get_outcome_display()})"


class PixWebhookEvent(models.Model):
    """Inbox row: one `pix[]` item of a delivery, stored raw before any processing (append-only).

    Unique on endToEndId for payment notices (`refund_state` empty), so a re-delivered payment is
    stored once; a notice carrying `devolucoes` is keyed by e2eid + the refund states it reports.
    """

    class Source(models.TextChoices):
        WEBHOOK = "webhook", _("Webhook")
        POLL = "poll", _("Consulta")

    source = models.CharField(max_length=16, choices=Source.choices, default=Source.WEBHOOK, verbose_name=_("origem"))
    end_to_end_id = models.CharField(max_length=32, verbose_name=_("endToEndId"))
    refund_state = models.CharField(max_length=255, blank=True, default="", verbose_name=_("situação da devolução"))
    txid = models.CharField(max_length=35, blank=True, default="", verbose_name=_("txid"))
    payload = models.JSONField(verbose_name=_("conteúdo"))
    raw_body = models.BinaryField(verbose_name=_("corpo recebido"))
    body_sha256 = models.CharField(max_length=64)
    headers = models.JSONField(default=dict, blank=True, verbose_name=_("cabeçalhos"))
    received_at = models.DateTimeField(auto_now_add=True, verbose_name=_("recebido em"))
    processed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("processado em"))
    outcome = models.CharField(max_length=64, blank=True, default="", verbose_name=_("resultado"))
    attempts = models.PositiveIntegerField(default=0, verbose_name=_("tentativas"))
    last_error = models.TextField(blank=True, default="", verbose_name=_("último erro"))

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
        PENDING = "pending", _("Pendente")
        COMPLETED = "completed", _("Concluída")
        FAILED = "failed", _("Falhou")

    class Kind(models.TextChoices):
        REQUESTED = "requested", _("Solicitada")
        AUTOMATIC = "automatic", _("Automática")

    refund_id = models.CharField(max_length=64, unique=True, verbose_name=_("ID do reembolso"))
    # Our id at the PSP, `[a-zA-Z0-9]{1,35}`, generated and stored before calling it (PIX.md §4.5).
    psp_refund_id = models.CharField(max_length=35, unique=True, verbose_name=_("ID da devolução no PSP"))
    payment = models.ForeignKey(
        PixPayment, on_delete=models.PROTECT, related_name="refunds", verbose_name=_("pagamento")
    )
    reference = models.CharField(max_length=64, db_index=True, verbose_name=_("referência"))
    end_to_end_id = models.CharField(max_length=32, verbose_name=_("endToEndId"))
    amount = models.BigIntegerField(verbose_name=_("valor"))
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, verbose_name=_("situação"))
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.REQUESTED, verbose_name=_("tipo"))
    reason = models.CharField(max_length=140, blank=True, default="", verbose_name=_("motivo"))
    attempts = models.PositiveIntegerField(default=0, verbose_name=_("tentativas"))
    rtr_id = models.CharField(max_length=32, blank=True, default="", verbose_name=_("rtrId"))
    psp_status = models.CharField(max_length=32, blank=True, default="", verbose_name=_("situação no PSP"))
    last_error = models.TextField(blank=True, default="", verbose_name=_("último erro"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("criado em"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("atualizado em"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finalizado em"))

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
        return f"{self.refund_id} ({self.get_status_display()})"


class PaymentEvent(models.Model):
    """Append-only payments timeline, written in the same transaction as each status change."""

    reference = models.CharField(max_length=64, db_index=True, verbose_name=_("referência"))
    kind = models.CharField(max_length=48, verbose_name=_("tipo"))
    txid = models.CharField(max_length=35, blank=True, default="", verbose_name=_("txid"))
    detail = models.JSONField(default=dict, blank=True, verbose_name=_("detalhe"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("criado em"))

    class Meta:
        verbose_name = _("evento de pagamento")
        verbose_name_plural = _("eventos de pagamento")
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.reference} {self.kind}"
