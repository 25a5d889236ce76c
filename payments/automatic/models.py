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
