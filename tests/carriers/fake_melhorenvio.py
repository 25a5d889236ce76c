"""A local fake of Melhor Envio's API v2 on 127.0.0.1, speaking the shapes of https://docs.melhorenvio.com.br:

- `POST /oauth/token` (refresh_token grant) → `access_token`, `expires_in`, `refresh_token`;
- `POST /api/v2/me/shipment/calculate` (from, to, products in kg/cm) → services with `price` as text,
  `delivery_range`, `company`, or `error` for a service that cannot carry the parcels;
- cart → checkout (wallet; 422 "Saldo insuficiente") → generate → print (`{url}` to a PDF), `GET orders/{id}`,
  cancellable → cancel, tracking; webhooks signed in `X-ME-Signature` (base64 HMAC-SHA256 with the app secret),
  whose `data` is the order as `GET orders/{id}` has it (`tracking` the carrier's code now: `retrack` changes it).

Prices are made from the parcels' billable weight (the larger of real and L×W×H/6000 kg), per service:
PAC R$ 15,00 + R$ 4,00/kg, SEDEX R$ 22,00 + R$ 7,00/kg (Correios), .Package R$ 18,00 + R$ 5,00/kg (Jadlog, up to
10 kg). `mode`: "ok", "down" (503), "garbage" (a 200 that is not JSON).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.carriers.fake_server import Reply, Request, s10, serve

TOKEN = "me-personal-token"
CLIENT_SECRET = "me-app-secret"
SERVICES = [  # id, name, company, base centavos, per kg centavos, max kg
    (1, "PAC", "Correios", 1500, 400, 30),
    (2, "SEDEX", "Correios", 2200, 700, 30),
    (3, ".Package", "Jadlog", 1800, 500, 10),
]
PDF = b"%PDF-1.4 etiqueta melhor envio"


def _price(products: list[dict[str, Any]], base: int, per_kg: int) -> int:
    total = 0
    for p in products:
        cubic = p["width"] * p["height"] * p["length"] / 6000
        kg = max(float(p["weight"]), cubic) * int(p.get("quantity", 1))
        total += base + per_kg * max(0, -int(-(kg - 1) // 1))  # each kg or part above the first
    return total


def _reais(centavos: int) -> str:
    return f"{centavos // 100}.{centavos % 100:02d}"


@dataclass
class FakeMelhorEnvio:
    mode: str = "ok"
    balance: int = 100_000
    delay: float = 0.0
    hang_after: dict[str, float] = field(default_factory=dict)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    carts: list[dict[str, Any]] = field(default_factory=list)
    checkouts: list[str] = field(default_factory=list)
    calculations: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)
    serial: int = 10_000_000
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def sign(self, body: bytes, secret: str = CLIENT_SECRET) -> str:
        return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()

    def retrack(self, order_id: str) -> str:
        """The carrier gives the order a new `tracking` (its label generated again, or the object swapped at the
        counter), as `/shipment/generate` gave the first: later webhooks and `/shipment/tracking` carry it."""
        self.serial += 1
        self.orders[order_id]["tracking"] = s10(self.serial)
        return self.orders[order_id]["tracking"]

    def webhook(self, order_id: str, event: str, **data: Any) -> bytes:
        order = self.orders[order_id]
        payload = {"event": event, "data": {**{k: order.get(k) for k in (
            "id", "protocol", "status", "tracking", "tags", "created_at", "paid_at", "generated_at", "posted_at",
            "delivered_at", "canceled_at", "expired_at")}, **data}}  # fmt: skip
        return json.dumps(payload).encode()

    # --- routes --------------------------------------------------------------------------------------------

    def route(self, request: Request) -> Reply:
        if self.mode == "down":
            return 503, {"message": "Service Unavailable"}
        if self.mode == "garbage":
            return 200, b"<html>manutencao</html>", "text/html"
        if request.path == "/oauth/token":
            body = request.json()
            if body.get("grant_type") != "refresh_token" or body.get("client_secret") != CLIENT_SECRET:
                return 401, {"error": "invalid_client"}
            return 200, {"token_type": "Bearer", "expires_in": 2592000, "access_token": TOKEN,
                         "refresh_token": "new-refresh"}  # fmt: skip
        if request.path.startswith("/imprimir/"):
            return 200, PDF, "application/pdf"
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, {"message": "Unauthenticated."}
        body = request.json()
        path = request.path.removeprefix("/api/v2/me")
        if path == "/shipment/calculate":
            self.calculations.append(body)
            return 200, self._calculate(body)
        if path == "/cart":
            return self._cart(body)
        if path == "/shipment/checkout":
            return self._checkout(body["orders"])
        if path == "/shipment/generate":
            answer = {}
            for order_id in body["orders"]:
                order = self.orders[order_id]
                order["status"], order["generated_at"] = "generated", "2026-12-04 20:10:00"
                self.serial += 1
                order["tracking"] = s10(self.serial)
                answer[order_id] = {"status": True, "message": "Envio gerado com sucesso"}
            return 200, answer
        if path == "/shipment/print":
            return 200, {"url": f"{self.url}/imprimir/{body['orders'][0]}"}
        if path.startswith("/orders/") and request.method == "GET":
            order = self.orders.get(path.removeprefix("/orders/"))
            return (200, order) if order else (404, {"message": "Not found"})
        if path == "/shipment/cancellable":
            return 200, {i: {"cancellable": self.orders[i]["status"] in ("released", "generated")}
                         for i in body["orders"]}  # fmt: skip
        if path == "/shipment/cancel":
            order = self.orders[body["order"]["id"]]
            order["status"], order["canceled_at"] = "canceled", "2026-12-04 21:00:00"
            return 200, {order["id"]: {"canceled": True}}
        if path == "/shipment/tracking":
            return 200, {i: self.orders[i] for i in body["orders"] if i in self.orders}
        return 404, {"message": "Not found"}

    def _calculate(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        products = body["products"]
        kg = sum(float(p["weight"]) for p in products)
        answer = []
        for service_id, name, company, base, per_kg, max_kg in SERVICES:
            entry: dict[str, Any] = {"id": service_id, "name": name,
                                     "company": {"id": service_id, "name": company, "picture": ""}}  # fmt: skip
            if kg > max_kg:
                entry["error"] = "Peso excede o limite do serviço."
            else:
                price = _reais(_price(products, base, per_kg))
                days = {1: (5, 8), 2: (1, 3), 3: (3, 5)}[service_id]
                entry.update(price=price, custom_price=price, discount="0.00", currency="R$", delivery_time=days[1],
                             delivery_range={"min": days[0], "max": days[1]}, custom_delivery_time=days[1],
                             custom_delivery_range={"min": days[0], "max": days[1]}, packages=[])  # fmt: skip
            answer.append(entry)
        return answer

    def _cart(self, body: dict[str, Any]) -> Reply:
        service = next((s for s in SERVICES if s[0] == body["service"]), None)
        if service is None:
            return 422, {"message": "The given data was invalid.", "errors": {"service": ["Serviço inválido."]}}
        if not body["to"].get("postal_code"):
            return 422, {"message": "The given data was invalid.",
                         "errors": {"to.postal_code": ["O campo CEP do destinatário é obrigatório."]}}  # fmt: skip
        volumes = [{**v, "quantity": 1} for v in body["volumes"]]
        price = _price(volumes, service[3], service[4])
        order_id = str(uuid.uuid4())
        order = {"id": order_id, "protocol": f"ORD-2026{len(self.orders):06d}", "service_id": service[0],
                 "price": float(_reais(price)), "status": "pending", "tracking": None, "tags": body["options"]["tags"],
                 "created_at": "2026-12-04 20:00:00", "paid_at": None, "generated_at": None, "posted_at": None,
                 "delivered_at": None, "canceled_at": None, "expired_at": None}  # fmt: skip
        self.orders[order_id] = order
        self.carts.append(body)
        return 201, order

    def _checkout(self, ids: list[str]) -> Reply:
        total = sum(round(self.orders[i]["price"] * 100) for i in ids)
        if any(self.orders[i]["status"] != "pending" for i in ids):
            return 422, {"message": "Envio já pago."}
        if total > self.balance:
            return 422, {"message": "Saldo insuficiente para a compra das etiquetas."}
        self.balance -= total
        for i in ids:
            self.orders[i]["status"], self.orders[i]["paid_at"] = "released", "2026-12-04 20:05:00"
        self.checkouts.extend(ids)
        purchase = {"id": str(uuid.uuid4()), "protocol": "PUR-1", "total": float(_reais(total)), "discount": 0,
                    "status": "paid", "orders": [self.orders[i] for i in ids]}  # fmt: skip
        return 200, {"purchase": purchase}


@contextmanager
def fake_melhorenvio() -> Iterator[FakeMelhorEnvio]:
    state = FakeMelhorEnvio()
    with serve(state.route, state) as url:
        state.url = url
        yield state
