"""Freight: packaging boxes (store settings) and carrier labels bought for orders.

A label lives in the shop, not in orders (orders may not import carriers) nor in carriers (a leaf keeps no
rows about orders): the shop is what joins an order to a carrier. One live label per order (requested or
purchased); a canceled or failed one may be followed by a new purchase.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from kernel.ids import new_public_id


def new_label_id() -> str:
    return new_public_id("lbl")


class PackagingBox(models.Model):
    """A box the store packs in (inside measures); the packing rule takes the smallest that fits."""

    name = models.CharField(_("nome"), max_length=60)
    length_cm = models.PositiveIntegerField(_("comprimento interno (cm)"))
    width_cm = models.PositiveIntegerField(_("largura interna (cm)"))
    height_cm = models.PositiveIntegerField(_("altura interna (cm)"))
    weight_grams = models.PositiveIntegerField(_("peso da caixa vazia (g)"), default=0)
    max_weight_grams = models.PositiveIntegerField(_("peso máximo (g)"), default=30_000)
    active = models.BooleanField(_("ativa"), default=True)

    class Meta:
        verbose_name = _("caixa de embalagem")
        verbose_name_plural = _("caixas de embalagem")
        ordering = ["length_cm", "width_cm", "height_cm", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(length_cm__gte=1) & Q(width_cm__gte=1) & Q(height_cm__gte=1),
                name="packaging_box_positive_sides",
                violation_error_message=_("As medidas da caixa devem ser de pelo menos 1 cm."),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.length_cm}×{self.width_cm}×{self.height_cm} cm)"


class ShippingLabel(models.Model):
    class Status(models.TextChoices):
        REQUESTED = "requested", _("Comprando")
        PURCHASED = "purchased", _("Comprada")
        FAILED = "failed", _("Não comprada")
        CANCELED = "canceled", _("Cancelada")
        # The carrier brought the parcel back: the label is spent, the order may have a new one to go again.
        RETURNED = "returned", _("Devolvida ao remetente")

    LIVE = (Status.REQUESTED, Status.PURCHASED)

    public_id = models.CharField(_("ID público"), max_length=40, unique=True, default=new_label_id, editable=False)
    order = models.ForeignKey("orders.Order", on_delete=models.PROTECT, related_name="shipping_labels")
    carrier = models.CharField(_("integração"), max_length=20)  # "melhorenvio" | "correios"
    service_code = models.CharField(_("serviço"), max_length=40)
    service_name = models.CharField(_("nome do serviço"), max_length=80, blank=True)
    carrier_name = models.CharField(_("transportadora"), max_length=80, blank=True)  # who carries: "Correios"
    status = models.CharField(_("situação"), max_length=16, choices=Status.choices, default=Status.REQUESTED)
    parcels = models.JSONField(_("volumes"), default=list)
    remote_id = models.CharField(_("ID na transportadora"), max_length=80, blank=True)
    tracking_code = models.CharField(_("código de rastreio"), max_length=64, blank=True, db_index=True)
    # How far the purchase got at the carrier (carriers.LabelState.extra): a rerun continues from here.
    remote_state = models.JSONField(default=dict, blank=True)
    quoted_price = models.BigIntegerField(_("preço cotado (centavos)"), default=0)
    cost = models.BigIntegerField(_("custo (centavos)"), default=0)
    last_error = models.CharField(_("último erro"), max_length=500, blank=True)
    requested_by = models.CharField(_("pedida por"), max_length=150, blank=True)
    created_at = models.DateTimeField(_("pedida em"), auto_now_add=True)
    purchased_at = models.DateTimeField(_("comprada em"), null=True, blank=True)
    canceled_at = models.DateTimeField(_("cancelada em"), null=True, blank=True)
    last_polled_at = models.DateTimeField(null=True, blank=True)
    # Delivered or back at the sender: tracking stops.
    finished_at = models.DateTimeField(_("rastreio encerrado em"), null=True, blank=True)

    class Meta:
        verbose_name = _("etiqueta de envio")
        verbose_name_plural = _("etiquetas de envio")
        ordering = ["-created_at", "-id"]
        constraints = [
            # A double click or a retried request finds the live label: never a second purchase.
            models.UniqueConstraint(
                fields=["order"],
                condition=Q(status__in=["requested", "purchased"]),
                name="shipping_label_one_live_per_order",
            ),
            models.CheckConstraint(condition=Q(cost__gte=0), name="shipping_label_cost_non_negative"),
        ]
        indexes = [models.Index(fields=["carrier", "status"], name="shipping_label_carrier_idx")]

    def __str__(self) -> str:
        return f"{self.public_id} ({self.get_status_display()})"


class LabelTrackingEvent(models.Model):
    """A carrier event already turned into the order's fulfillment event (or judged to move nothing):
    a webhook delivered twice, or a poll that sees the same history again, changes nothing."""

    label = models.ForeignKey(ShippingLabel, on_delete=models.CASCADE, related_name="tracking_events")
    event_id = models.CharField(max_length=200)
    kind = models.CharField(max_length=20)
    occurred_at = models.DateTimeField()
    description = models.CharField(max_length=255, blank=True)
    fulfillment_event_id = models.CharField(max_length=40, blank=True)  # "" when it moved nothing
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("evento de rastreio")
        verbose_name_plural = _("eventos de rastreio")
        ordering = ["occurred_at", "id"]
        constraints = [models.UniqueConstraint(fields=["label", "event_id"], name="label_tracking_event_once")]

    def __str__(self) -> str:
        return f"{self.kind} {self.event_id}"
