"""Abandoned-checkout reminders: one row per reminded checkout (the unique key that makes it once), opt-outs."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from shop.models.checkout import Checkout


class CheckoutReminder(models.Model):
    """Written when a checkout is found abandoned (outbox row); `sent_at` once the e-mail went out."""

    checkout = models.OneToOneField(Checkout, on_delete=models.CASCADE, related_name="reminder")
    email = models.CharField(_("e-mail"), max_length=254)
    created_at = models.DateTimeField(_("criado em"), auto_now_add=True)
    sent_at = models.DateTimeField(_("enviado em"), null=True, blank=True)
    skipped = models.CharField(_("não enviado porque"), max_length=40, blank=True)

    class Meta:
        verbose_name = _("lembrete de checkout")
        verbose_name_plural = _("lembretes de checkout")

    def __str__(self) -> str:
        return f"{self.checkout_id} → {self.email}"


class ReminderOptOut(models.Model):
    """A buyer who asked for no more reminders (by e-mail, case-folded)."""

    email = models.CharField(_("e-mail"), max_length=254, unique=True)
    created_at = models.DateTimeField(_("criado em"), auto_now_add=True)

    class Meta:
        verbose_name = _("recusa de lembretes")
        verbose_name_plural = _("recusas de lembretes")

    def __str__(self) -> str:
        return self.email


class BoletoNotice(models.Model):
    """A boleto e-mail to the buyer (outbox row, once per boleto and kind); `sent_at` once it went out."""

    class Kind(models.TextChoices):
        ISSUED = "issued", _("Boleto emitido")
        DUE_SOON = "due_soon", _("Vence amanhã")
        EXPIRED = "expired", _("Venceu sem pagamento")

    checkout = models.ForeignKey(Checkout, on_delete=models.CASCADE, related_name="boleto_notices")
    payment_id = models.CharField(_("ID do boleto"), max_length=40)
    kind = models.CharField(_("tipo"), max_length=16, choices=Kind.choices)
    email = models.CharField(_("e-mail"), max_length=254)
    created_at = models.DateTimeField(_("criado em"), auto_now_add=True)
    sent_at = models.DateTimeField(_("enviado em"), null=True, blank=True)
    skipped = models.CharField(_("não enviado porque"), max_length=40, blank=True)

    class Meta:
        verbose_name = _("aviso de boleto")
        verbose_name_plural = _("avisos de boleto")
        constraints = [models.UniqueConstraint(fields=["payment_id", "kind"], name="shop_boleto_notice_once")]

    def __str__(self) -> str:
        return f"{self.payment_id} {self.kind} → {self.email}"
