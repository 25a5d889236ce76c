"""A local fake of Pagar.me API v5 (orders/charges) over HTTP on 127.0.0.1, for the card gateway tests.

Boletos (issue 37): `POST /orders` with `payments[0].payment_method == "boleto"` and its `boleto` object
(`instructions`, `due_at`, `type`, `document_number`: https://docs.pagar.me/reference/boleto-1) answers a
`pending` charge whose `last_transaction` (`transaction_type: "boleto"`, status `generated`) carries `line`
(linha digitável), `barcode` (an image URL), `pdf`, `url`, `qr_code`, `nosso_numero`, `due_at`, as Pagar.me's
boleto transaction does. `pay_boleto` plays the bank's payment report (charge `paid`, then the `charge.paid`
hook body of https://docs.pagar.me/reference/exemplo-de-webhook-1 via `webhook`); `DELETE /charges/{id}` of an
unpaid boleto cancels it (https://docs.pagar.me/reference/cancelar-cobrança); a paid one is refused (412):
for gateway clients the cancel of a paid boleto moves no money, so the shop never asks.

Stored cards (subscriptions by card, issue 38), in the shape of Pagar.me v5's customer wallet: `POST /customers`
(name, email, document, type → a `cus_…` customer), `POST /customers/{customer_id}/cards` with `{"token"}` (the
card kept: `card_…`, `brand`, `last_four_digits`, `status: "active"`), `DELETE /customers/{customer_id}/cards/
{card_id}` (`status: "deleted"`), and `POST /orders` with `customer_id` and `payments[0].credit_card.card_id`
(+ `recurrence_cycle` "first"/"subsequent", `capture: true`): https://docs.pagar.me/reference/criar-pedido-2 ("use o
card_id ou card_token"; "Caso seja informado o customer_id, não é necessário incluir o objeto customer"; the CVV
only with `recurrence_cycle = first`), and the official SDK's `CustomersController.create_card` /
`delete_card` (github.com/pagarme/pagarme-python-sdk, `pagarmeapisdk/controllers/customers_controller.py`).
A stored card's charges approve or are declined as its token said (`tok_declined_<code>`); `card_outcome` changes
that afterwards (a card that runs out of limit, then is paid again).

It is the network boundary, not a mock of our code: `PagarmeGateway` talks real HTTP to it. Tokens
decide the outcome like test cards do: `tok_approved` authorizes, `tok_declined_<code>` is refused by the
"acquirer" with that return code. `Idempotency-Key` replays answer the first result, as the real API.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from payments.boleto.codes import barcode_build, line_from_barcode
from tests.payments.loopback import LoopbackServer

SECRET_KEY = "sk_test_fake123"
WEBHOOK_USER = "pagarme-hook"
WEBHOOK_PASSWORD = "s3nha-do-hook"


@dataclass
class FakePagarmeState:
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    charges: dict[str, dict[str, Any]] = field(default_factory=dict)
    customers: dict[str, dict[str, Any]] = field(default_factory=dict)
    cards: dict[str, dict[str, Any]] = field(default_factory=dict)
    idempotent: dict[str, tuple[int, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str, Any, dict[str, str]]] = field(default_factory=list)
    # Drop the connection after doing the work of the next N `POST /orders` / `POST /charges/{id}/capture`
    # (replays included): a timeout on our side of a call the gateway did carry out.
    die_after_create: int = 0
    die_after_capture: int = 0
    # Run in the server's thread around the next `POST /orders` (then cleared): what happens elsewhere while
    # the shop's authorization call is out, before or after the gateway has the order.
    before_create: Callable[[], None] | None = None
    after_create: Callable[[], None] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def _transaction(
    status: str, amount: int, installments: int, code: str, card: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "id": f"tran_{secrets.token_hex(6)}",
        "transaction_type": "credit_card",
        "status": status,
        "success": status != "not_authorized",
        "amount": amount,
        "installments": installments,
        "acquirer_return_code": code,
        "acquirer_message": "Transação aprovada" if code == "00" else "Transação negada",
        "card": card or {"brand": "Visa", "last_four_digits": "1111", "first_six_digits": "411111"},
    }


def charge_with_order(state: FakePagarmeState, charge: dict[str, Any]) -> dict[str, Any]:
    """A charge as `GET /charges/{id}` and webhooks show it: with its order's id and code."""
    order = state.orders[charge["order_id"]]
    view = {key: value for key, value in charge.items() if key != "order_id"}
    return {**view, "order": {"id": order["id"], "code": order["code"]}}


class Handler(BaseHTTPRequestHandler):
    state: FakePagarmeState

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: Any) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _charge_view(self, charge: dict[str, Any]) -> dict[str, Any]:
        order = self.state.orders[charge["order_id"]]
        return {
            **{k: v for k, v in charge.items() if k != "order_id"},
            "order": {"id": order["id"], "code": order["code"]},
        }

    def _order_view(self, order: dict[str, Any]) -> dict[str, Any]:
        charges = [{k: v for k, v in self.state.charges[c].items() if k != "order_id"} for c in order["charge_ids"]]
        return {**{k: v for k, v in order.items() if k != "charge_ids"}, "charges": charges}

    def _handle(self, method: str) -> None:
        state = self.state
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        headers = {k.lower(): v for k, v in self.headers.items()}
        with state.lock:
            state.requests.append((method, url.path + (f"?{url.query}" if url.query else ""), body, headers))
        expected = "Basic " + base64.b64encode(f"{SECRET_KEY}:".encode()).decode()
        if headers.get("authorization") != expected:
            return self._send(401, {"message": "Authorization has been denied for this request."})
        creating = method == "POST" and url.path == "/core/v5/orders"
        if creating and state.before_create is not None:
            hook, state.before_create = state.before_create, None
            hook()
        key = headers.get("idempotency-key", "")
        if key and f"{method}\0{key}" in state.idempotent:
            status, answer = state.idempotent[f"{method}\0{key}"]  # a replay answers the first result
        else:
            status, answer = self._route(method, url.path, parse_qs(url.query), body)
            if key:
                state.idempotent[f"{method}\0{key}"] = (status, answer)
        if creating and state.after_create is not None:
            hook, state.after_create = state.after_create, None
            hook()
        kind = "create" if url.path == "/core/v5/orders" else ("capture" if url.path.endswith("/capture") else "")
        if method == "POST" and kind and getattr(state, f"die_after_{kind}") > 0:
            setattr(state, f"die_after_{kind}", getattr(state, f"die_after_{kind}") - 1)
            self.close_connection = True
            return  # no answer at all: the client sees the connection drop, as after a timeout
        self._send(status, answer)

    def _route(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        state = self.state
        parts = path.strip("/").split("/")  # core, v5, …
        with state.lock:
            if method == "POST" and parts[2:] == ["orders"]:
                return self._create_order(body)
            if parts[2:3] == ["customers"]:
                return self._customers(method, parts[3:], body)
            if method == "GET" and parts[2:] == ["orders"]:
                code = (query.get("code") or [""])[0]
                found = [self._order_view(o) for o in state.orders.values() if o["code"] == code]
                return 200, {"data": list(reversed(found)), "paging": {"total": len(found)}}
            if len(parts) >= 4 and parts[2] == "charges":
                charge = state.charges.get(parts[3])
                if charge is None:
                    return 404, {"message": "Charge not found."}
                if method == "GET" and len(parts) == 4:
                    return 200, self._charge_view(charge)
                if method == "POST" and parts[4:] == ["capture"]:
                    if charge["status"] != "pending":
                        return 412, {"message": f"Charge is {charge['status']}."}
                    charge["status"], charge["paid_amount"] = "paid", charge["amount"]
                    charge["last_transaction"]["status"] = "captured"
                    return 200, self._charge_view(charge)
                if method == "DELETE" and len(parts) == 4 and charge.get("payment_method") == "boleto":
                    if charge["status"] != "pending":
                        return 412, {"message": f"Charge is {charge['status']}."}
                    charge["status"] = "canceled"
                    charge["last_transaction"]["status"] = "canceled"
                    return 200, self._charge_view(charge)
                if method == "DELETE" and len(parts) == 4:
                    amount = int((body or {}).get("amount") or charge["paid_amount"])
                    if charge["status"] != "paid" or charge["canceled_amount"] + amount > charge["paid_amount"]:
                        return 412, {"message": "Charge cannot be refunded."}
                    charge["canceled_amount"] += amount
                    full = charge["canceled_amount"] == charge["paid_amount"]
                    charge["last_transaction"]["status"] = "refunded" if full else "partial_refunded"
                    if full:
                        charge["status"] = "canceled"
                    return 200, self._charge_view(charge)
        return 404, {"message": "Not found."}

    def _create_boleto(self, body: dict[str, Any]) -> tuple[int, Any]:
        payment = body["payments"][0]
        boleto = payment.get("boleto") or {}
        document = (body.get("customer") or {}).get("document", "")
        if len(document) not in (11, 14):
            return 422, {"message": "The request is invalid.", "errors": {"customer.document": ["required"]}}
        if len(boleto.get("instructions", "")) > 256 or len(boleto.get("document_number", "")) > 16:
            return 422, {"message": "The request is invalid.", "errors": {"boleto": ["too long"]}}
        amount = int(payment["amount"])
        due = date.fromisoformat(str(boleto["due_at"])[:10])
        line = line_from_barcode(
            barcode_build(bank="341", amount=amount, due=due, free_field=f"{secrets.randbelow(10**25):025d}")
        )
        order_id, charge_id = f"or_{secrets.token_hex(8)}", f"ch_{secrets.token_hex(8)}"
        self.state.charges[charge_id] = {
            "id": charge_id,
            "code": f"chc_{secrets.token_hex(4)}",
            "amount": amount,
            "paid_amount": 0,
            "canceled_amount": 0,
            "status": "pending",
            "currency": "BRL",
            "payment_method": "boleto",
            "due_at": boleto["due_at"],
            "order_id": order_id,
            "last_transaction": {
                "id": f"tran_{secrets.token_hex(6)}",
                "transaction_type": "boleto",
                "status": "generated",
                "amount": amount,
                "line": line,
                "barcode": f"https://api.pagar.me/core/v5/transactions/{charge_id}/barcode",
                "pdf": f"https://api.pagar.me/core/v5/transactions/{charge_id}/pdf",
                "url": f"https://api.pagar.me/core/v5/transactions/{charge_id}/pdf",
                "qr_code": "00020101021226820014br.gov.bcb.pix2560pix.example/qr/v2/fake5204000053039865802BR6304ABCD",
                "nosso_numero": f"{secrets.randbelow(10**10):010d}",
                "instructions": boleto.get("instructions", ""),
                "document_number": boleto.get("document_number", ""),
                "type": boleto.get("type", "DM"),
                "due_at": boleto["due_at"],
            },
        }
        order = {"id": order_id, "code": body["code"], "amount": amount, "currency": "BRL", "closed": True,
                 "status": "pending", "charge_ids": [charge_id]}  # fmt: skip
        self.state.orders[order_id] = order
        return 200, self._order_view(order)

    def _customers(self, method: str, rest: list[str], body: Any) -> tuple[int, Any]:
        state = self.state
        if method == "POST" and not rest:
            if not (body or {}).get("name") or not (body or {}).get("email"):
                return 422, {"message": "The request is invalid.", "errors": {"customer": ["name and email"]}}
            customer_id = f"cus_{secrets.token_hex(8)}"
            state.customers[customer_id] = {
                "id": customer_id,
                **{k: body.get(k) for k in ("name", "email", "document", "type", "document_type")},
            }
            return 200, state.customers[customer_id]
        if not rest or rest[0] not in state.customers:
            return 404, {"message": "Customer not found."}
        customer_id = rest[0]
        if method == "POST" and rest[1:] == ["cards"]:
            token = str((body or {}).get("token", ""))
            if not token.startswith("tok_"):
                return 422, {"message": "The request is invalid.", "errors": {"token": ["invalid"]}}
            card_id = f"card_{secrets.token_hex(8)}"
            code = "00" if token == "tok_approved" else token.rsplit("_", 1)[-1]
            state.cards[card_id] = {"id": card_id, "customer_id": customer_id, "brand": "Mastercard",
                                    "last_four_digits": "4242", "first_six_digits": "542501", "status": "active",
                                    "outcome": code}  # fmt: skip
            return 200, self._card_view(state.cards[card_id])
        if method == "DELETE" and len(rest) == 3 and rest[1] == "cards":
            card = state.cards.get(rest[2])
            if card is None or card["customer_id"] != customer_id:
                return 404, {"message": "Card not found."}
            card["status"] = "deleted"
            return 200, self._card_view(card)
        return 404, {"message": "Not found."}

    @staticmethod
    def _card_view(card: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in card.items() if k not in ("outcome", "customer_id")} | {
            "customer": {"id": card["customer_id"]}
        }

    def _charge_stored(self, body: dict[str, Any], payment: dict[str, Any]) -> tuple[int, Any]:
        credit_card = payment["credit_card"]
        card = self.state.cards.get(str(credit_card.get("card_id")))
        if card is None or card["status"] != "active" or card["customer_id"] != body.get("customer_id"):
            return 422, {"message": "The request is invalid.", "errors": {"card_id": ["not found for customer"]}}
        code = card["outcome"]
        status = ("paid" if credit_card.get("capture", True) else "pending") if code == "00" else "failed"
        tran_status = {"pending": "authorized_pending_capture", "paid": "captured", "failed": "not_authorized"}[status]
        order_id, charge_id = f"or_{secrets.token_hex(8)}", f"ch_{secrets.token_hex(8)}"
        amount = int(payment["amount"])
        seen = {"id": card["id"], "brand": card["brand"], "last_four_digits": card["last_four_digits"]}
        self.state.charges[charge_id] = {
            "id": charge_id, "code": f"chc_{secrets.token_hex(4)}", "amount": amount,
            "paid_amount": amount if status == "paid" else 0, "canceled_amount": 0, "status": status,
            "currency": "BRL", "payment_method": "credit_card", "order_id": order_id,
            "last_transaction": _transaction(tran_status, amount, 1, code, card=seen),
        }  # fmt: skip
        order = {"id": order_id, "code": body["code"], "amount": amount, "currency": "BRL", "closed": True,
                 "status": status, "customer_id": body["customer_id"], "charge_ids": [charge_id]}  # fmt: skip
        self.state.orders[order_id] = order
        return 200, self._order_view(order)

    def _create_order(self, body: dict[str, Any]) -> tuple[int, Any]:
        payment = body["payments"][0]
        if payment.get("payment_method") == "boleto":
            return self._create_boleto(body)
        card = payment["credit_card"]
        if card.get("card_id"):
            return self._charge_stored(body, payment)
        token = card.get("card_token", "")
        if not token.startswith("tok_"):
            return 422, {"message": "The request is invalid.", "errors": {"card_token": ["invalid"]}}
        approved = token == "tok_approved"
        code = "00" if approved else token.rsplit("_", 1)[-1]
        order_id, charge_id = f"or_{secrets.token_hex(8)}", f"ch_{secrets.token_hex(8)}"
        amount = int(payment.get("amount") or sum(i["amount"] * i["quantity"] for i in body["items"]))
        status = "pending" if approved and not card.get("capture", True) else ("paid" if approved else "failed")
        tran_status = {"pending": "authorized_pending_capture", "paid": "captured", "failed": "not_authorized"}[status]
        self.state.charges[charge_id] = {
            "id": charge_id,
            "code": f"chc_{secrets.token_hex(4)}",  # a charge code of its own, not ours: the order carries ours
            "amount": amount,
            "paid_amount": amount if status == "paid" else 0,
            "canceled_amount": 0,
            "status": status,
            "currency": "BRL",
            "payment_method": "credit_card",
            "order_id": order_id,
            "last_transaction": _transaction(tran_status, amount, int(card.get("installments") or 1), code),
        }
        order = {
            "id": order_id,
            "code": body["code"],
            "amount": amount,
            "currency": "BRL",
            "closed": True,
            "status": "pending" if status == "pending" else status,
            "charge_ids": [charge_id],
        }
        self.state.orders[order_id] = order
        return 200, self._order_view(order)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_DELETE(self) -> None:
        self._handle("DELETE")


class FakePagarmeServer(LoopbackServer):
    path_prefix = "/core/v5"
    state: FakePagarmeState

    def __init__(self) -> None:
        super().__init__(Handler, FakePagarmeState())

    def charge_of(self, reference: str) -> dict[str, Any]:
        """The newest charge of the orders whose code is `reference` (as the test sees the gateway)."""
        orders = [o for o in self.state.orders.values() if o["code"] == reference]
        return self.state.charges[orders[-1]["charge_ids"][-1]]

    def card_outcome(self, card_id: str, code: str) -> None:
        """From now on the stored card's charges answer `code` ("00" approves; "51" no limit, …)."""
        with self.state.lock:
            self.state.cards[card_id]["outcome"] = code

    def stored_charges(self) -> list[tuple[str, str, str, str]]:
        """(order code, card_id, recurrence_cycle, Idempotency-Key) of each stored-card `POST /orders` received."""
        return [
            (body["code"], body["payments"][0]["credit_card"]["card_id"],
             body["payments"][0]["credit_card"].get("recurrence_cycle", ""), headers.get("idempotency-key", ""))
            for method, path, body, headers in self.state.requests
            if method == "POST" and path == "/core/v5/orders"
            and (body["payments"][0].get("credit_card") or {}).get("card_id")
        ]  # fmt: skip

    def pay_boleto(self, charge_id: str, *, amount: int | None = None) -> None:
        """The bank reports the boleto paid (`amount` less than due: `underpaid`)."""
        with self.state.lock:
            charge = self.state.charges[charge_id]
            paid = charge["amount"] if amount is None else amount
            charge["paid_amount"] = paid
            charge["status"] = "paid" if paid >= charge["amount"] else "underpaid"
            charge["paid_at"] = "2026-12-07T14:03:00Z"
            charge["last_transaction"]["status"] = "paid" if paid >= charge["amount"] else "underpaid"

    def webhook(self, event_type: str, charge_id: str, *, hook_id: str | None = None) -> dict[str, Any]:
        """The body Pagar.me posts for a charge event (`data` is the charge, with its order)."""
        charge = self.state.charges[charge_id]
        order = self.state.orders[charge["order_id"]]
        data = {
            **{k: v for k, v in charge.items() if k != "order_id"},
            "order": {"id": order["id"], "code": order["code"]},
        }
        return {
            "id": hook_id or f"hook_{secrets.token_hex(8)}",
            "account": {"id": "acc_fake", "name": "Loja Exemplo"},
            "type": event_type,
            "created_at": "2026-12-01T12:00:00",
            "data": data,
        }


@pytest.fixture
def pagarme(settings: Any) -> Iterator[FakePagarmeServer]:
    """The production card gateway adapter (Pagar.me v5) against this fake on loopback, stopped afterwards;
    import it into a test module to use it."""
    server = use_fake_pagarme(settings)
    yield server
    server.stop()


def use_fake_pagarme(settings: Any) -> FakePagarmeServer:
    """Start a fake and point the shop's card gateway at it (`PagarmeGateway`, hook credentials set)."""
    server = FakePagarmeServer().start()
    settings.PAYMENTS_CARD_GATEWAY = "payments.card.pagarme.PagarmeGateway"
    settings.PAGARME_BASE_URL = server.base_url
    settings.PAGARME_SECRET_KEY = SECRET_KEY
    settings.PAGARME_TIMEOUT_SECONDS = 2
    settings.PAGARME_BACKOFF_SECONDS = 0.0
    settings.PAGARME_WEBHOOK_USER = WEBHOOK_USER
    settings.PAGARME_WEBHOOK_PASSWORD = WEBHOOK_PASSWORD
    return server


def webhook_authorization() -> str:
    return "Basic " + base64.b64encode(f"{WEBHOOK_USER}:{WEBHOOK_PASSWORD}".encode()).decode()
