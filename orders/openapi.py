"""OpenAPI 3.1 description of the merchant back-office API (`/api/v1/`), served at `/api/v1/openapi.json`.

Written by hand, beside the views it describes (`orders/api.py`, `orders/serializers.py`): DRF's generator needs a
dependency the project does not carry. `tests/orders/test_api.py` checks that every route is described and every
described route exists, and that the request bodies name the serializers' fields.
"""

from __future__ import annotations

from typing import Any

_ORDER_ID = {
    "name": "order_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
    "description": "`order_…`",
}
_IDEMPOTENCY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "schema": {"type": "string", "maxLength": 255},
    "description": "A replay (same key, same request) returns the stored answer with `Idempotent-Replayed: true`; "
    "the same key with another request is a 409.",
}
_LINES = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id", "quantity"],
        "properties": {
            "id": {"type": "string", "description": "`li_…`"},
            "quantity": {"type": "integer", "minimum": 1},
        },
    },
}
_MESSAGE = {
    "type": "object",
    "description": "BCP §5 message. `tracking_number_shared` (warning): the code is also on another order; if it "
    "was typed wrong, correct it with POST /api/v1/orders/{order_id}/tracking-corrections/ (the content names the "
    "URL and the `event_id` to send).",
    "required": ["type", "code", "content"],
    "properties": {
        "type": {"type": "string", "enum": ["warning"]},
        "code": {"type": "string", "examples": ["tracking_number_shared"]},
        "path": {"type": "string"},
        "content": {"type": "string"},
    },
}
_EVENT = {
    "type": "object",
    "description": "A fulfillment event (BCP §7).",
    "required": ["id", "occurred_at", "type", "line_items"],
    "properties": {
        "id": {"type": "string", "description": "`evt_…`"},
        "occurred_at": {"type": "string", "format": "date-time"},
        "type": {"type": "string", "examples": ["shipped", "delivered", "tracking_corrected"]},
        "line_items": _LINES,
        "tracking_number": {"type": "string"},
        "tracking_url": {"type": "string", "format": "uri"},
        "carrier": {"type": "string"},
        "description": {"type": "string"},
        "corrects": {"type": "string", "description": "Of a `tracking_corrected` event: the shipment it corrects."},
        "messages": {"type": "array", "items": _MESSAGE},
    },
}
_ERRORS = {
    "description": 'Invalid input: each field at fault with its reason, in Portuguese (`{"field": ["…"]}`).',
    "content": {"application/json": {"schema": {"type": "object", "additionalProperties": {"type": "array"}}}},
}
_JSON_OBJECT = {"application/json": {"schema": {"type": "object"}}}


def _body(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "required": required, "properties": properties}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _write(summary: str, permission: str, body: dict[str, Any], answer: dict[str, Any], **extra: Any) -> dict:
    responses = {
        "201": {"description": "Done.", "content": {"application/json": {"schema": answer}}},
        "400": _ERRORS,
        "403": {"description": f"Staff without `{permission}`."},
        "404": {"description": "No such order."},
        "409": {"description": "The Idempotency-Key was used with another request."},
        **extra,
    }
    return {"post": {"summary": summary, "parameters": [_ORDER_ID, _IDEMPOTENCY], "requestBody": body,
                     "responses": responses}}  # fmt: skip


OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "Merchant back-office API",
        "version": "1",
        "description": "Orders for the merchant's own systems (ERP, warehouse). Token authentication "
        "(`Authorization: Token …`) of a staff user; permissions mirror the admin's.",
    },
    "components": {"securitySchemes": {"token": {"type": "apiKey", "in": "header", "name": "Authorization"}}},
    "security": [{"token": []}],
    "paths": {
        "/api/v1/orders/": {
            "get": {
                "summary": "Orders, newest first (`orders.view_order`).",
                "parameters": [
                    {"name": name, "in": "query", "required": False, "schema": {"type": "string"}}
                    for name in ("status", "payment_status", "fulfillment_method", "placed_after", "placed_before", "q")
                ],
                "responses": {"200": {"description": "A page of orders.", "content": _JSON_OBJECT}, "400": _ERRORS},
            }
        },
        "/api/v1/orders/{order_id}/": {
            "get": {
                "summary": "One order: buyer, payment, the BCP order, its fiscal documents (`orders.view_order`).",
                "parameters": [_ORDER_ID],
                "responses": {
                    "200": {"description": "The order.", "content": _JSON_OBJECT},
                    "404": {"description": "No such order."},
                },
            }
        },
        "/api/v1/orders/{order_id}/fulfillment-events/": _write(
            "Record a fulfillment event: shipped (with its tracking code), delivered, … (`orders.ship_order`).",
            "orders.ship_order",
            _body(
                ["type"],
                {
                    "type": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,39}$"},
                    "line_items": _LINES,
                    "tracking_number": {"type": "string", "maxLength": 64},
                    "tracking_url": {"type": "string", "format": "uri", "maxLength": 500},
                    "carrier": {"type": "string", "maxLength": 80},
                    "description": {"type": "string", "maxLength": 255},
                    "occurred_at": {"type": ["string", "null"], "format": "date-time"},
                },
            ),
            _EVENT,
        ),
        "/api/v1/orders/{order_id}/tracking-corrections/": _write(
            "Correct a shipment's tracking code entered wrong (`orders.ship_order`), as the admin's “Corrigir "
            "rastreio”: a `tracking_corrected` event naming the shipment, the timeline entry, the buyer's e-mail "
            "saying it is a correction, the order webhook. Idempotent: the same correction sent again answers 200 "
            "with the correction in force and changes nothing.",
            "orders.ship_order",
            _body(
                ["event_id", "tracking_number"],
                {
                    "event_id": {"type": "string", "description": "The shipment (`shipped` event, `evt_…`)."},
                    "tracking_number": {"type": "string", "maxLength": 64, "description": "The right code."},
                    "carrier": {"type": "string", "maxLength": 80, "description": "Empty: the shipment's stays."},
                    "tracking_url": {
                        "type": "string",
                        "format": "uri",
                        "maxLength": 500,
                        "description": "Empty: built from the code for the Correios.",
                    },
                },
            ),
            _EVENT,
            **{
                "200": {
                    "description": "Already applied: the correction in force.",
                    "content": {"application/json": {"schema": _EVENT}},
                }
            },
        ),
        "/api/v1/orders/{order_id}/adjustments/": _write(
            "Refund, cancel or record a return (`orders.refund_order`).",
            "orders.refund_order",
            _body(
                ["type", "reason"],
                {
                    "type": {"type": "string", "enum": ["refund", "cancellation", "return"]},
                    "amount": {"type": "integer", "minimum": 1, "description": "Centavos."},
                    "reason": {"type": "string", "maxLength": 255},
                    "line_items": _LINES,
                    "restock": {"type": "boolean"},
                },
            ),
            {"type": "object"},
        ),
        "/api/v1/orders/{order_id}/notes/": _write(
            "Add an internal note to the order's timeline (`orders.change_order`).",
            "orders.change_order",
            _body(["text"], {"text": {"type": "string", "maxLength": 4000}}),
            {"type": "object"},
        ),
    },
}
