"""Demo data of the checkout engine (shipping methods, pickup locations, coupons), written once.

Every `make run` calls it: a row is created only when missing (matched by code or name) and never saved again,
so the merchant's edits to a demo method, its rates, a pickup location or a coupon survive a restart. A
method's rates come with the method only: rates the merchant deleted or changed are not recreated.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from shop.models import Coupon, PackagingBox, PickupLocation, ShippingMethod, ShippingRate

# (UF, PAC price, PAC days, SEDEX price, SEDEX days): Correios-like tables from a São Paulo sender.
_UF_TABLE: list[tuple[str, int, tuple[int, int], int, tuple[int, int]]] = [
    ("SP", 1890, (3, 5), 3290, (1, 2)),
    ("RJ", 2290, (4, 6), 3990, (2, 3)),
    ("MG", 2290, (4, 7), 3990, (2, 3)),
    ("ES", 2490, (5, 7), 4290, (2, 4)),
    ("PR", 2390, (4, 7), 4190, (2, 3)),
    ("SC", 2590, (5, 8), 4490, (2, 4)),
    ("RS", 2790, (5, 9), 4790, (2, 4)),
    ("DF", 2690, (5, 8), 4590, (2, 4)),
    ("GO", 2690, (5, 8), 4590, (2, 4)),
    ("MS", 2790, (6, 9), 4790, (3, 4)),
    ("MT", 2990, (6, 10), 5190, (3, 5)),
    ("BA", 2990, (6, 10), 5290, (3, 5)),
    ("SE", 3190, (7, 11), 5490, (3, 5)),
    ("AL", 3190, (7, 11), 5490, (3, 5)),
    ("PE", 3190, (7, 11), 5490, (3, 5)),
    ("PB", 3290, (7, 12), 5690, (3, 6)),
    ("RN", 3290, (7, 12), 5690, (3, 6)),
    ("CE", 3290, (7, 12), 5690, (3, 6)),
    ("PI", 3390, (8, 12), 5890, (4, 6)),
    ("MA", 3390, (8, 12), 5890, (4, 6)),
    ("TO", 3290, (8, 12), 5790, (4, 6)),
    ("PA", 3590, (8, 13), 6190, (4, 7)),
    ("AP", 3890, (9, 15), 6590, (5, 8)),
    ("AM", 3890, (9, 15), 6590, (5, 8)),
    ("RR", 3990, (10, 16), 6790, (5, 8)),
    ("AC", 3990, (10, 16), 6790, (5, 8)),
    ("RO", 3690, (9, 14), 6390, (4, 7)),
]


def _method(code: str, **fields: object) -> ShippingMethod | None:
    """The demo method when it was created now (its rates are to be written), None when it existed already."""
    method, created = ShippingMethod.objects.get_or_create(code=code, defaults=fields)
    return method if created else None


@transaction.atomic
def seed_checkout_demo() -> dict[str, int]:
    """Create what is missing of the demo's shipping, pickup and coupons; rows written per kind (0 on a re-run)."""
    written = {"shipping_methods": 0, "shipping_rates": 0, "packaging_boxes": 0, "pickup_locations": 0, "coupons": 0}
    rates: list[ShippingRate] = []
    # By weight (issue 36): each kg or part of one above the first adds to the UF rate, so ten T-shirts
    # (one 36×27×18 box, 2.9 kg cubic) cost more than one (a 27×18×9 box, under 1 kg).
    pac = _method(
        "pac", title="PAC", carrier="Correios", free_above=29900, days_min=5, days_max=10, position=1, active=True,
        price_per_extra_kg=350,
    )  # fmt: skip
    if pac is not None:
        rates += [
            ShippingRate(method=pac, uf=uf, price=pac_price, days_min=pac_days[0], days_max=pac_days[1])
            for uf, pac_price, pac_days, _, _ in _UF_TABLE
        ]
    sedex = _method(
        "sedex", title="SEDEX", carrier="Correios", days_min=1, days_max=4, position=2, active=True,
        price_per_extra_kg=690,
    )  # fmt: skip
    if sedex is not None:
        rates += [
            ShippingRate(method=sedex, uf=uf, price=sedex_price, days_min=sedex_days[0], days_max=sedex_days[1])
            for uf, _, _, sedex_price, sedex_days in _UF_TABLE
        ]
    moto = _method("motoboy", title="Motoboy", carrier="Entrega local", days_min=1, days_max=1, position=3, active=True)
    if moto is not None:
        rates += [
            # São Paulo capital: centro/zona sul closer and cheaper than the rest of the city.
            ShippingRate(method=moto, cep_start=1_000_000, cep_end=1_599_999, price=1290, days_min=0, days_max=1),
            ShippingRate(method=moto, cep_start=1_000_000, cep_end=5_999_999, price=1790, days_min=1, days_max=1),
            ShippingRate(method=moto, cep_start=8_000_000, cep_end=8_499_999, price=2290, days_min=1, days_max=1),
        ]
    ShippingRate.objects.bulk_create(rates)
    # The Correios' standard boxes (inside measures, cm) and what the empty box weighs.
    for name, sides, grams in (
        ("Caixa P (tipo 2)", (27, 18, 9), 90),
        ("Caixa M (tipo 4)", (36, 27, 18), 220),
        ("Caixa G (tipo 5)", (54, 36, 27), 480),
    ):
        box = {"length_cm": sides[0], "width_cm": sides[1], "height_cm": sides[2], "weight_grams": grams}
        written["packaging_boxes"] += PackagingBox.objects.get_or_create(name=name, defaults=box)[1]
    written["shipping_rates"] = len(rates)
    written["shipping_methods"] = sum(method is not None for method in (pac, sedex, moto))
    pickup = _method(
        "retirada",
        title="Retirada na loja",
        kind=ShippingMethod.KIND_PICKUP,
        flat_price=0,
        days_min=1,
        days_max=1,
        position=4,
        active=True,
    )
    written["shipping_methods"] += pickup is not None
    locations = [
        {
            "name": "Loja Paulista",
            "street": "Avenida Paulista",
            "number": "1578",
            "complement": "Loja 12",
            "neighborhood": "Bela Vista",
            "city": "São Paulo",
            "uf": "SP",
            "cep": "01310-200",
            "opening_hours": "Seg a Sex 9h–19h, Sáb 10h–16h",
            "preparation_days": 1,
            "position": 1,
        },
        {
            "name": "Loja Pinheiros",
            "street": "Rua dos Pinheiros",
            "number": "870",
            "complement": "",
            "neighborhood": "Pinheiros",
            "city": "São Paulo",
            "uf": "SP",
            "cep": "05422-001",
            "opening_hours": "Seg a Sáb 10h–20h",
            "preparation_days": 2,
            "position": 2,
        },
    ]
    for data in locations:
        written["pickup_locations"] += PickupLocation.objects.get_or_create(name=data["name"], defaults=data)[1]
    now = timezone.now()
    coupons = [
        {"code": "BEMVINDO10", "title": "10% de boas-vindas", "kind": "percent", "percent": 10, "amount": None,
         "usage_limit_per_email": 1, "stackable": False},
        {"code": "DESCONTO20", "title": "R$ 20 off acima de R$ 150", "kind": "fixed", "percent": None, "amount": 2000,
         "min_subtotal": 15000, "stackable": True},
        {"code": "FRETE5", "title": "R$ 5 de desconto", "kind": "fixed", "percent": None, "amount": 500,
         "stackable": True},
        {"code": "BLACKFRIDAY", "title": "Black Friday 25%", "kind": "percent", "percent": 25, "amount": None,
         "starts_at": now - timedelta(days=30), "ends_at": now - timedelta(days=1)},
    ]  # fmt: skip
    for data in coupons:
        code = str(data.pop("code"))
        written["coupons"] += Coupon.objects.get_or_create(code=code, defaults=data)[1]
    return written
