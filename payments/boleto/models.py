"""Boleto data: the boleto issued for a reference at the card gateway, and its refunds (made by bank transfer).

Money is integer centavos. `reference` is the caller's checkout id, also the gateway order `code`.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class BoletoPayment(models.Model):
    """One boleto per reference (a new one only after the last expired or was canceled, a new attempt).

    `issued` = registered at the gateway, waiting for the bank's payment report; `paid` is final (settled once:
    the row is locked and moves forward only); `expired` = unpaid past its due date + the grace days
    (`BOLETO_EXPIRY_GRACE_DAYS`), canceled at the gateway and what the checkout held released.
    """

    class Status(models.TextChoices):
        ISSUED = "issued", _("Aguardando pagamento")
        PAID = "paid", _("Pago")
        EXPIRED = "expired", _("Vencido sem pagamento")

    payment_id = models.CharField(max_length=40, unique=True, verbose_name=_("ID do boleto"))
    reference = models.CharField(max_length=64, verbose_name=_("referência"))
    attempt = models.PositiveSmallIntegerField(default=1, verbose_name=_("tentativa"))
    handler_id = models.CharField(max_length=64, verbose_name=_("meio de pagamento"))
    amount = models.BigIntegerField(verbose_name=_("valor"))
    currency = models.CharField(max_length=3, default="BRL", verbose_name=_("moeda"))
    status = models.CharField(max_length=16, choices=Status.choices, verbose_name=_("situação"))
    due_date = models.DateField(verbose_name=_("vencimento"))
    gateway = models.CharField(max_length=64, verbose_name=_("gateway"))
    gateway_charge_id = models.CharField(max_length=64, unique=True, verbose_name=_("cobrança no gateway"))
    gateway_order_id = models.CharField(max_length=64, blank=True, default="", verbose_name=_("pedido no gateway"))
    gateway_status = models.CharField(max_length=40, blank=True, default="", verbose_name=_("situação no gateway"))
    line = models.CharField(max_length=64, verbose_name=_("linha digitável"))
    pdf_url = models.URLField(max_length=500, blank=True, default="", verbose_name=_("PDF"))
    qr_code = models.CharField(max_length=500, blank=True, default="", verbose_name=_("Pix do boleto"))
    nosso_numero = models.CharField(max_length=40, blank=True, default="", verbose_name=_("nosso número"))
    paid_amount = models.BigIntegerField(default=0, verbose_name=_("valor pago"))
    paid_at = models.DateTimeField(null=True, blank=True, verbose_name=_("pago em"))
    refunded_amount = models.BigIntegerField(default=0, verbose_name=_("valor devolvido"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("criado em"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("atualizado em"))

    class Meta:
        app_label = "payments"
        verbose_name = _("boleto")
        verbose_name_plural = _("boletos")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["reference", "attempt"], name="payments_boleto_reference_attempt"),
            # At most one boleto waiting or paid per reference: a buyer never holds two payable boletos.
            models.UniqueConstraint(
                fields=["reference"], condition=~Q(status="expired"), name="payments_boleto_one_live_per_reference"
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="payments_boleto_amount_positive"),
            models.CheckConstraint(
                condition=Q(refunded_amount__gte=0) & Q(refunded_amount__lte=models.F("paid_amount")),
                name="payments_boleto_refund_bounded",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.payment_id} ({self.get_status_display()})"


class BoletoRefund(models.Model):
    """A refund of (part of) a paid boleto. A boleto has no card to reverse to: the money goes back by bank
    transfer to the payer's account (Pagar.me: "para clientes gateway, o cancelamento de uma cobrança de boleto
    não gera um estorno financeiro", https://docs.pagar.me/reference/cancelar-cobrança). So the refund waits
    for staff (`awaiting_transfer`) with the account the buyer gave, and is completed once staff record the
    transfer (`boleto_refund_mark_transferred`); `refund_id` is the caller's idempotency key."""

    class Status(models.TextChoices):
        AWAITING_TRANSFER = "awaiting_transfer", _("Aguardando transferência")
        COMPLETED = "completed", _("Transferido")
        FAILED = "failed", _("Falhou")

    class Kind(models.TextChoices):
        REQUESTED = "requested", _("Solicitado")
        AUTOMATIC = "automatic", _("Automático")

    refund_id = models.CharField(max_length=64, unique=True, verbose_name=_("ID da devolução"))
    payment = models.ForeignKey(
        BoletoPayment, on_delete=models.PROTECT, related_name="refunds", verbose_name=_("boleto")
    )
    reference = models.CharField(max_length=64, db_index=True, verbose_name=_("referência"))
    amount = models.BigIntegerField(verbose_name=_("valor"))
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.AWAITING_TRANSFER, verbose_name=_("situação")
    )
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.REQUESTED, verbose_name=_("tipo"))
    reason = models.CharField(max_length=140, blank=True, default="", verbose_name=_("motivo"))
    transfer_note = models.CharField(
        max_length=200, blank=True, default="", verbose_name=_("comprovante da transferência"),
        help_text=_("Banco, data e identificação da transferência feita ao comprador (ex.: id do Pix enviado)."),
    )  # fmt: skip
    finished_by = models.CharField(max_length=150, blank=True, default="", verbose_name=_("registrado por"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("criado em"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finalizado em"))

    class Meta:
        app_label = "payments"
        verbose_name = _("devolução de boleto")
        verbose_name_plural = _("devoluções de boleto")
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=Q(amount__gt=0), name="payments_boletorefund_amount_positive")]

    def __str__(self) -> str:
        return f"{self.refund_id} ({self.get_status_display()})"
