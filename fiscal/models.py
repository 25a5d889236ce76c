"""Fiscal documents (one NF-e per order), the provider webhook inbox and the job outbox.

The app knows an order only by its public id (`order_ref`): it imports nothing of ours. The shop writes
a `FiscalJob` in the same transaction as the payment/placement that causes it; a Celery task runs it
outside any transaction; the unique `key` makes issue and cancel happen once per (order, action, attempt).
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.db import models
from django.utils.translation import gettext_lazy as _

# SEFAZ: an authorized NF-e (model 55) is cancelled up to 24 h after its authorization (Ajuste SINIEF 07/05,
# cláusula décima segunda); after that the operation is undone by a nota de entrada (devolução), never a cancel.
CANCEL_WINDOW = timedelta(hours=24)
BLOCKED_PREFIX = "Dados fiscais incompletos: "  # the reason of a document blocked before any provider call


def _download_token() -> str:
    return secrets.token_urlsafe(24)  # 192 bits: the buyer's DANFE link is unguessable, like the permalink


class FiscalDocument(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", _("Pendente")
        PROCESSING = "processing", _("Em processamento")
        AUTHORIZED = "authorized", _("Autorizada")
        REJECTED = "rejected", _("Rejeitada")
        CANCELLED = "cancelled", _("Cancelada")

    class Environment(models.TextChoices):
        HOMOLOGATION = "homologacao", _("Homologação")
        PRODUCTION = "producao", _("Produção")

    order_ref = models.CharField(_("pedido"), max_length=64, db_index=True)
    # 1 for the order's first note; a note issued after a cancel-and-reissue (the buyer's CPF or name was wrong) is
    # the next one. The cancelled note stays beside it: the SEFAZ keeps both, and so does the accountant's list.
    sequence = models.PositiveSmallIntegerField(_("nota do pedido"), default=1)
    order_number = models.PositiveIntegerField(_("número do pedido"), null=True, blank=True)
    doc_type = models.CharField(_("tipo"), max_length=8, default="nfe")
    status = models.CharField(_("situação"), max_length=16, choices=Status.choices, default=Status.PENDING)
    provider = models.CharField(_("emissor"), max_length=32, blank=True)
    provider_ref = models.CharField(_("referência no emissor"), max_length=80, blank=True)
    attempt = models.PositiveIntegerField(_("tentativa"), default=1)
    environment = models.CharField(
        _("ambiente"), max_length=12, choices=Environment.choices, default=Environment.HOMOLOGATION
    )
    access_key = models.CharField(_("chave de acesso"), max_length=44, blank=True)
    number = models.PositiveIntegerField(_("número"), null=True, blank=True)
    series = models.PositiveIntegerField(_("série"), null=True, blank=True)
    protocol = models.CharField(_("protocolo"), max_length=32, blank=True)
    sefaz_status = models.CharField(_("código SEFAZ"), max_length=8, blank=True)
    sefaz_reason = models.CharField(_("motivo SEFAZ"), max_length=500, blank=True)
    xml = models.FileField(_("XML"), upload_to="fiscal/xml/", blank=True)
    danfe = models.FileField(_("DANFE"), upload_to="fiscal/danfe/", blank=True)
    # The cancellation event (procEventoNFe 110111) of a cancelled note: kept with the note's XML, as the law asks
    # of the issuer and the accountant asks of the shop.
    cancel_xml = models.FileField(_("XML do cancelamento"), upload_to="fiscal/xml/", blank=True)
    download_token = models.CharField(max_length=40, unique=True, default=_download_token, editable=False)
    # IBSCBSTot of the note as requested (fiscal/ibscbs.py: base, ibs_uf_amount, ibs_mun_amount, ibs_amount,
    # cbs_amount, centavos); {} when the note carries no IBS/CBS group.
    ibs_cbs_totals = models.JSONField(_("totais do IBS/CBS"), default=dict, blank=True)
    issued_at = models.DateTimeField(_("autorizada em"), null=True, blank=True)
    cancelled_at = models.DateTimeField(_("cancelada em"), null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("nota fiscal")
        verbose_name_plural = _("notas fiscais")
        ordering = ["-created_at", "-id"]
        # Issuing a note has fiscal effect (a number spent at the SEFAZ): its own permission, not the order's.
        permissions = [("issue_fiscaldocument", _("Pode emitir, cancelar e reemitir NF-e"))]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(status="authorized") | models.Q(access_key__regex=r"^\d{44}$"),
                name="fiscal_authorized_has_key",
            ),
            # One first note per order, and one replacement per cancelled note: a replayed cancel job cannot issue
            # a second one.
            models.UniqueConstraint(fields=["order_ref", "sequence"], name="fiscal_one_document_per_order_sequence"),
        ]

    def __str__(self) -> str:
        # The page title and breadcrumb staff read: the order as they know it (#1001), not its technical id.
        order = f"#{self.order_number}" if self.order_number else self.order_ref
        return str(_("NF-e nº %(number)s — pedido %(order)s (%(status)s)")) % {
            "number": self.number or "—", "order": order, "status": self.status_text(),
        }  # fmt: skip

    @property
    def blocked(self) -> bool:
        """Refused before any provider call for missing data (stored as rejected, but the SEFAZ never saw it)."""
        return (
            self.status == self.Status.REJECTED
            and not self.sefaz_status
            and self.sefaz_reason.startswith(BLOCKED_PREFIX)
        )

    def status_text(self) -> str:
        """The status in staff words: a note blocked for missing data is not "rejeitada" by the SEFAZ."""
        return str(_("Bloqueada (dados faltando)")) if self.blocked else str(self.get_status_display())


class FiscalJob(models.Model):
    """Outbox row: one provider call to make. `key` = "<order_ref>:<action>:<attempt>", unique."""

    class Action(models.TextChoices):
        ISSUE = "issue", _("Emitir")
        CANCEL = "cancel", _("Cancelar")
        CORRECT = "correct", _("Carta de correção")
        RETURN = "return", _("NF-e de devolução")

    class Status(models.TextChoices):
        PENDING = "pending", _("Pendente")  # to call (again) at `next_run_at`
        WAITING = "waiting", _("Aguardando emissor")  # accepted by the provider: poll or webhook
        DONE = "done", _("Concluída")

    document = models.ForeignKey(
        FiscalDocument, on_delete=models.CASCADE, related_name="jobs", verbose_name=_("nota fiscal")
    )
    action = models.CharField(_("ação"), max_length=8, choices=Action.choices)
    key = models.CharField(_("chave"), max_length=120, unique=True)
    payload = models.JSONField(_("dados enviados"), default=dict)  # the invoice (issue) or the justification (cancel)
    status = models.CharField(_("situação"), max_length=8, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(_("tentativas"), default=0)
    next_run_at = models.DateTimeField(_("próxima tentativa"))
    last_error = models.CharField(_("última falha"), max_length=500, blank=True)
    created_at = models.DateTimeField(_("criada em"), auto_now_add=True)
    finished_at = models.DateTimeField(_("concluída em"), null=True, blank=True)

    class Meta:
        verbose_name = _("tarefa fiscal")
        verbose_name_plural = _("tarefas fiscais")
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["status", "next_run_at"], name="fiscal_job_due_idx")]

    def __str__(self) -> str:
        return f"{self.key} ({self.status})"


# SEFAZ: at most 20 correction letters (CC-e, event 110110) per note; each one replaces the ones before it, so the
# last letter carries every correction still wanted (NT 2011.004; Ajuste SINIEF 01/07 for what it may not change).
CORRECTION_LIMIT = 20
CORRECTION_MIN, CORRECTION_MAX = 15, 1000  # xCorrecao of the event's schema (CCe_v1.00.xsd)


class FiscalCorrection(models.Model):
    """A carta de correção (CC-e) of an authorized note: asked by staff, registered (or refused) by the SEFAZ
    through the provider, kept with its event XML and PDF for the accountant."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Enviada à SEFAZ")
        REGISTERED = "registered", _("Registrada")
        REFUSED = "refused", _("Recusada")

    document = models.ForeignKey(
        FiscalDocument, on_delete=models.CASCADE, related_name="corrections", verbose_name=_("nota fiscal")
    )
    # Ours: the note's letters in the order staff asked them (unique per note, so a double click asks one).
    sequence = models.PositiveSmallIntegerField(_("pedido de correção nº"))
    # The SEFAZ's nSeqEvento, as the provider answered it (a refused letter has none).
    number = models.PositiveSmallIntegerField(_("carta nº"), null=True, blank=True)
    text = models.TextField(_("correção"), max_length=CORRECTION_MAX)
    status = models.CharField(_("situação"), max_length=12, choices=Status.choices, default=Status.PENDING)
    sefaz_status = models.CharField(_("código SEFAZ"), max_length=8, blank=True)
    sefaz_reason = models.CharField(_("motivo SEFAZ"), max_length=500, blank=True)
    xml = models.FileField(_("XML da carta"), upload_to="fiscal/xml/", blank=True)
    pdf = models.FileField(_("PDF da carta"), upload_to="fiscal/cce/", blank=True)
    requested_by = models.CharField(_("pedida por"), max_length=150, blank=True)
    created_at = models.DateTimeField(_("pedida em"), auto_now_add=True)
    registered_at = models.DateTimeField(_("registrada em"), null=True, blank=True)

    class Meta:
        verbose_name = _("carta de correção")
        verbose_name_plural = _("cartas de correção")
        ordering = ["document", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["document", "sequence"], name="fiscal_one_correction_per_sequence"),
        ]

    def __str__(self) -> str:
        return str(_("Carta de correção nº %(number)s (%(status)s)")) % {
            "number": self.number or "—", "status": self.get_status_display(),
        }  # fmt: skip


class FiscalReturnNote(models.Model):
    """The NF-e de devolução (entrada, finalidade 4) of goods a buyer sent back: issued by the shop, which sold to a
    consumer (a non-contributor who issues no note), referencing the sale's note (refNFe) with the returned items
    and quantities at the sale's values and taxes. One per received return (`return_ref`); a rejected one is asked
    again under the next `attempt` (a new reference at the provider), like the sale's note."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pendente")
        PROCESSING = "processing", _("Em processamento")
        AUTHORIZED = "authorized", _("Autorizada")
        REJECTED = "rejected", _("Rejeitada")

    document = models.ForeignKey(
        FiscalDocument, on_delete=models.CASCADE, related_name="return_notes", verbose_name=_("NF-e de venda")
    )
    return_ref = models.CharField(_("devolução"), max_length=40, unique=True)  # the return request's public id
    attempt = models.PositiveIntegerField(_("tentativa"), default=1)
    provider_ref = models.CharField(_("referência no emissor"), max_length=80, unique=True)
    status = models.CharField(_("situação"), max_length=16, choices=Status.choices, default=Status.PENDING)
    access_key = models.CharField(_("chave de acesso"), max_length=44, blank=True)
    number = models.PositiveIntegerField(_("número"), null=True, blank=True)
    series = models.PositiveIntegerField(_("série"), null=True, blank=True)
    protocol = models.CharField(_("protocolo"), max_length=32, blank=True)
    sefaz_status = models.CharField(_("código SEFAZ"), max_length=8, blank=True)
    sefaz_reason = models.CharField(_("motivo SEFAZ"), max_length=500, blank=True)
    xml = models.FileField(_("XML"), upload_to="fiscal/xml/", blank=True)
    danfe = models.FileField(_("DANFE"), upload_to="fiscal/danfe/", blank=True)
    quantities = models.JSONField(_("itens devolvidos"), default=dict)  # SKU → units, as asked
    total_amount = models.BigIntegerField(_("valor total"), default=0)  # vNF in centavos, as asked
    ibs_cbs_totals = models.JSONField(_("totais do IBS/CBS"), default=dict, blank=True)
    requested_by = models.CharField(_("pedida por"), max_length=150, blank=True)
    created_at = models.DateTimeField(_("pedida em"), auto_now_add=True)
    issued_at = models.DateTimeField(_("autorizada em"), null=True, blank=True)

    class Meta:
        verbose_name = _("NF-e de devolução")
        verbose_name_plural = _("NF-e de devolução")
        ordering = ["document", "created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(status="authorized") | models.Q(access_key__regex=r"^\d{44}$"),
                name="fiscal_return_note_authorized_has_key",
            ),
        ]

    def __str__(self) -> str:
        return str(_("NF-e de devolução nº %(number)s (%(status)s)")) % {
            "number": self.number or "—", "status": self.get_status_display(),
        }  # fmt: skip


class FiscalWebhook(models.Model):
    """Inbox: a provider notification stored raw before processing; one row per provider event id."""

    provider = models.CharField(_("emissor"), max_length=32)
    event_id = models.CharField(_("ID do evento"), max_length=128)
    provider_ref = models.CharField(_("referência no emissor"), max_length=80)
    body = models.JSONField(_("corpo recebido"))
    received_at = models.DateTimeField(_("recebida em"), auto_now_add=True)
    processed_at = models.DateTimeField(_("processada em"), null=True, blank=True)

    class Meta:
        verbose_name = _("notificação do emissor")
        verbose_name_plural = _("notificações do emissor")
        constraints = [models.UniqueConstraint(fields=["provider", "event_id"], name="fiscal_webhook_once")]

    def __str__(self) -> str:
        return f"{self.provider} {self.event_id}"


class SandboxSequence(models.Model):
    """The sandbox provider's NF-e numbering per series (a real provider numbers the notes itself)."""

    series = models.PositiveIntegerField(unique=True)
    last_number = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"série {self.series}: {self.last_number}"


class SandboxNote(models.Model):
    """What the sandbox provider "authorized", by reference: a repeated issue returns the same note."""

    ref = models.CharField(max_length=80, unique=True)
    access_key = models.CharField(max_length=44)
    number = models.PositiveIntegerField()
    series = models.PositiveIntegerField()
    protocol = models.CharField(max_length=32)
    invoice = models.JSONField(default=dict)
    issued_at = models.DateTimeField()
    cancelled_at = models.DateTimeField(null=True, blank=True)
    corrections = models.JSONField(default=list)  # the texts of the letters it registered, in order

    def __str__(self) -> str:
        return self.ref
