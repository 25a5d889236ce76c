"""Builders for checkout-engine tests (plain functions; real rows in Postgres)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from shop.checkout.types import (
    AddressInput,
    BuyerInput,
    CheckoutInput,
    FulfillmentInput,
    FulfillmentMethodInput,
    GroupInput,
    LineInput,
)
from shop.models import Category, Coupon, PickupLocation, Product, ShippingMethod, ShippingRate, Variant


def make_variant(
    sku: str = "SKU-CAFE-500G", *, price: int = 4290, stock: int = 10, **product_kwargs: object
) -> Variant:
    category, _ = Category.objects.get_or_create(slug="cafes", defaults={"name": "Cafés"})
    product = Product.objects.create(
        title=product_kwargs.pop("title", f"Produto {sku}"),
        slug=sku.lower(),
        category=category,
        **product_kwargs,
    )
    return Variant.objects.create(product=product, sku=sku, price=price, stock=stock)


def make_shipping() -> dict[str, ShippingMethod]:
    """PAC and SEDEX by UF (SP, RJ), PAC free from R$ 200, motoboy in São Paulo city, pickup."""
    pac = ShippingMethod.objects.create(
        code="pac", title="PAC", carrier="Correios", free_above=20000, days_min=5, days_max=8, position=1
    )
    ShippingRate.objects.create(method=pac, uf="SP", price=1890, days_min=3, days_max=5)
    ShippingRate.objects.create(method=pac, uf="RJ", price=2490)
    sedex = ShippingMethod.objects.create(
        code="sedex", title="SEDEX", carrier="Correios", days_min=1, days_max=3, position=2
    )
    ShippingRate.objects.create(method=sedex, uf="SP", price=3290, days_min=1, days_max=2)
    ShippingRate.objects.create(method=sedex, uf="RJ", price=4190)
    moto = ShippingMethod.objects.create(code="motoboy", title="Motoboy", days_min=1, days_max=1, position=3)
    ShippingRate.objects.create(method=moto, cep_start=1_000_000, cep_end=5_999_999, price=1500)
    pickup = ShippingMethod.objects.create(
        code="retirada", title="Retirada na loja", kind="pickup", flat_price=0, days_min=1, days_max=1, position=4
    )
    return {"pac": pac, "sedex": sedex, "motoboy": moto, "retirada": pickup}


def make_location(name: str = "Loja Paulista") -> PickupLocation:
    return PickupLocation.objects.create(
        name=name,
        street="Avenida Paulista",
        number="1000",
        neighborhood="Bela Vista",
        city="São Paulo",
        uf="SP",
        cep="01310-100",
        opening_hours="Seg a Sex 9h–18h",
    )


def make_coupon(code: str, **kwargs: object) -> Coupon:
    defaults: dict[str, object] = {"title": f"Cupom {code}", "kind": "percent", "percent": 10}
    defaults.update(kwargs)
    if defaults["kind"] == "fixed":
        defaults.pop("percent", None)
    return Coupon.objects.create(code=code, **defaults)


def expired_window() -> dict[str, object]:
    now = timezone.now()
    return {"starts_at": now - timedelta(days=10), "ends_at": now - timedelta(days=1)}


BUYER = BuyerInput(first_name="Ana", last_name="Souza", email="ana@example.com.br", phone_number="+5511987654321")
SP_ADDRESS = AddressInput(
    street_address="Rua das Flores, 123",
    extended_address="Apto 45 - Jardim Paulista",
    address_locality="São Paulo",
    address_region="SP",
    postal_code="01310-100",
)


def shipping(
    address: AddressInput = SP_ADDRESS, option: str | None = None, dest: str | None = None
) -> FulfillmentInput:
    return FulfillmentInput(
        methods=(
            FulfillmentMethodInput(
                type="shipping",
                destinations=(address,),
                selected_destination_id=dest,
                groups=(GroupInput(selected_option_id=option),),
            ),
        )
    )


def pickup(location_id: str | None, option: str | None = "retirada") -> FulfillmentInput:
    return FulfillmentInput(
        methods=(
            FulfillmentMethodInput(
                type="pickup", selected_destination_id=location_id, groups=(GroupInput(selected_option_id=option),)
            ),
        )
    )


def full_input(*lines: LineInput, option: str | None = "pac", codes: tuple[str, ...] | None = None) -> CheckoutInput:
    return CheckoutInput(lines=lines, buyer=BUYER, fulfillment=shipping(option=option), discount_codes=codes)


# The storefront checkout form's contact and SP address fields, as a buyer fills them.
FORM_CONTACT = {
    "email": "ana@example.com.br",
    "first_name": "Ana",
    "last_name": "Souza",
    "phone": "(11) 98765-4321",
    "tax_id": "529.982.247-25",
}  # the CPF the NF-e needs (FISCAL_ISSUE_ON is on by default)
FORM_ADDRESS = {
    "method": "shipping",
    "cep": "01310-100",
    "street": "Rua das Flores",
    "number": "123",
    "neighborhood": "Jardim Paulista",
    "city": "São Paulo",
    "uf": "SP",
}


def start_checkout(client: Any, quantity: str = "2") -> str:
    """The storefront way in: the demo SKU into the session cart, then /checkout/; the new checkout's id."""
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": quantity})
    response = client.get("/checkout/")
    assert response.status_code == 302
    return response["Location"].rsplit("/", 1)[1]
