"""Merchant back-office API (`/api/v1/`, DRF, token auth, browsable). Thin: validate → service → selector.

Writes accept an `Idempotency-Key` header: a replay (same key, same request) returns the stored response
without running again; the same key with another request is a 409.
Permissions mirror the admin: staff with `orders.view_order` read; `orders.ship_order` posts fulfillment
events and tracking corrections; `orders.refund_order` posts adjustments; `orders.change_order` adds notes.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.urls import reverse as django_reverse
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from rest_framework import generics, permissions, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from orders import serializers as s
from orders.errors import OrderError
from orders.models import (
    ApiIdempotencyRecord,
    FulfillmentEvent,
    FulfillmentEventType,
    Order,
    OrderStatus,
    PaymentStatus,
)
from orders.openapi import OPENAPI
from orders.selectors import (
    adjustment_payload,
    api_actor,
    event_payload,
    order_for_bcp,
    order_search,
    orders_sharing_tracking,
    shipment_tracking_now,
)
from orders.services import (
    fulfillment_event_create,
    order_cancel,
    order_note_add,
    order_refund,
    order_return,
    order_tracking_correct,
)


class StaffWithPermission(permissions.BasePermission):
    """Staff user holding the view's `required_perm` (Django model permission)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.is_staff and user.has_perm(view.required_perm))


def _service_error(error: OrderError) -> ValidationError:
    # The service names the input at fault: line indexes follow the request's `line_items` array.
    field = error.field.replace("lines[", "line_items[", 1) if error.field.startswith("lines[") else error.field
    if field == "lines":
        field = "line_items"
    return ValidationError({field: [error.message]}, code=error.code)


def _parse_when(value: str | None, field: str) -> datetime | None:
    if not value:
        return None
    parsed = parse_datetime(value)
    if parsed is None:
        raise ValidationError(
            {
                field: [
                    _("%(field)s não é uma data e hora ISO 8601: use, por exemplo, 2026-07-28T12:00:00-03:00.")
                    % {"field": field}
                ]
            }
        )
    return parsed


class ApiRoot(APIView):
    """Merchant back-office API: orders, their fulfillment events, adjustments (refund, cancellation, return), notes."""

    required_perm = "orders.view_order"
    permission_classes = [StaffWithPermission]

    def get(self, request: Request) -> Response:
        return Response(
            {
                "orders": reverse("orders:api-orders", request=request),
                "openapi": reverse("orders:api-openapi", request=request),
            }
        )


class ApiSchema(APIView):
    """This API's OpenAPI 3.1 description (`orders/openapi.py`)."""

    required_perm = "orders.view_order"
    permission_classes = [StaffWithPermission]

    def get(self, request: Request) -> Response:
        return Response(OPENAPI)


class OrderList(generics.ListAPIView):
    """Orders, newest first. Filters: status, payment_status, fulfillment_method, placed_after, placed_before, q."""

    required_perm = "orders.view_order"
    permission_classes = [StaffWithPermission]
    serializer_class = s.OrderListSerializer

    def get_queryset(self) -> QuerySet[Order]:
        params = self.request.query_params
        queryset = order_search(query=params.get("q", "")).order_by("-number")
        for name, allowed in (("status", OrderStatus.values), ("payment_status", PaymentStatus.values)):
            value = params.get(name)
            if value:
                if value not in allowed:
                    raise ValidationError(
                        {
                            name: [
                                _("%(field)s “%(value)s” não existe: use um destes valores: %(allowed)s.")
                                % {"field": name, "value": value, "allowed": ", ".join(allowed)}
                            ]
                        }
                    )
                queryset = queryset.filter(**{name: value})
        if params.get("fulfillment_method"):
            queryset = queryset.filter(fulfillment_method=params["fulfillment_method"])
        after = _parse_when(params.get("placed_after"), "placed_after")
        before = _parse_when(params.get("placed_before"), "placed_before")
        if after:
            queryset = queryset.filter(placed_at__gte=after)
        if before:
            queryset = queryset.filter(placed_at__lt=before)
        return queryset


class OrderDetail(APIView):
    required_perm = "orders.view_order"
    permission_classes = [StaffWithPermission]

    def get(self, request: Request, order_id: str) -> Response:
        order = order_for_bcp(order_id)
        if order is None:
            raise NotFound(_("Pedido %(order_id)s não encontrado.") % {"order_id": order_id})
        return Response(s.OrderDetailSerializer().to_representation(order))


class _OrderWrite(APIView):
    input_serializer: type[s.serializers.Serializer]

    def post(self, request: Request, order_id: str) -> Response:
        if not Order.objects.filter(public_id=order_id).exists():
            raise NotFound(_("Pedido %(order_id)s não encontrado.") % {"order_id": order_id})
        serializer = self.input_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        actor = api_actor(request.user.get_username())
        key = request.headers.get("Idempotency-Key", "").strip()
        if not key:
            payload, code = self._perform(order_id, serializer.validated_data, actor)
            return Response(payload, status=code)
        if len(key) > 255:
            raise ValidationError(
                {
                    "Idempotency-Key": [
                        _("O cabeçalho Idempotency-Key pode ter no máximo 255 caracteres; este tem %(length)s.")
                        % {"length": len(key)}
                    ]
                }
            )
        body = json.dumps(request.data, sort_keys=True, separators=(",", ":"), default=str)
        fingerprint = hashlib.sha256(f"POST {request.path}\n{body}".encode()).hexdigest()
        stored = self._replay(request, key, fingerprint)
        if stored is not None:
            return stored
        try:
            with transaction.atomic():
                payload, code = self._perform(order_id, serializer.validated_data, actor)
                ApiIdempotencyRecord.objects.create(
                    user=request.user, key=key, fingerprint=fingerprint, status_code=code, response=payload
                )
        except IntegrityError:
            # A concurrent request with the same key committed first: its change stands, ours rolled back.
            stored = self._replay(request, key, fingerprint)
            if stored is None:
                raise
            return stored
        return Response(payload, status=code)

    def _replay(self, request: Request, key: str, fingerprint: str) -> Response | None:
        record = ApiIdempotencyRecord.objects.filter(user=request.user, key=key).first()
        if record is None:
            return None
        if record.fingerprint != fingerprint:
            conflict = _(
                "O Idempotency-Key “%(key)s” já foi usado com outra requisição (outro endereço ou outro corpo): "
                "use uma chave nova para uma requisição nova."
            ) % {"key": key}
            return Response({"Idempotency-Key": [conflict]}, status=status.HTTP_409_CONFLICT)
        return Response(record.response, status=record.status_code, headers={"Idempotent-Replayed": "true"})

    def _perform(self, order_id: str, data: dict[str, Any], actor: str) -> tuple[dict[str, Any], int]:
        try:
            return self.perform_with_status(order_id, data, actor)
        except OrderError as error:
            raise _service_error(error) from None

    def perform_with_status(self, order_id: str, data: dict[str, Any], actor: str) -> tuple[dict[str, Any], int]:
        """(payload, HTTP status): 201, unless the write finds itself done already (a 200 answering the same)."""
        return self.perform(order_id, data, actor), status.HTTP_201_CREATED

    def perform(self, order_id: str, data: dict[str, Any], actor: str) -> dict[str, Any]:
        raise NotImplementedError


class FulfillmentEventCreate(_OrderWrite):
    required_perm = "orders.ship_order"
    permission_classes = [StaffWithPermission]
    input_serializer = s.FulfillmentEventCreateSerializer

    def perform(self, order_id: str, data: dict[str, Any], actor: str) -> dict[str, Any]:
        event = fulfillment_event_create(
            order_id=order_id,
            type=data["type"],
            lines=s.to_line_quantities(data.get("line_items")),
            tracking_number=data["tracking_number"],
            tracking_url=data["tracking_url"],
            carrier=data["carrier"],
            description=data["description"],
            occurred_at=data["occurred_at"],
            actor=actor,
        )
        payload = event_payload(event)
        warnings = _tracking_warnings(event)
        if warnings:
            payload["messages"] = warnings
        return payload


def _tracking_warnings(event: FulfillmentEvent) -> list[dict[str, str]]:
    """A code already on another order is accepted but named, as the admin does (`admin_actions._tracking_warnings`):
    an ERP posting shipments gets the same word, as a BCP §5 `warning` message, instead of nothing. Like the admin's
    (“use Corrigir rastreio”), it says how to correct a wrong code: the tracking-corrections endpoint and the
    shipment's id to send it."""
    if event.type not in (FulfillmentEventType.SHIPPED, FulfillmentEventType.TRACKING_CORRECTED):
        return []
    numbers = orders_sharing_tracking(event.tracking_number, order=event.order)
    if not numbers:
        return []
    others = ", ".join(f"#{number}" for number in numbers)
    shipment = event.corrects.public_id if event.corrects_id and event.corrects else event.public_id
    content = ngettext(
        "Atenção: o código de rastreio %(code)s também está no pedido %(orders)s. Confira se o código está certo; "
        "se for outro, corrija-o com POST %(url)s e event_id %(shipment)s.",
        "Atenção: o código de rastreio %(code)s também está nos pedidos %(orders)s. Confira se o código está "
        "certo; se for outro, corrija-o com POST %(url)s e event_id %(shipment)s.",
        len(numbers),
    ) % {
        "code": event.tracking_number,
        "orders": others,
        "url": django_reverse("orders:api-order-tracking-corrections", args=[event.order.public_id]),
        "shipment": shipment,
    }
    return [{"type": "warning", "code": "tracking_number_shared", "path": "$.tracking_number", "content": content}]


class TrackingCorrectionCreate(_OrderWrite):
    """Correct a shipment's tracking code posted wrong, as the admin's “Corrigir rastreio” does (same service):
    a `tracking_corrected` event naming the shipment (`corrects`), the timeline entry, the buyer's e-mail saying
    it is a correction and the order webhook. Idempotent: sent again once applied (a retry, with or without an
    `Idempotency-Key`), it answers 200 with the correction in force and changes nothing, e-mails no one."""

    required_perm = "orders.ship_order"
    permission_classes = [StaffWithPermission]
    input_serializer = s.TrackingCorrectionCreateSerializer

    def perform_with_status(self, order_id: str, data: dict[str, Any], actor: str) -> tuple[dict[str, Any], int]:
        code = status.HTTP_201_CREATED
        try:
            event = order_tracking_correct(
                order_id=order_id,
                event_id=data["event_id"],
                tracking_number=data["tracking_number"],
                carrier=data["carrier"],
                tracking_url=data["tracking_url"],
                actor=actor,
            )
        except OrderError as error:
            # "unchanged": the shipment carries this code (and carrier, link) now; when a correction put it there,
            # this request is that correction again.
            now = shipment_tracking_now(order_id=order_id, shipment_id=data["event_id"])
            if error.code != "unchanged" or now is None or now.type != FulfillmentEventType.TRACKING_CORRECTED:
                raise
            event, code = now, status.HTTP_200_OK
        payload = {**event_payload(event), "corrects": data["event_id"]}
        warnings = _tracking_warnings(event)
        if warnings:
            payload["messages"] = warnings
        return payload, code


class AdjustmentCreate(_OrderWrite):
    required_perm = "orders.refund_order"
    permission_classes = [StaffWithPermission]
    input_serializer = s.AdjustmentCreateSerializer

    def perform(self, order_id: str, data: dict[str, Any], actor: str) -> dict[str, Any]:
        lines = s.to_line_quantities(data.get("line_items"))
        if data["type"] == "refund":
            adjustment = order_refund(
                order_id=order_id, amount=data["amount"], reason=data["reason"], lines=lines, actor=actor
            )
        elif data["type"] == "cancellation":
            adjustment = order_cancel(order_id=order_id, reason=data["reason"], restock=data["restock"], actor=actor)
        else:
            adjustment = order_return(
                order_id=order_id,
                lines=lines,
                reason=data["reason"],
                restock=data["restock"],
                refund_amount=data.get("amount", 0),
                actor=actor,
            )
        return adjustment_payload(adjustment)


class NoteCreate(_OrderWrite):
    required_perm = "orders.change_order"
    permission_classes = [StaffWithPermission]
    input_serializer = s.NoteCreateSerializer

    def perform(self, order_id: str, data: dict[str, Any], actor: str) -> dict[str, Any]:
        note = order_note_add(order_id=order_id, text=data["text"], actor=actor)
        return {"kind": note.kind, "text": note.message, "actor": note.actor, "created_at": note.created_at.isoformat()}
