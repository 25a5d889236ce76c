"""`PagarmeGateway`: Pagar.me API v5 (orders/charges) over httpx.

`POST /orders` (credit card, `card_token`, `installments`, `capture: false`), `POST /charges/{id}/capture`,
`DELETE /charges/{id}` with `amount` (full or partial estorno), `GET /charges/{id}`, `GET /orders?code=`.
Subscriptions by card (issue 38) keep the card in the customer's wallet: `POST /customers`,
`POST /customers/{customer_id}/cards` with the browser's or agent's `token`, then each cycle `POST /orders` with
`customer_id` and `credit_card.card_id` (`recurrence_cycle` "first"/"subsequent": the CVV only goes with the
first, https://docs.pagar.me/reference/criar-pedido-2), and `DELETE /customers/{customer_id}/cards/{card_id}`
when the subscription ends.
HTTP Basic auth with the secret key as user and an empty password. Every POST/DELETE carries our
`Idempotency-Key`, so a retry after a timeout is answered with the first result instead of charging or
refunding again; that is why timeouts and 5xx are retried here (never inside a database transaction:
the callers run between short transactions). Calls go through the kernel's outbound client; one total
deadline (`PAGARME_TIMEOUT_SECONDS`) bounds each call, its attempts and the pauses between them included.
"""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import quote

from django.conf import settings

from kernel.db_connections import release_db_connection
from kernel.http import Deadline, OutboundError, request
from payments.card.gateway import (
    BoletoRequest,
    CardCustomer,
    GatewayCharge,
    GatewayNotFound,
    GatewayRejected,
    GatewayUnavailable,
    StoredCard,
    StoredCardCharge,
)

logger = logging.getLogger(__name__)
_RETRY_STATUSES = {429, 500, 502, 503, 504}
MAX_BYTES = 1024 * 1024  # an order or charge is a few kB; anything much larger is not an answer
CONNECT_TIMEOUT = 5.0  # a gateway that does not accept the connection is told sooner than the deadline


def charge_from_pagarme(body: dict[str, Any], *, order: dict[str, Any] | None = None) -> GatewayCharge:
    """A v5 `charge` object (standalone, inside an order, or a webhook's `data`) as our value object."""
    if not isinstance(body, dict) or not isinstance(body.get("id"), str):
        raise GatewayUnavailable("charge without id")
    transaction = body.get("last_transaction") or {}
    card = transaction.get("card") or {}
    order = order or body.get("order") or {}
    try:
        return GatewayCharge(
            charge_id=body["id"],
            order_id=str(order.get("id") or body.get("order_id") or ""),
            code=str(order.get("code") or body.get("code") or ""),
            status=str(body.get("status") or ""),
            amount=int(body.get("amount") or 0),
            paid_amount=int(body.get("paid_amount") or 0),
            canceled_amount=int(body.get("canceled_amount") or 0),
            installments=int(transaction.get("installments") or 1),
            transaction_status=str(transaction.get("status") or ""),
            return_code=str(transaction.get("acquirer_return_code") or ""),
            return_message=str(transaction.get("acquirer_message") or "")[:200],
            card_brand=str(card.get("brand") or "")[:20],
            card_last_digits=str(card.get("last_four_digits") or "")[:4],
            payment_method=str(body.get("payment_method") or transaction.get("transaction_type") or "")[:20],
            boleto_line=str(transaction.get("line") or "")[:64],
            boleto_barcode_url=str(transaction.get("barcode") or "")[:500],
            boleto_pdf=str(transaction.get("pdf") or transaction.get("url") or "")[:500],
            boleto_qr_code=str(transaction.get("qr_code") or "")[:500],
            boleto_due_at=str(transaction.get("due_at") or body.get("due_at") or "")[:40],
            boleto_nosso_numero=str(transaction.get("nosso_numero") or "")[:40],
            paid_at=str(body.get("paid_at") or transaction.get("paid_at") or "")[:40],
            raw=body,
        )
    except (TypeError, ValueError) as exc:
        raise GatewayUnavailable(f"unusable charge object: {exc}") from exc


def order_request_body(
    *, reference: str, amount: int, installments: int, token: str, customer: CardCustomer | None, description: str
) -> dict[str, Any]:
    credit_card: dict[str, Any] = {"card_token": token, "installments": installments, "capture": False}
    descriptor = str(getattr(settings, "PAGARME_STATEMENT_DESCRIPTOR", ""))[:13]
    if descriptor:
        credit_card["statement_descriptor"] = descriptor  # what the buyer's card bill shows
    body: dict[str, Any] = {
        "code": reference,
        "items": [{"amount": amount, "description": description[:256] or reference, "quantity": 1, "code": reference}],
        "payments": [{"payment_method": "credit_card", "amount": amount, "credit_card": credit_card}],
        "closed": True,
    }
    if customer is not None:
        document = "".join(ch for ch in customer.tax_id if ch.isalnum())
        body["customer"] = {
            "name": customer.name[:64] or "Comprador",
            "email": customer.email[:64],
            "type": "company" if len(document) == 14 else "individual",
            **({"document": document, "document_type": "CNPJ" if len(document) == 14 else "CPF"} if document else {}),
        }
    return body


def _customer_body(customer: CardCustomer) -> dict[str, Any]:
    document = "".join(ch for ch in customer.tax_id if ch.isalnum())
    return {
        "name": customer.name[:64] or "Comprador",
        "email": customer.email[:64],
        "type": "company" if len(document) == 14 else "individual",
        **({"document": document, "document_type": "CNPJ" if len(document) == 14 else "CPF"} if document else {}),
    }


def boleto_order_body(request: BoletoRequest) -> dict[str, Any]:
    """`POST /orders` with a boleto (https://docs.pagar.me/reference/boleto-1): `instructions` (≤ 256),
    `due_at` (we send the end of the Brasília day, so the boleto is payable all of its due date), `type` DM
    (duplicata mercantil) and `document_number` (≤ 16, our order code's tail, printed on the boleto)."""
    due_at = f"{request.due_date.isoformat()}T23:59:59-03:00"
    boleto = {
        "instructions": request.instructions[:256],
        "due_at": due_at,
        "type": "DM",
        "document_number": "".join(ch for ch in request.reference if ch.isalnum())[-16:],
    }
    return {
        "code": request.reference,
        "items": [
            {
                "amount": request.amount,
                "description": request.description[:256] or request.reference,
                "quantity": 1,
                "code": request.reference,
            }
        ],
        "customer": _customer_body(request.customer),
        "payments": [{"payment_method": "boleto", "amount": request.amount, "boleto": boleto}],
        "closed": True,
    }


def stored_card_order_body(request: StoredCardCharge) -> dict[str, Any]:
    """`POST /orders` charging a card of the customer's wallet, captured at once (a cycle is due when charged)."""
    credit_card: dict[str, Any] = {
        "card_id": request.card_id,
        "installments": 1,  # a cycle is charged whole
        "capture": True,
        "recurrence_cycle": "first" if request.first else "subsequent",
    }
    descriptor = str(getattr(settings, "PAGARME_STATEMENT_DESCRIPTOR", ""))[:13]
    if descriptor:
        credit_card["statement_descriptor"] = descriptor
    description = request.description[:256] or request.reference
    return {
        "code": request.reference,
        "customer_id": request.customer_id,
        "items": [{"amount": request.amount, "description": description, "quantity": 1, "code": request.reference}],
        "payments": [{"payment_method": "credit_card", "amount": request.amount, "credit_card": credit_card}],
        "closed": True,
    }


class PagarmeGateway:
    name = "pagarme"

    def __init__(
        self,
        *,
        secret_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        retries: int = 3,
        backoff: float | None = None,
    ) -> None:
        self.secret_key = secret_key if secret_key is not None else settings.PAGARME_SECRET_KEY
        self.base_url = (base_url or settings.PAGARME_BASE_URL).rstrip("/")
        if not self.secret_key:
            raise GatewayUnavailable("PagarmeGateway needs PAGARME_SECRET_KEY")
        self.retries = max(1, retries)
        self.backoff = backoff if backoff is not None else float(getattr(settings, "PAGARME_BACKOFF_SECONDS", 0.5))
        self.timeout = timeout if timeout is not None else float(settings.PAGARME_TIMEOUT_SECONDS)

    def close(self) -> None:
        """Nothing to release: every call has its own connection, bounded by its deadline."""

    # --- HTTP -----------------------------------------------------------------------------------------------

    def _request(self, method: str, path: str, *, json: Any = None, idempotency_key: str = "") -> Any:
        headers = {"Accept": "application/json"}
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        url = f"{self.base_url}{path}"
        last = ""
        deadline = Deadline(self.timeout)  # the whole call, retries and pauses included
        # A slow gateway must not hold a pooled database connection for its deadline (callers
        # are outside any transaction; the next query takes a connection again).
        release_db_connection()
        for attempt in range(self.retries):
            if attempt:
                pause = self.backoff * 2 ** (attempt - 1)
                if deadline.remaining() <= pause:
                    break
                time.sleep(pause)
            try:
                # The gateway's URL is configuration, not input: no SSRF guard.
                response = request(
                    method, url, json=json, headers=headers, auth=(self.secret_key, ""), deadline=deadline,
                    max_bytes=MAX_BYTES, connect_timeout=CONNECT_TIMEOUT, guard=False,
                )  # fmt: skip
            except OutboundError as exc:
                # Without an idempotency key a POST is not repeated blindly (GETs are harmless).
                last = f"{method} {path}: {exc.kind}"
                if (method != "GET" and not idempotency_key) or exc.kind == "too_large":
                    break
                continue
            if response.status_code in _RETRY_STATUSES:
                last = f"{method} {path} answered {response.status_code}"
                continue
            if response.status_code == 404:
                raise GatewayNotFound(f"{method} {path}")
            if response.status_code >= 400:
                raise GatewayRejected(response.status_code, response.text[:300])
            try:
                return response.json()
            except ValueError as exc:
                raise GatewayUnavailable(f"{method} {path}: answer is not JSON") from exc
        logger.warning("Pagar.me unavailable: %s", last)
        raise GatewayUnavailable(last or "unreachable")

    @staticmethod
    def _first_charge(order: Any) -> GatewayCharge:
        if not isinstance(order, dict):
            raise GatewayUnavailable("order answer is not an object")
        charges = order.get("charges") or []
        if not charges:
            raise GatewayUnavailable("order answered without charges")
        return charge_from_pagarme(charges[0], order=order)

    # --- the CardGateway protocol -----------------------------------------------------------------------------

    def create_order(
        self,
        *,
        reference: str,
        amount: int,
        installments: int,
        token: str,
        idempotency_key: str,
        customer: CardCustomer | None,
        description: str,
    ) -> GatewayCharge:
        body = order_request_body(
            reference=reference,
            amount=amount,
            installments=installments,
            token=token,
            customer=customer,
            description=description,
        )
        return self._first_charge(self._request("POST", "/orders", json=body, idempotency_key=idempotency_key))

    def capture(self, *, charge_id: str, amount: int, idempotency_key: str) -> GatewayCharge:
        path = f"/charges/{quote(charge_id, safe='')}/capture"
        return charge_from_pagarme(
            self._request("POST", path, json={"amount": amount}, idempotency_key=idempotency_key)
        )

    def refund(self, *, charge_id: str, amount: int, idempotency_key: str) -> GatewayCharge:
        path = f"/charges/{quote(charge_id, safe='')}"
        return charge_from_pagarme(
            self._request("DELETE", path, json={"amount": amount}, idempotency_key=idempotency_key)
        )

    def create_boleto_order(self, request: BoletoRequest) -> GatewayCharge:
        body = boleto_order_body(request)
        return self._first_charge(self._request("POST", "/orders", json=body, idempotency_key=request.idempotency_key))

    def cancel(self, *, charge_id: str, idempotency_key: str) -> GatewayCharge:
        path = f"/charges/{quote(charge_id, safe='')}"
        return charge_from_pagarme(self._request("DELETE", path, json={}, idempotency_key=idempotency_key))

    def get_charge(self, charge_id: str) -> GatewayCharge:
        return charge_from_pagarme(self._request("GET", f"/charges/{quote(charge_id, safe='')}"))

    def store_card(self, *, customer: CardCustomer, token: str, idempotency_key: str) -> StoredCard:
        body = _customer_body(customer)
        person = self._request("POST", "/customers", json=body, idempotency_key=f"{idempotency_key}-customer")
        customer_id = person.get("id") if isinstance(person, dict) else None
        if not isinstance(customer_id, str) or not customer_id:
            raise GatewayUnavailable("POST /customers answered without id")
        path = f"/customers/{quote(customer_id, safe='')}/cards"
        card = self._request("POST", path, json={"token": token}, idempotency_key=f"{idempotency_key}-card")
        if not isinstance(card, dict) or not isinstance(card.get("id"), str):
            raise GatewayUnavailable("POST /customers/{id}/cards answered without id")
        return StoredCard(
            customer_id=customer_id,
            card_id=card["id"],
            brand=str(card.get("brand") or "")[:20],
            last4=str(card.get("last_four_digits") or "")[:4],
        )

    def charge_stored_card(self, request: StoredCardCharge) -> GatewayCharge:
        body = stored_card_order_body(request)
        return self._first_charge(self._request("POST", "/orders", json=body, idempotency_key=request.idempotency_key))

    def delete_card(self, *, customer_id: str, card_id: str) -> None:
        path = f"/customers/{quote(customer_id, safe='')}/cards/{quote(card_id, safe='')}"
        try:
            self._request("DELETE", path, idempotency_key=f"delete-{card_id}")
        except GatewayNotFound:
            return  # already gone

    def find_charges(self, *, reference: str) -> list[GatewayCharge]:
        body = self._request("GET", f"/orders?code={quote(reference, safe='')}")
        orders = body.get("data") if isinstance(body, dict) else None
        if not isinstance(orders, list):
            raise GatewayUnavailable("GET /orders answered without data[]")
        found = [
            charge_from_pagarme(charge, order=order)
            for order in orders
            if isinstance(order, dict) and order.get("code") == reference
            for charge in order.get("charges") or []
        ]
        return found
