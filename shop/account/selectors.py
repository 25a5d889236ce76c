"""Reads of "Minha conta": the buyer's orders, the addresses they used, what prefills a new checkout, and the
LGPD export (art. 18, II and V: a copy of their data, in JSON or CSV)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from django.db.models import Prefetch
from django.http import HttpRequest

from kernel.br_validation import phone_display, tax_id_text
from orders.models import Order, OrderLine
from shop.models import Checkout, CheckoutEvent, ReminderOptOut, Subscription

ORDER_LIMIT = 50
SESSION_KEY = "account_email"  # set only by a used sign-in link (shop/account/views.py)


def signed_in_email(request: HttpRequest) -> str:
    """The e-mail this browser signed in to "Minha conta" with, or ""."""
    return str(request.session.get(SESSION_KEY, ""))


@dataclass(frozen=True)
class SavedAddress:
    """A delivery address the buyer used on an order (the most recent first, each once)."""

    postal_code: str
    street: str
    number: str
    complement: str
    neighborhood: str
    city: str
    state: str

    @property
    def one_line(self) -> str:
        street = ", ".join(part for part in (self.street, self.number) if part)
        rest = " — ".join(part for part in (self.complement, self.neighborhood) if part)
        place = f"{self.city}/{self.state}" if self.city else self.state
        return ", ".join(part for part in (street, rest, place, self.postal_code) if part)


def account_orders(email: str) -> list[Order]:
    """The buyer's orders, newest first, with their lines (2 queries)."""
    return list(
        Order.objects.filter(buyer_email__iexact=email)
        .order_by("-placed_at", "-id")
        .prefetch_related(Prefetch("lines", queryset=OrderLine.objects.order_by("id")))[:ORDER_LIMIT]
    )


def saved_addresses(orders: list[Order]) -> list[SavedAddress]:
    seen: set[SavedAddress] = set()
    found: list[SavedAddress] = []
    for order in orders:
        if order.fulfillment_method != "shipping":
            continue
        d = order.destination or {}
        address = SavedAddress(
            postal_code=str(d.get("postal_code", "")),
            street=str(d.get("street", "")),
            number=str(d.get("number", "")),
            complement=str(d.get("complement", "")),
            neighborhood=str(d.get("neighborhood", "")),
            city=str(d.get("city", "")),
            state=str(d.get("state", "")),
        )
        if address.postal_code and address not in seen:
            seen.add(address)
            found.append(address)
    return found


def checkout_defaults(email: str) -> dict[str, str]:
    """What prefills the checkout form of a signed-in buyer: contact and CPF from their latest order, and its
    delivery address when it was delivered (1 query). Only fields the buyer left empty are filled."""
    order = Order.objects.filter(buyer_email__iexact=email).order_by("-placed_at", "-id").first()
    if order is None:
        return {"email": email}
    tax_id = tax_id_text(order.buyer_tax_id)
    defaults = {
        "email": email,
        "first_name": order.buyer_first_name,
        "last_name": order.buyer_last_name,
        "phone": phone_display(order.buyer_phone),
        "tax_id": tax_id,
    }
    addresses = saved_addresses([order])
    if addresses:
        a = addresses[0]
        defaults.update(
            method="shipping",
            cep=a.postal_code,
            street=a.street,
            number=a.number,
            complement=a.complement,
            neighborhood=a.neighborhood,
            city=a.city,
            uf=a.state,
        )
    return defaults


def account_export(email: str) -> dict[str, Any]:
    """Everything the shop holds about this e-mail, as plain data (the JSON export; the CSV flattens it)."""
    orders = account_orders(email)
    checkouts = list(
        Checkout.objects.filter(buyer_email__iexact=email).exclude(status="completed").order_by("-created_at")
    )
    consents = list(
        CheckoutEvent.objects.filter(checkout__buyer_email__iexact=email, kind="consent_changed")
        .order_by("created_at")
        .values("checkout__public_id", "created_at", "detail")
    )
    subscriptions = (
        Subscription.objects.filter(buyer_email__iexact=email)
        .select_related("plan__variant__product")
        .order_by("-created_at")[:ORDER_LIMIT]
    )
    return {
        "email": email,
        "subscriptions": [
            {
                "id": subscription.public_id,
                "product": subscription.plan.variant.product.title,
                "status": subscription.status,
                "cycle": subscription.cycle,
                "price_centavos": subscription.price,
                "created_at": subscription.created_at.isoformat(),
                "buyer": {"name": subscription.buyer_name, "cpf": subscription.buyer_tax_id},
                "address": subscription.destination,
            }
            for subscription in subscriptions
        ],
        "orders": [
            {
                "number": order.number,
                "placed_at": order.placed_at.isoformat(),
                "status": order.status,
                "payment_status": order.payment_status,
                "total_centavos": order.total_amount,
                "buyer": {
                    "first_name": order.buyer_first_name,
                    "last_name": order.buyer_last_name,
                    "email": order.buyer_email,
                    "phone": order.buyer_phone,
                    "cpf": order.buyer_tax_id,
                },
                "delivery": {"method": order.fulfillment_method, "address": order.destination},
                "items": [
                    {
                        "sku": line.sku,
                        "title": line.title,
                        "quantity": line.quantity_total,
                        "unit_price_centavos": line.unit_price,
                    }
                    for line in order.lines.all()
                ],
            }
            for order in orders
        ],
        "unfinished_checkouts": [
            {
                "created_at": checkout.created_at.isoformat(),
                "status": checkout.status,
                "buyer": {
                    "first_name": checkout.buyer_first_name,
                    "last_name": checkout.buyer_last_name,
                    "phone": checkout.buyer_phone,
                    "cpf": checkout.buyer_tax_id,
                },
                "address": {
                    "cep": checkout.ship_cep,
                    "street": checkout.ship_street,
                    "number": checkout.ship_number,
                    "complement": checkout.ship_complement,
                    "neighborhood": checkout.ship_neighborhood,
                    "city": checkout.ship_city,
                    "uf": checkout.ship_uf,
                },
            }
            for checkout in checkouts
        ],
        "consent_records": [
            {"checkout": row["checkout__public_id"], "at": row["created_at"].isoformat(), "consent": row["detail"]}
            for row in consents
        ],
        "reminders_refused": ReminderOptOut.objects.filter(email__iexact=email).exists(),
    }


CSV_HEADER = ["registro", "data", "pedido", "situacao", "campo", "valor"]


def account_export_csv(data: dict[str, Any]) -> str:
    """The export as rows "record, date, order, status, field, value" (one value a row: opens in any sheet)."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";")
    writer.writerow(CSV_HEADER)
    for order in data["orders"]:
        base = ["pedido", order["placed_at"], order["number"], order["status"]]
        for key, value in order["buyer"].items():
            writer.writerow([*base, f"comprador.{key}", value])
        for key, value in (order["delivery"]["address"] or {}).items():
            writer.writerow([*base, f"endereco.{key}", value])
        for item in order["items"]:
            writer.writerow([*base, "item", f"{item['quantity']}× {item['title']} ({item['sku']})"])
        writer.writerow([*base, "total_centavos", order["total_centavos"]])
    for checkout in data["unfinished_checkouts"]:
        base = ["checkout", checkout["created_at"], "", checkout["status"]]
        for group in ("buyer", "address"):
            for key, value in checkout[group].items():
                if value:
                    writer.writerow([*base, f"{group}.{key}", value])
    for subscription in data.get("subscriptions", ()):
        base = ["assinatura", subscription["created_at"], subscription["id"], subscription["status"]]
        writer.writerow([*base, "produto", subscription["product"]])
        writer.writerow([*base, "preco_centavos", subscription["price_centavos"]])
        for key, value in subscription["buyer"].items():
            writer.writerow([*base, f"assinante.{key}", value])
        for key, value in (subscription["address"] or {}).items():
            writer.writerow([*base, f"endereco.{key}", value])
    for record in data["consent_records"]:
        writer.writerow(["consentimento", record["at"], "", "", "consent", record["consent"]])
    return "\ufeff" + out.getvalue()  # BOM: Excel reads UTF-8 accents right
