"""DRF serializers of the merchant back-office API: input validation names the field; output is plain data."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from orders.extras import order_extras
from orders.models import Order
from orders.selectors import order_bcp_payload, rfc3339
from orders.types import LineQuantity


class LineQuantitySerializer(serializers.Serializer):
    id = serializers.CharField(max_length=64)
    quantity = serializers.IntegerField(min_value=1, max_value=2**31 - 1)


def to_line_quantities(items: list[dict[str, Any]] | None) -> list[LineQuantity]:
    return [LineQuantity(item["id"], item["quantity"]) for item in items or []]


class OrderListSerializer(serializers.Serializer):
    def to_representation(self, order: Order) -> dict[str, Any]:
        return {
            "id": order.public_id,
            "number": order.number,
            "placed_at": rfc3339(order.placed_at),
            "status": order.status,
            "payment_status": order.payment_status,
            "buyer": {"name": order.buyer_name, "email": order.buyer_email},
            "currency": order.currency,
            "total": order.total_amount,
            "fulfillment_method": order.fulfillment_method,
        }


class OrderDetailSerializer(serializers.Serializer):
    def to_representation(self, order: Order) -> dict[str, Any]:
        return {
            **OrderListSerializer().to_representation(order),
            "buyer": {
                "first_name": order.buyer_first_name,
                "last_name": order.buyer_last_name,
                "email": order.buyer_email,
                "phone": order.buyer_phone,
                "tax_id": order.buyer_tax_id,
            },
            "destination": order.destination,
            "payment": {
                "type": order.payment_type,
                "handler_id": order.payment_handler_id,
                "reference": order.payment_reference,
                "txid": order.payment_txid,
                "paid": order.paid_amount,
                "refunded": order.refunded_amount,
            },
            "platform_id": order.platform_id,
            "language": order.language,
            "bcp": order_bcp_payload(order),
            **order_extras(order),  # e.g. "fiscal_documents" (the shop's NF-e), without orders importing it
        }


class FulfillmentEventCreateSerializer(serializers.Serializer):
    type = serializers.RegexField(r"^[a-z][a-z0-9_]{0,39}$", help_text="shipped, delivered, in_transit, …")
    line_items = LineQuantitySerializer(
        many=True, required=False, help_text=gettext_lazy("Sem line_items: tudo o que ainda for possível.")
    )
    tracking_number = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    tracking_url = serializers.URLField(max_length=500, required=False, allow_blank=True, default="")
    carrier = serializers.CharField(max_length=80, required=False, allow_blank=True, default="")
    description = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    occurred_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class TrackingCorrectionCreateSerializer(serializers.Serializer):
    event_id = serializers.RegexField(
        r"^evt_[A-Za-z0-9]{1,60}$", help_text=gettext_lazy("O envio (evento shipped, `evt_…`) cujo código está errado.")
    )
    tracking_number = serializers.CharField(max_length=64, help_text=gettext_lazy("O código de rastreio correto."))
    tracking_url = serializers.URLField(max_length=500, required=False, allow_blank=True, default="")
    carrier = serializers.CharField(
        max_length=80,
        required=False,
        allow_blank=True,
        default="",
        help_text=gettext_lazy("Vazio: a transportadora do envio continua a mesma."),
    )


class AdjustmentCreateSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["refund", "cancellation", "return"])
    amount = serializers.IntegerField(
        min_value=1,
        required=False,
        help_text=gettext_lazy("Em centavos: obrigatório num reembolso (refund); opcional numa devolução (return)."),
    )
    reason = serializers.CharField(max_length=255)
    line_items = LineQuantitySerializer(many=True, required=False)
    restock = serializers.BooleanField(required=False, default=True)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["type"] == "refund" and "amount" not in data:
            raise serializers.ValidationError(
                {"amount": [_("Informe amount, o valor a reembolsar em centavos: obrigatório num reembolso (refund).")]}
            )
        if data["type"] == "return" and not data.get("line_items"):
            raise serializers.ValidationError(
                {"line_items": [_("Informe line_items, os itens devolvidos: obrigatório numa devolução (return).")]}
            )
        return data


class NoteCreateSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=4000)
