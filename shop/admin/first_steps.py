"""The admin home's "Primeiros passos": what a new store still lacks before it sells (a selector: one query).

Each step is ticked from the database (or, for the Pix key, the server's setting), links to where it is done, and
is listed only to staff who may do it; the list goes away once every step is done (for everyone), and is not shown
to staff who may do none of the setup steps (Atendimento, Financeiro, Expedição).

- store data: the razão social (not the example's), CNPJ, street and CEP of "Dados da loja";
- Pix key: a key other than the demonstration one (set by whoever installed the store; the store page says whom to
  ask);
- delivery: an active shipping method or an active pickup point;
- a product: active, with a photo and an active variant in stock;
- NF-e data: CNPJ, inscrição estadual (or ISENTO) and regime tributário;
- a test order: any order placed in the shop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractUser, AnonymousUser
from django.db import connection
from django.db.models import QuerySet
from django.urls import reverse
from django.utils.translation import gettext as _

from orders.models import Order
from shop.admin.store import DEMO_PIX_KEY
from shop.models import PickupLocation, Product, ShippingMethod, StoreSettings
from shop.models.store import STORE_ROW_ID

# The razão social a new row has ("Loja Exemplo Ltda"): still it, the Pix and the NF-e would name the example shop.
DEFAULT_LEGAL_NAME = StoreSettings._meta.get_field("legal_name").get_default()
# The steps that set the store up. The test order's (`orders.change_order`) is listed beside them only: alone it was
# all Atendimento and Financeiro saw ("Um pedido de teste na loja", done on the first day), a list of nothing for
# staff who set up nothing.
SETUP_PERMISSIONS = ("shop.change_storesettings", "shop.change_shippingmethod", "shop.change_product")


@dataclass(frozen=True)
class Step:
    key: str
    label: str
    url: str
    done: bool


def _found(querysets: dict[str, QuerySet[Any]]) -> dict[str, bool]:
    """Whether each queryset has a row, in one statement (`SELECT EXISTS(…), EXISTS(…)`): the admin home already
    runs a fixed number of queries (tests/shop/test_admin_dashboard.py)."""
    parts: list[str] = []
    params: list[Any] = []
    for queryset in querysets.values():
        sql, part_params = queryset.order_by().values("pk")[:1].query.sql_with_params()
        parts.append(f"EXISTS({sql})")
        params.extend(part_params)
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(parts), params)
        row = cursor.fetchone()
    return {key: bool(value) for key, value in zip(querysets, row, strict=True)}


def first_steps(user: AbstractUser | AnonymousUser) -> list[Step]:
    """The steps `user` may do, or [] once every step is done (or when they may set up nothing)."""
    if not any(user.has_perm(permission) for permission in SETUP_PERMISSIONS):
        return []
    store = StoreSettings.objects.filter(pk=STORE_ROW_ID)
    found = _found(
        {
            "store": store.exclude(cnpj="")
            .exclude(street="")
            .exclude(postal_code="")
            .exclude(legal_name=DEFAULT_LEGAL_NAME),
            "shipping": ShippingMethod.objects.filter(active=True, kind=ShippingMethod.KIND_SHIPPING),
            "pickup": PickupLocation.objects.filter(active=True),
            "product": Product.objects.filter(
                active=True, images__isnull=False, variants__active=True, variants__stock__gt=0
            ),
            "fiscal": store.exclude(cnpj="").exclude(state_registration="").exclude(tax_regime=""),
            "order": Order.objects.all(),
        }
    )
    store_url = reverse("admin:shop_storesettings_changelist")
    steps = [
        (
            Step("store", _("Dados da loja e CNPJ"), store_url, found["store"]),
            "shop.change_storesettings",
        ),
        (
            Step(
                "pix",
                _("Chave Pix da loja (definida por quem instalou a loja: veja em Dados da loja)"),
                store_url,
                bool(settings.PIX_KEY) and settings.PIX_KEY != DEMO_PIX_KEY,
            ),
            "shop.change_storesettings",
        ),
        (
            Step(
                "delivery",
                _("Uma forma de entrega ou um ponto de retirada"),
                reverse("admin:shop_shippingmethod_changelist"),
                found["shipping"] or found["pickup"],
            ),
            "shop.change_shippingmethod",
        ),
        (
            Step(
                "product",
                _("Um produto com foto e estoque"),
                reverse("admin:shop_product_changelist"),
                found["product"],
            ),
            "shop.change_product",
        ),
        (
            Step("fiscal", _("Dados para a NF-e (inscrição estadual e regime tributário)"), store_url, found["fiscal"]),
            "shop.change_storesettings",
        ),
        (
            Step("order", _("Um pedido de teste na loja"), reverse("shop:home"), found["order"]),
            "orders.change_order",
        ),
    ]
    if all(step.done for step, _permission in steps):
        return []
    return [step for step, permission in steps if user.has_perm(permission)]
