"""Card payments data: the payment per checkout, the gateway webhook inbox, refunds, the sandbox gateway's charges.

Money is integer centavos. `reference` is the caller's checkout id, which is also the order `code` sent
to the gateway, so a payment whose local row was never written can be found there again (reconcile).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class CardPayment(models.Model):
    """A tokenized card payment through a gateway; one per reference (a decline may be retried).

    `pending` = sent to the gateway, outcome unknown (timeout, or a capture not confirmed yet): the
    webhook or the reconcile sweep decides it. An approval is final; refunds only add to `refunded_amount`.
    """

    class Status(models.TextChoices):
        PENDING = "pending", _("Em análise")
        APPROVED = "approved", _("Aprovado")
        DECLINED = "declined", _("Recusado")

    payment_id = models.CharField(max_length=40, unique=True, verbose_name=_("ID do pagamento"))
    reference = models.CharField(max_length=64, unique=True, verbose_name=_("referência"))
    handler_id = models.CharField(max_length=64, verbose_name=_("meio de pagamento"))
    amount = models.BigIntegerField(verbose_name=_("valor"))
    currency = models.CharField(max_length=3, default="BRL", verbose_name=_("moeda"))
    installments = models.PositiveSmallIntegerField(default=1, verbose_name=_("parcelas"))
    status = models.CharField(max_length=16, choices=Status.choices, verbose_name=_("situação"))
    code = models.CharField(max_length=32, blank=True, default="", verbose_name=_("código"))
    message = models.CharField(max_length=200, blank=True, default="", verbose_name=_("mensagem"))
    gateway = models.CharField(max_length=64, verbose_name=_("gateway"))
    # The gateway's charge id (Pagar.me `ch_…`): captures, refunds and webhooks name it.
    gateway_reference = models.CharField(max_length=64, blank=True, default="", verbose_name=_("referência no gateway"))
    gateway_order_id = models.CharField(max_length=64, blank=True, default="", verbose_name=_("pedido no gateway"))
    gateway_status = models.CharField(max_length=40, blank=True, default="", verbose_name=_("situação no gateway"))
    refunded_amount = models.BigIntegerField(default=0, verbose_name=_("valor estornado"))
    card_brand = models.CharField(max_length=20, blank=True, default="", verbose_name=_("bandeira"))
    card_last_digits = models.CharField(max_length=4, blank=True, default="", verbose_name=_("final do cartão"))
    # Never the token itself: a SHA-256 fingerprint is enough to recognise a replay.
    token_fingerprint = models.CharField(max_length=64, blank=True, default="", verbose_name=_("impressão do token"))
    attempts = models.PositiveIntegerField(default=1, verbose_name=_("tentativas"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("criado em"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("atualizado em"))

    class Meta:
        app_label = "payments"
        verbose_name = _("pagamento com cartão")
        verbose_name_plural = _("pagamentos com cartão")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="payments_cardpayment_amount_positive"),
            models.CheckConstraint(
                condition=Q(installments__gte=1) & Q(installments__lte=24), name="payments_cardpayment_installments"
            ),
            models.CheckConstraint(
                condition=Q(refunded_amount__gte=0) & Q(refunded_amount__lte=models.F("amount")),
                name="payments_cardpayment_refund_bounded",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.payment_id} ({self.get_status_display()})"


class CardWebhookEvent(models.Model):
    """Inbox row: one gateway webhook delivery, stored raw before any processing, unique on the hook id."""

    event_id = models.CharField(max_length=64, unique=True, verbose_name=_("ID do evento"))
    type = models.CharField(max_length=64, verbose_name=_("tipo"))
    charge_id = models.CharField(max_length=64, blank=True, default="", verbose_name=_("cobrança no gateway"))
    payload = models.JSONField(verbose_name=_("conteúdo"))
    body_sha256 = models.CharField(max_length=64)
    received_at = models.DateTimeField(auto_now_add=True, verbose_name=_("recebido em"))
    processed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("processado em"))
    outcome = models.CharField(max_length=64, blank=True, default="", verbose_name=_("resultado"))
    attempts = models.PositiveIntegerField(default=0, verbose_name=_("tentativas"))
    last_error = models.TextField(blank=True, default="", verbose_name=_("último erro"))

    class Meta:
        app_label = "payments"
        verbose_name = _("evento de webhook do cartão")
        verbose_name_plural = _("eventos de webhook do cartão")
        ordering = ["-received_at", "-id"]

    def __str__(self) -> str:
        return f"{self.event_id} {self.type}"


class CardRefund(models.Model):
    """An estorno of (part of) an approved card payment; `refund_id` is the caller's idempotency key,
    also sent to the gateway as its Idempotency-Key, so a retried DELETE never refunds twice."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pendente")
        COMPLETED = "completed", _("Concluído")
        FAILED = "failed", _("Falhou")

    class Kind(models.TextChoices):
        REQUESTED = "requested", _("Solicitado")
        AUTOMATIC = "automatic", _("Automático")

    refund_id = models.CharField(max_length=64, unique=True, verbose_name=_("ID do estorno"))
    payment = models.ForeignKey(
        CardPayment, on_delete=models.PROTECT, related_name="refunds", verbose_name=_("pagamento")
    )
    reference = models.CharField(max_length=64, db_index=True, verbose_name=_("referência"))
    amount = models.BigIntegerField(verbose_name=_("valor"))
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, verbose_name=_("situação"))
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.REQUESTED, verbose_name=_("tipo"))
    reason = models.CharField(max_length=140, blank=True, default="", verbose_name=_("motivo"))
    attempts = models.PositiveIntegerField(default=0, verbose_name=_("tentativas"))
    gateway_status = models.CharField(max_length=40, blank=True, default="", verbose_name=_("situação no gateway"))
    last_error = models.TextField(blank=True, default="", verbose_name=_("último erro"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("criado em"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("atualizado em"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finalizado em"))

    class Meta:
        app_label = "payments"
        verbose_name = _("estorno de cartão")
        verbose_name_plural = _("estornos de cartão")
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=Q(amount__gt=0), name="payments_cardrefund_amount_positive")]

    def __str__(self) -> str:
        return f"{self.refund_id} ({self.get_status_display()})"


class SandboxCardCharge(models.Model):
    """The sandbox gateway's own view of a charge (Pagar.me v5 shape), so capture, refund, lookup by
    order code and webhooks behave in development as they do at the real gateway."""

    charge_id = models.CharField(max_length=40, unique=True)
    order_id = models.CharField(max_length=40, unique=True)
    code = models.CharField(max_length=64, db_index=True)
    idempotency_key = models.CharField(max_length=120, unique=True)
    amount = models.BigIntegerField()
    installments = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=20)  # pending | paid | failed | canceled
    transaction_status = models.CharField(max_length=40)
    paid_amount = models.BigIntegerField(default=0)
    canceled_amount = models.BigIntegerField(default=0)
    acquirer_return_code = models.CharField(max_length=8, blank=True, default="")
    card_brand = models.CharField(max_length=20, blank=True, default="")
    card_last_digits = models.CharField(max_length=4, blank=True, default="")
    # A boleto (payments/boleto/): its due date and linha digitável; `paid_at` when "paid" at the sandbox.
    payment_method = models.CharField(max_length=20, default="credit_card")
    due_date = models.DateField(null=True, blank=True)
    boleto_line = models.CharField(max_length=64, blank=True, default="")
    paid_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "payments"

    def __str__(self) -> str:
        return f"sandbox charge {self.charge_id} {self.status}"
