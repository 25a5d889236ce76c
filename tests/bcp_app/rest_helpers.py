"""Helpers for REST-level BCP tests (Django test client against the real engine)."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from tests.shop.checkout_factories import make_shipping, make_variant

PIX = {"id": "instr_1", "handler_id": "pix_recebedor_001", "type": "pix", "selected": True}
# a card instrument the sandbox gateway approves
CARD = {
    "id": "instr_card",
    "handler_id": "gpay",
    "type": "card",
    "selected": True,
    "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"},
}
SP = {
    "first_name": "Ana",
    "last_name": "Souza",
    "street_address": "Rua das Flores, 123",
    "extended_address": "Apto 45 - Jardim Paulista",
    "address_locality": "São Paulo",
    "address_region": "SP",
    "postal_code": "01310-100",
    "address_country": "BR",
}
BUYER = {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"}


def catalog() -> None:
    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    make_shipping()


def call(client: Client, method: str, path: str, headers: dict[str, str], body: Any = None) -> Any:
    kwargs: dict[str, Any] = {"headers": headers}
    if body is not None:
        kwargs.update(
            data=json.dumps(body) if not isinstance(body, (bytes, str)) else body, content_type="application/json"
        )
    return getattr(client, method)(f"/bcp/v1{path}", **kwargs)


def create(client: Client, headers: dict[str, str], body: dict[str, Any] | None = None) -> Any:
    body = body or {
        "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}],
        "buyer": {"email": "ana@example.com.br"},
    }
    return call(client, "post", "/checkout-sessions", headers, body)


def full_update(checkout: dict[str, Any], *, option: str | None = "pac", pix: bool = True) -> dict[str, Any]:
    """The full writable state after `checkout`: buyer, SP address, an option and Pix (BCP §4.3 full replacement)."""
    line = checkout["line_items"][0]
    method: dict[str, Any] = {"type": "shipping", "destinations": [SP]}
    methods = checkout.get("fulfillment", {}).get("methods") or []
    if methods and methods[0]["destinations"]:
        m = methods[0]
        method = {
            "id": m["id"],
            "type": "shipping",
            "line_item_ids": m["line_item_ids"],
            "destinations": [{**SP, "id": m["destinations"][0]["id"]}],
            "selected_destination_id": m["destinations"][0]["id"],
            "groups": [{"id": m["groups"][0]["id"], "selected_option_id": option}],
        }
    body: dict[str, Any] = {
        "line_items": [{"id": line["id"], "item": {"id": line["item"]["id"]}, "quantity": line["quantity"]}],
        "buyer": BUYER,
        "fulfillment": {"methods": [method]},
    }
    if pix:
        body["payment"] = {"instruments": [PIX]}
    return body


def ready_checkout(client: Client, headers: dict[str, str]) -> dict[str, Any]:
    """create → update (address) → update (PAC + Pix) → `ready_for_complete` with an active Pix charge."""
    checkout = create(client, headers).json()
    checkout = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(checkout)).json()
    checkout = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(checkout)).json()
    assert checkout["status"] == "ready_for_complete", checkout.get("messages")
    return checkout


def complete(client: Client, checkout_id: str, headers: dict[str, str], key: str = "k-complete-1") -> Any:
    return call(
        client,
        "post",
        f"/checkout-sessions/{checkout_id}/complete",
        {**headers, "Idempotency-Key": key},
        {"payment": {"instruments": [PIX]}, "signals": {"br.dev.bcp.buyer_ip": "203.0.113.42"}},
    )
