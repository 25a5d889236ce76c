"""Inbox of Pix Automático recurrence notices (`POST {webhookUrl}/rec`, Bacen API Pix `WebhookRecBody`)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class PixRecurrenceWebhookEvent(models.Model):
    """One `recs[]` item of a delivery, stored raw before any processing (append-only).

    Unique on (idRec, status): a recurrence passes through each status once (CRIADA → APROVADA → CANCELADA),
    so a re-delivered notice of the same change is stored once and changes nothing.
    """

    id_rec = models.CharField(max_length=29, verbose_name=_("idRec"))
    status = models.CharField(max_length=16, verbose_name=_("situação"))
    # Who ended it and why (`encerramento.cancelamento`): USUARIO_PAGADOR = the payer in the bank app.
    cancelled_by = models.CharField(max_length=24, blank=True, default="", verbose_name=_("cancelada por"))
    cancellation_code = models.CharField(max_length=4, blank=True, default="", verbose_name=_("código"))
    payload = models.JSONField(verbose_name=_("conteúdo"))
    raw_body = models.BinaryField(verbose_name=_("corpo recebido"))
    body_sha256 = models.CharField(max_length=64)
    headers = models.JSONField(default=dict, blank=True, verbose_name=_("cabeçalhos"))
    received_at = models.DateTimeField(verbose_name=_("recebido em"))
    processed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("processado em"))

    class Meta:
        app_label = "payments"
        verbose_name = _("evento de recorrência Pix Automático")
        verbose_name_plural = _("eventos de recorrência Pix Automático")
        ordering = ["-received_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["id_rec", "status"], name="payments_recevent_unique")]

    def __str__(self) -> str:
        return f"{self.id_rec} {self.status}"


class PixRecurringCharge(models.Model):
    """A cycle's charge (`cobr`) at the PSP, created with our txid before the due date (`PUT /cobr/{txid}`).

    `reference` is the shop's cycle (`cyc_…`); `settled_at` is set once, in the transaction that sends
    `recurring_charge_settled`, so a replayed notice or a re-run task never settles it twice."""

    class Status(models.TextChoices):
        SCHEDULED = "scheduled", _("Agendada")
        PAID = "paid", _("Paga")
        RETRYING = "retrying", _("Em nova tentativa")
        FAILED = "failed", _("Não paga")
        CANCELLED = "cancelled", _("Cancelada")

    txid = models.CharField(max_length=35, unique=True)
    id_rec = models.CharField(max_length=29, verbose_name=_("idRec"))
    reference = models.CharField(max_length=60, unique=True, verbose_name=_("referência"))
    amount = models.BigIntegerField(verbose_name=_("valor (centavos)"))
    due_date = models.DateField(verbose_name=_("vencimento"))
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.SCHEDULED)
    retries = models.PositiveSmallIntegerField(default=0, verbose_name=_("retentativas pedidas"))
    # How many failed attempts were told to the shop already (`tentativas` counted), so each is told once.
    failures_told = models.PositiveSmallIntegerField(default=0)
    end_to_end_id = models.CharField(max_length=32, blank=True, default="")
    settled_at = models.DateTimeField(null=True, blank=True, verbose_name=_("liquidada em"))
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "payments"
        verbose_name = _("cobrança Pix Automático")
        verbose_name_plural = _("cobranças Pix Automático")
        ordering = ["-due_date", "-id"]
        constraints = [models.CheckConstraint(condition=models.Q(amount__gt=0), name="payments_cobr_amount_positive")]

    def __str__(self) -> str:
        return f"{self.txid} ({self.get_status_display()})"


class PixRecurringChargeWebhookEvent(models.Model):
    """One `cobsr[]` item of a `/cobr` delivery (Bacen API Pix `WebhookCobRBody`), stored raw (append-only).

    Unique on (txid, body hash of the item): the same notice delivered again is stored once; a new attempt's
    notice (same status, new `tentativas`) is a new row."""

    txid = models.CharField(max_length=35)
    status = models.CharField(max_length=16, verbose_name=_("situação"))
    item_sha256 = models.CharField(max_length=64)
    payload = models.JSONField(verbose_name=_("conteúdo"))
    raw_body = models.BinaryField(verbose_name=_("corpo recebido"))
    headers = models.JSONField(default=dict, blank=True, verbose_name=_("cabeçalhos"))
    received_at = models.DateTimeField(verbose_name=_("recebido em"))
    processed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("processado em"))

    class Meta:
        app_label = "payments"
        verbose_name = _("evento de cobrança Pix Automático")
        verbose_name_plural = _("eventos de cobrança Pix Automático")
        ordering = ["-received_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["txid", "item_sha256"], name="payments_cobrevent_unique")]

    def __str__(self) -> str:
        return f"{self.txid} {self.status}"
