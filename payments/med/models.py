"""MED disputes of a received Pix: the PSP's notifications (inbox), the dispute, and the staff's answer (outbox).

The shapes follow the DICT objects of the Bacen's MED (infraction report: key, endToEndId, status OPEN/ACKNOWLEDGED/
CLOSED/CANCELLED, situation, details, analysis result AGREED/DISAGREED; refund request: requested and refunded amount,
status, analysis TOTALLY_ACCEPTED/PARTIALLY_ACCEPTED/REJECTED), as a PSP forwards them to its client (see
`payments/med/notifications.py`). Money in centavos; public ids `med_…`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from kernel.ids import new_public_id


def new_infraction_id() -> str:
    return new_public_id("med")


# The DICT's words as the PSP forwards them (lower case), in staff words; a value not listed shows as it came.
SITUATION_WORDS = {
    "scam": _("golpe"),
    "account_takeover": _("invasão de conta"),
    "coercion": _("coação"),
    "fraudulent_access": _("acesso fraudulento"),
    "other": _("outro motivo"),
    "unknown": _("motivo não informado"),
}
PSP_STATUS_WORDS = {
    "open": _("aberta"),
    "acknowledged": _("recebida pelo PSP"),
    "closed": _("encerrada"),
    "cancelled": _("cancelada"),
}


# How long the receiving side has to analyse a dispute: the Regulamento Pix's MED (Resolução BCB nº 1/2020, anexo,
# and the DICT's Manual Operacional) gives the receiver's institution 7 days from the infraction report to close
# it; past that the PSP closes it agreed on the client's behalf (QI Tech: "within a period of 7 days from the
# receipt of the Infraction Report … the Report must be closed", docs.qitech.com.br … /webhooks_relato_infracao).
# Calendar days ("até 7 dias corridos para aceitar ou rejeitar": Stark Infra's MED help page; Conta Azul's, under
# Resolução BCB nº 103/2021, the same).
# The PSPs' MED webhooks (payments/med/notifications.py) carry no deadline, so it is counted from `opened_at`, the
# time the PSP reported the dispute; a PSP that closes earlier still wins, by its own notification.
ANSWER_WINDOW = timedelta(days=7)


def situation_words(value: str) -> str:
    return str(SITUATION_WORDS.get(value, value)) if value else "—"


def psp_status_words(value: str) -> str:
    return str(PSP_STATUS_WORDS.get(value, value)) if value else "—"


class PixInfraction(models.Model):
    """One MED dispute of one received Pix (unique by the PSP's infraction report key)."""

    class Status(models.TextChoices):
        OPEN = "open", _("Aberta (aguardando resposta)")
        ANSWERED = "answered", _("Respondida")
        CLOSED = "closed", _("Encerrada")
        CANCELLED = "cancelled", _("Cancelada pelo pagador")

    class Outcome(models.TextChoices):
        NONE = "", _("—")
        RETURNED = "returned", _("Valor devolvido ao pagador")
        KEPT = "kept", _("Pagamento mantido")

    public_id = models.CharField(_("ID público"), max_length=40, unique=True, default=new_infraction_id, editable=False)
    psp_id = models.CharField(_("ID da infração no PSP"), max_length=64, unique=True)
    end_to_end_id = models.CharField(_("endToEndId"), max_length=32, db_index=True)
    payment = models.ForeignKey(
        "payments.PixPayment", null=True, blank=True, on_delete=models.PROTECT, related_name="infractions",
        verbose_name=_("Pix recebido"),
    )  # fmt: skip
    reference = models.CharField(_("referência"), max_length=64, blank=True, db_index=True)
    amount = models.BigIntegerField(_("valor contestado"))
    situation = models.CharField(_("tipo de fraude"), max_length=32, blank=True)
    details = models.CharField(_("relato do pagador"), max_length=2000, blank=True)
    psp_status = models.CharField(_("situação no PSP"), max_length=16, blank=True)
    status = models.CharField(_("situação"), max_length=16, choices=Status.choices, default=Status.OPEN)
    outcome = models.CharField(_("resultado"), max_length=16, choices=Outcome.choices, blank=True, default="")
    returned_amount = models.BigIntegerField(_("valor devolvido"), default=0)
    analysis_details = models.CharField(_("análise do PSP"), max_length=2000, blank=True)
    opened_at = models.DateTimeField(_("aberta em"))
    closed_at = models.DateTimeField(_("encerrada em"), null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("disputa Pix (MED)")
        verbose_name_plural = _("disputas Pix (MED)")
        ordering = ["-opened_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="payments_infraction_amount_positive"),
            models.CheckConstraint(
                condition=Q(returned_amount__gte=0) & Q(returned_amount__lte=models.F("amount")),
                name="payments_infraction_returned_within_amount",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} — {self.get_status_display()}"

    @property
    def answer_deadline(self) -> datetime:
        """Until when staff can answer before the MED closes the dispute for the payer (`ANSWER_WINDOW`)."""
        return self.opened_at + ANSWER_WINDOW

    def answer_overdue(self, now: datetime) -> bool:
        return self.status == self.Status.OPEN and now > self.answer_deadline


class PixInfractionEvent(models.Model):
    """Inbox: one MED notification of the PSP, stored raw before processing; unique by the PSP's event key."""

    event_key = models.CharField(_("chave do evento"), max_length=64, unique=True)
    kind = models.CharField(_("tipo"), max_length=32)
    psp_id = models.CharField(_("ID da infração no PSP"), max_length=64)
    payload = models.JSONField(_("conteúdo"))
    raw_body = models.BinaryField(_("corpo recebido"))
    received_at = models.DateTimeField(_("recebido em"), auto_now_add=True)
    processed_at = models.DateTimeField(_("processado em"), null=True, blank=True)
    outcome = models.CharField(_("resultado"), max_length=64, blank=True)
    attempts = models.PositiveIntegerField(_("tentativas"), default=0)
    last_error = models.TextField(_("último erro"), blank=True)

    class Meta:
        verbose_name = _("notificação MED")
        verbose_name_plural = _("notificações MED")
        ordering = ["-received_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.event_key}"


class PixInfractionAnswer(models.Model):
    """Outbox: the staff's answer to a dispute, sent to the PSP once (one answer per dispute)."""

    class Status(models.TextChoices):
        PENDING = "pending", _("A enviar")
        SENT = "sent", _("Enviada ao PSP")
        FAILED = "failed", _("Recusada pelo PSP")

    infraction = models.OneToOneField(
        PixInfraction, on_delete=models.PROTECT, related_name="answer", verbose_name=_("disputa")
    )
    accept = models.BooleanField(_("aceita devolver"))
    justification = models.TextField(_("justificativa e evidências"))
    actor = models.CharField(_("respondida por"), max_length=150, blank=True)
    status = models.CharField(_("situação"), max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(_("tentativas"), default=0)
    next_run_at = models.DateTimeField(_("próxima tentativa"))
    last_error = models.TextField(_("último erro"), blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(_("enviada em"), null=True, blank=True)

    class Meta:
        verbose_name = _("resposta à disputa")
        verbose_name_plural = _("respostas às disputas")
        indexes = [models.Index(fields=["status", "next_run_at"], name="payments_med_answer_due_idx")]

    def __str__(self) -> str:
        return str(self.get_status_display())
