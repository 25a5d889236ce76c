"""Adapter for Melhor Envio's API v2 (https://docs.melhorenvio.com.br).

- OAuth2 (https://docs.melhorenvio.com.br/docs/autenticacao): `POST /oauth/token` with
  `grant_type=refresh_token`, `client_id`, `client_secret`, `refresh_token` → `access_token`, `expires_in`,
  `refresh_token`. A personal token from the panel (MELHOR_ENVIO_TOKEN) is used as is. Every call sends
  `Authorization: Bearer …`, `Accept: application/json` and a `User-Agent` naming the app and a contact e-mail.
- Sandbox `https://sandbox.melhorenvio.com.br`, production `https://melhorenvio.com.br`.
- Quote (https://docs.melhorenvio.com.br/reference/calculo-de-fretes-por-produtos):
  `POST /api/v2/me/shipment/calculate` with `from.postal_code`, `to.postal_code` and `products[]` (width, height,
  length in cm, weight in kg, insurance_value in reais, quantity) → a list of services: `id`, `name`, `price`,
  `custom_price`, `delivery_range{min,max}`, `custom_delivery_range`, `company{id,name}`; a service that cannot
  serve the trip has `error` instead of a price.
- Label: cart `POST /api/v2/me/cart` (service, from, to, products, volumes, options{insurance_value,
  non_commercial, invoice{key}, platform, tags[{tag}]}) → order `id` (status `pending`); purchase
  `POST /api/v2/me/shipment/checkout` `{orders: [id]}` → `purchase{total, status}` (pays from the wallet);
  `POST /api/v2/me/shipment/generate` `{orders}`; `POST /api/v2/me/shipment/print` `{mode, orders}` → `{url}`.
  `GET /api/v2/me/orders/{id}` → the order's `status` (pending, released, generated, posted, delivered, canceled).
- Cancel: `POST /api/v2/me/shipment/cancellable` `{orders}` → `{id: {cancellable}}`, then
  `POST /api/v2/me/shipment/cancel` `{order: {id, reason_id, description}}` → `{id: {canceled}}`.
- Tracking: `POST /api/v2/me/shipment/tracking` `{orders}` → `{id: {status, tracking, posted_at, delivered_at…}}`.
- Webhooks (https://docs.melhorenvio.com.br/docs/webhooks): `{"event": "order.posted", "data": {id, status,
  tracking, tags, posted_at, delivered_at, …}}`, signed in `X-ME-Signature`: base64 of HMAC-SHA256 of the raw
  body with the application's secret.

Timestamps come as "YYYY-MM-DD HH:MM:SS" in Brasília time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.cache import cache

from carriers._http import MAX_PDF_BYTES, body_json, call, decimal_to_centavos, reais
from carriers.base import (
    CarrierRejected,
    CarrierUnavailable,
    LabelRequest,
    LabelState,
    Parcel,
    SaveState,
    ServiceQuote,
    TrackingEvent,
    TrackingKind,
    WebhookRejected,
)
from kernel.http import Deadline, Response

BASE_URLS = {"sandbox": "https://sandbox.melhorenvio.com.br", "production": "https://melhorenvio.com.br"}
BRASILIA = ZoneInfo("America/Sao_Paulo")
TOKEN_CACHE_KEY = "carriers:melhorenvio:token:v1"  # noqa: S105 (a cache key, not a secret)
SIGNATURE_HEADER = "X-ME-Signature"
# Webhook events → tracking kinds (order.created/pending/released/generated change nothing for the buyer).
WEBHOOK_EVENTS: dict[str, TrackingKind] = {
    "order.posted": "posted",
    "order.received": "in_transit",
    "order.delivered": "delivered",
    "order.undelivered": "returned",
}
PAID = {"released", "generated", "posted", "delivered"}


def _kg(grams: int) -> float:
    return round(grams / 1000, 3)


def _when(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=BRASILIA)
    return parsed.astimezone(UTC)


def _rejected(response: Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    errors = body.get("errors")
    if isinstance(errors, dict):
        parts = [f"{key}: {' '.join(map(str, v)) if isinstance(v, list) else v}" for key, v in errors.items()]
        if parts:
            return "Melhor Envio recusou: " + "; ".join(parts)
    message = body.get("message") or body.get("error")
    return f"Melhor Envio recusou: {message}" if message else ""


def _address(address: Any) -> dict[str, Any]:
    return {
        "name": address.name, "phone": address.phone, "email": address.email, "document": address.document,
        "address": address.street, "complement": address.complement, "number": address.number,
        "district": address.district, "city": address.city, "state_abbr": address.state, "country_id": "BR",
        "postal_code": address.postal_code,
    }  # fmt: skip


@dataclass
class MelhorEnvio:
    base_url: str
    token: str = ""
    client_id: str = ""
    client_secret: str = ""
    refresh_token: str = ""
    user_agent: str = "Loja BCP (contato@example.com)"
    name: str = "melhorenvio"

    @classmethod
    def from_settings(cls) -> MelhorEnvio:
        environment = settings.MELHOR_ENVIO_ENV
        return cls(
            base_url=(settings.MELHOR_ENVIO_BASE_URL or BASE_URLS[environment]).rstrip("/"),
            token=settings.MELHOR_ENVIO_TOKEN,
            client_id=settings.MELHOR_ENVIO_CLIENT_ID,
            client_secret=settings.MELHOR_ENVIO_CLIENT_SECRET,
            refresh_token=settings.MELHOR_ENVIO_REFRESH_TOKEN,
            user_agent=settings.MELHOR_ENVIO_USER_AGENT,
        )

    # --- auth ----------------------------------------------------------------------------------------------

    def _access_token(self, deadline: Deadline) -> str:
        if self.token:
            return self.token
        cached = cache.get(TOKEN_CACHE_KEY)
        if isinstance(cached, str) and cached:
            return cached
        if not (self.client_id and self.client_secret and self.refresh_token):
            raise CarrierUnavailable("Melhor Envio: no token and no OAuth2 refresh token configured")
        response = call(
            "POST", f"{self.base_url}/oauth/token", deadline=deadline,
            headers={"Accept": "application/json", "User-Agent": self.user_agent},
            json={"grant_type": "refresh_token", "client_id": self.client_id, "client_secret": self.client_secret,
                  "refresh_token": self.refresh_token},
        )  # fmt: skip
        body = body_json(response)
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise CarrierUnavailable("Melhor Envio: token answer without access_token")
        expires = int(body.get("expires_in") or 3600)
        cache.set(TOKEN_CACHE_KEY, token, max(60, expires - 300))  # renewed 5 minutes before it lapses
        return token

    def _call(self, method: str, path: str, *, deadline: Deadline, json: Any = None) -> Any:
        headers = {
            "Accept": "application/json",
            "Authorization": f"Bearer {self._access_token(deadline)}",
            "User-Agent": self.user_agent,
        }
        response = call(method, f"{self.base_url}{path}", deadline=deadline, headers=headers, json=json,
                        rejected=_rejected)  # fmt: skip
        return body_json(response)

    # --- quotes --------------------------------------------------------------------------------------------

    def quote(
        self, *, parcels: tuple[Parcel, ...], from_cep: str, to_cep: str, deadline: Deadline
    ) -> list[ServiceQuote]:
        products = [
            {"id": f"volume-{index}", "width": p.width_cm, "height": p.height_cm, "length": p.length_cm,
             "weight": _kg(p.weight_g), "insurance_value": float(reais(p.declared_value)), "quantity": 1}
            for index, p in enumerate(parcels, start=1)
        ]  # fmt: skip
        body = self._call(
            "POST", "/api/v2/me/shipment/calculate", deadline=deadline,
            json={"from": {"postal_code": from_cep}, "to": {"postal_code": to_cep}, "products": products},
        )  # fmt: skip
        if not isinstance(body, list):
            raise CarrierUnavailable("Melhor Envio: calculate did not answer a list")
        quotes: list[ServiceQuote] = []
        for service in body:
            if not isinstance(service, dict) or service.get("error") or service.get("price") in (None, ""):
                continue  # this service does not serve the trip (or these sizes)
            price = service.get("custom_price") or service["price"]
            window = service.get("custom_delivery_range") or service.get("delivery_range") or {}
            days = int(service.get("custom_delivery_time") or service.get("delivery_time") or 0)
            company = service.get("company") or {}
            quotes.append(
                ServiceQuote(
                    code=f"melhorenvio:{service['id']}",
                    carrier=str(company.get("name") or "Melhor Envio"),
                    name=str(service.get("name") or ""),
                    price=decimal_to_centavos(price),
                    days_min=int(window.get("min") or days),
                    days_max=int(window.get("max") or days),
                )
            )
        return quotes

    # --- labels --------------------------------------------------------------------------------------------

    def _order(self, remote_id: str, deadline: Deadline) -> dict[str, Any]:
        body = self._call("GET", f"/api/v2/me/orders/{remote_id}", deadline=deadline)
        if not isinstance(body, dict):
            raise CarrierUnavailable("Melhor Envio: order answer is not an object")
        return body

    def buy(self, *, request: LabelRequest, state: LabelState, deadline: Deadline, save: SaveState) -> LabelState:
        """cart → checkout → generate, each step saved; a rerun asks the order's status before paying again."""
        if not state.remote_id:
            service = request.service_code.removeprefix("melhorenvio:")
            options: dict[str, Any] = {
                "insurance_value": float(reais(sum(p.declared_value for p in request.parcels))),
                "receipt": False, "own_hand": False, "reverse": False,
                "non_commercial": not request.invoice_key, "platform": "Loja BCP",
                "tags": [{"tag": request.reference, "url": None}],
            }  # fmt: skip
            if request.invoice_key:
                options["invoice"] = {"key": request.invoice_key}
            body = self._call(
                "POST", "/api/v2/me/cart", deadline=deadline,
                json={
                    "service": int(service) if service.isdigit() else service,
                    "from": _address(request.sender), "to": _address(request.recipient),
                    "products": [{"name": i.name, "quantity": i.quantity, "unitary_value": float(reais(i.unit_price))}
                                 for i in request.items],
                    "volumes": [{"height": p.height_cm, "width": p.width_cm, "length": p.length_cm,
                                 "weight": _kg(p.weight_g)} for p in request.parcels],
                    "options": options,
                },
            )  # fmt: skip
            if not isinstance(body, dict) or not body.get("id"):
                raise CarrierUnavailable("Melhor Envio: cart answer without id")
            state.remote_id = str(body["id"])
            state.cost = decimal_to_centavos(body.get("price") or 0)
            state.extra["protocol"] = str(body.get("protocol") or "")
            save(state)
        if state.status == "pending":
            if state.extra.get("checkout"):
                # A checkout was sent before and its answer never recorded (crash, timeout): ask, never pay twice.
                order = self._order(state.remote_id, deadline)
                paid = order.get("status") in PAID
            else:
                paid = False
            if not paid:
                state.extra["checkout"] = "sent"
                save(state)
                body = self._call("POST", "/api/v2/me/shipment/checkout", deadline=deadline,
                                  json={"orders": [state.remote_id]})  # fmt: skip
                purchase = body.get("purchase") if isinstance(body, dict) else None
                if not isinstance(purchase, dict):
                    raise CarrierUnavailable("Melhor Envio: checkout answer without purchase")
                if purchase.get("total") is not None:
                    state.cost = decimal_to_centavos(purchase["total"])
            state.status = "purchased"
            save(state)
        if state.status == "purchased":
            body = self._call("POST", "/api/v2/me/shipment/generate", deadline=deadline,
                              json={"orders": [state.remote_id]})  # fmt: skip
            result = body.get(state.remote_id) if isinstance(body, dict) else None
            if isinstance(result, dict) and result.get("status") is False:
                raise CarrierUnavailable(f"Melhor Envio: generate refused: {result.get('message')}")
            state.status = "generated"
            save(state)
        return state

    def cancel(self, *, state: LabelState, deadline: Deadline) -> None:
        body = self._call("POST", "/api/v2/me/shipment/cancellable", deadline=deadline,
                          json={"orders": [state.remote_id]})  # fmt: skip
        entry = body.get(state.remote_id) if isinstance(body, dict) else None
        if not isinstance(entry, dict) or not entry.get("cancellable"):
            raise CarrierRejected(
                "O Melhor Envio não permite mais cancelar esta etiqueta (já postada ou fora do prazo de cancelamento)."
            )
        body = self._call(
            "POST", "/api/v2/me/shipment/cancel", deadline=deadline,
            json={"order": {"id": state.remote_id, "reason_id": "2", "description": "Cancelada pela loja"}},
        )  # fmt: skip
        entry = body.get(state.remote_id) if isinstance(body, dict) else None
        if not isinstance(entry, dict) or not entry.get("canceled"):
            raise CarrierUnavailable("Melhor Envio: cancel not confirmed")

    def label_pdf(self, *, state: LabelState, deadline: Deadline) -> bytes:
        body = self._call("POST", "/api/v2/me/shipment/print", deadline=deadline,
                          json={"mode": "private", "orders": [state.remote_id]})  # fmt: skip
        url = body.get("url") if isinstance(body, dict) else None
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise CarrierUnavailable("Melhor Envio: print answer without url")
        headers = {"Authorization": f"Bearer {self._access_token(deadline)}", "User-Agent": self.user_agent}
        response = call("GET", url, deadline=deadline, headers=headers, max_bytes=MAX_PDF_BYTES)
        if not response.body.startswith(b"%PDF"):
            raise CarrierUnavailable("Melhor Envio: the label is not a PDF")
        return response.body

    def tracking(self, *, state: LabelState, deadline: Deadline) -> list[TrackingEvent]:
        body = self._call("POST", "/api/v2/me/shipment/tracking", deadline=deadline,
                          json={"orders": [state.remote_id]})  # fmt: skip
        entry = body.get(state.remote_id) if isinstance(body, dict) else None
        return events_from_order(entry) if isinstance(entry, dict) else []

    # --- webhooks ------------------------------------------------------------------------------------------

    def parse_webhook(self, *, headers: dict[str, str], body: bytes) -> list[TrackingEvent]:
        return parse_webhook(secret=self.client_secret, headers=headers, body=body)


def events_from_order(order: dict[str, Any]) -> list[TrackingEvent]:
    """The moments an order's timestamps tell (posted_at, delivered_at) as events, oldest first."""
    remote_id = str(order.get("id") or "")
    code = str(order.get("tracking") or "")
    events: list[TrackingEvent] = []
    for stamp, kind in (("posted_at", "posted"), ("delivered_at", "delivered")):
        when = _when(order.get(stamp))
        if when is not None:
            events.append(TrackingEvent(f"{remote_id}:{kind}", kind, when, "", code, remote_id))  # type: ignore[arg-type]
    return events


def signature(secret: str, body: bytes) -> str:
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def parse_webhook(*, secret: str, headers: dict[str, str], body: bytes) -> list[TrackingEvent]:
    """Verify `X-ME-Signature` and read the event; [] for an event that moves nothing (order.created…)."""
    received = next((v for k, v in headers.items() if k.lower() == SIGNATURE_HEADER.lower()), "")
    if not secret or not received or not hmac.compare_digest(received.strip(), signature(secret, body)):
        raise WebhookRejected("bad or missing X-ME-Signature")
    try:
        payload = json.loads(body)
    except ValueError as exc:
        raise WebhookRejected("body is not JSON") from exc
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, dict) or not data.get("id"):
        raise WebhookRejected("no data.id")
    event = str(payload.get("event") or "")
    kind = WEBHOOK_EVENTS.get(event)
    if kind is None:
        return []
    stamp = {"posted": "posted_at", "delivered": "delivered_at"}.get(kind, "updated_at")
    when = _when(data.get(stamp)) or _when(data.get("updated_at")) or datetime.now(UTC)
    remote_id = str(data["id"])
    return [TrackingEvent(f"{remote_id}:{event}", kind, when, "", str(data.get("tracking") or ""), remote_id)]
