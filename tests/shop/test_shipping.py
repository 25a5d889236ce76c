"""Shipping rules: UF tables, CEP ranges, free threshold, pickup, selections (BCP §9, BCP-FUL-*)."""

import pytest

from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_create, checkout_update
from shop.checkout.types import AddressInput, CheckoutInput, LineInput
from tests.shop.checkout_factories import (
    BUYER,
    SP_ADDRESS,
    make_location,
    make_shipping,
    make_variant,
    pickup,
    shipping,
)

pytestmark = pytest.mark.django_db

RJ_ADDRESS = AddressInput(
    street="Av. Rio Branco", number="1", address_locality="Rio de Janeiro", postal_code="20040-002"
)


def options(result):
    view = checkout_view(result.checkout)
    return [(o.id, o.amount) for o in view.fulfillment_methods[0].groups[0].options]


def create(*lines, fulfillment):
    return checkout_create(
        data=CheckoutInput(lines=lines or (LineInput("SKU-CAFE-500G", 1),), buyer=BUYER, fulfillment=fulfillment)
    )


def test_sp_cep_gets_uf_rates_and_motoboy_range():
    make_variant()
    make_shipping()
    result = create(fulfillment=shipping())
    assert options(result) == [("pac", 1890), ("sedex", 3290), ("motoboy", 1500)]
    assert [(m.code, m.path) for m in result.messages] == [
        ("field_required", "$.fulfillment.methods[0].groups[0].selected_option_id")
    ]


def test_rj_cep_fills_uf_from_table_and_has_no_motoboy():
    make_variant()
    make_shipping()
    result = create(fulfillment=shipping(RJ_ADDRESS, option="sedex"))
    assert options(result) == [("pac", 2490), ("sedex", 4190)]
    assert result.checkout.ship_uf == "RJ"
    info = [(m.type, m.code, m.path) for m in result.messages]
    assert info == [("info", "address_region_filled", "$.fulfillment.methods[0].destinations[0].address_region")]
    assert result.checkout.status == "ready_for_complete"
    assert [(t.type, t.amount) for t in checkout_view(result.checkout).totals] == [
        ("subtotal", 4290),
        ("fulfillment", 4190),
        ("total", 8480),
    ]


def test_cep_no_method_serves_is_address_undeliverable():
    make_variant()
    make_shipping()
    address = AddressInput(
        street="Rua XV", number="10", address_locality="Florianópolis", address_region="SC", postal_code="88010-000"
    )
    result = create(fulfillment=shipping(address))
    assert [(m.code, m.path) for m in result.messages] == [
        ("address_undeliverable", "$.fulfillment.methods[0].destinations[0]")
    ]
    assert result.checkout.status == "incomplete"


def test_free_shipping_above_threshold_uses_subtotal():
    make_variant(price=10000)
    make_shipping()
    result = create(LineInput("SKU-CAFE-500G", 2), fulfillment=shipping(option="pac"))
    assert options(result)[0] == ("pac", 0)
    assert [(t.type, t.amount, t.display_text) for t in checkout_view(result.checkout).totals] == [
        ("subtotal", 20000, ""),
        ("fulfillment", 0, "PAC"),
        ("total", 20000, ""),
    ]


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        (
            AddressInput(street="R", number="1", address_locality="SP", postal_code="1234"),
            ("field_invalid", "postal_code"),
        ),
        (
            AddressInput(street="R", number="1", address_locality="SP", postal_code="00000-000"),
            ("field_invalid", "postal_code"),
        ),
        (
            AddressInput(street="R", number="1", address_locality="SP", postal_code=""),
            ("field_required", "postal_code"),
        ),
        (
            AddressInput(street="R", number="1", address_locality="SP", address_region="RJ", postal_code="01310-100"),
            ("field_invalid", "address_region"),
        ),
        (
            AddressInput(street="R", address_locality="SP", postal_code="01310-100"),
            ("field_required", "street_address"),
        ),
        (
            AddressInput(number="1", address_locality="SP", postal_code="01310-100"),
            ("field_required", "street_address"),
        ),
        (AddressInput(street="R", number="1", postal_code="01310-100"), ("field_required", "address_locality")),
    ],
)
def test_address_errors_are_next_to_their_field(address, expected):
    make_variant()
    make_shipping()
    result = create(fulfillment=shipping(address, option=None))
    code, field = expected
    assert (code, f"$.fulfillment.methods[0].destinations[0].{field}") in [(m.code, m.path) for m in result.messages]
    assert result.checkout.status == "incomplete"


def test_storefront_columns_and_postal_address_are_equivalent():
    make_variant()
    make_shipping()
    columns = AddressInput(
        street="Rua das Flores", number="123", complement="Apto 45", neighborhood="Jardim Paulista",
        address_locality="São Paulo", address_region="SP", postal_code="01310100",
    )  # fmt: skip
    a = create(fulfillment=shipping(columns, option="pac")).checkout
    b = create(fulfillment=shipping(SP_ADDRESS, option="pac")).checkout
    fields = ["ship_street", "ship_number", "ship_complement", "ship_neighborhood", "ship_city", "ship_uf", "ship_cep"]
    assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields] == [
        "Rua das Flores", "123", "Apto 45", "Jardim Paulista", "São Paulo", "SP", "01310-100",
    ]  # fmt: skip


def test_pickup_location_selection_bcp_ful_02():
    """BCP-FUL-02: `business_location` with `name`."""
    make_variant()
    make_shipping()
    location = make_location()
    result = create(fulfillment=pickup(location.public_id))
    view = checkout_view(result.checkout)
    method = view.fulfillment_methods[0]
    assert (method.id, method.type, method.selected_destination_id) == ("method_pickup", "pickup", location.public_id)
    dest = method.destinations[0]
    assert (dest.type, dest.name, dest.street_address, dest.opening_hours) == (
        "business_location", "Loja Paulista", "Avenida Paulista, 1000", "Seg a Sex 9h–18h",
    )  # fmt: skip
    assert [(o.id, o.title, o.amount, o.description) for o in method.groups[0].options] == [
        ("retirada", "Retirada na loja", 0, "Pronto para retirada em 1 dia útil")
    ]
    assert view.status == "ready_for_complete"
    assert [(t.type, t.amount, t.display_text) for t in view.totals][1] == ("fulfillment", 0, "Retirada na loja")
    assert [a.type for a in view.available_methods] == ["shipping"]


def test_pickup_without_location_requires_one():
    make_variant()
    make_shipping()
    make_location()
    result = create(fulfillment=pickup(None))
    assert ("field_required", "$.fulfillment.methods[0].selected_destination_id") in [
        (m.code, m.path) for m in result.messages
    ]


def test_unknown_destination_or_option_on_update_leaves_checkout_unchanged_bcp_ful_05():
    make_variant()
    make_shipping()
    make_location()
    created = create(fulfillment=shipping(option="pac"))
    checkout_id = created.checkout.public_id
    lid = created.checkout.lines.all()[0].public_id
    lines = (LineInput("SKU-CAFE-500G", 1, lid),)
    for fulfillment, path in [
        (pickup("loc_unknown"), "$.fulfillment.methods[0].selected_destination_id"),
        (shipping(option="teletransporte"), "$.fulfillment.methods[0].groups[0].selected_option_id"),
        (shipping(dest="dest_other"), "$.fulfillment.methods[0].selected_destination_id"),
    ]:
        result = checkout_update(
            checkout_id=checkout_id, data=CheckoutInput(lines=lines, buyer=BUYER, fulfillment=fulfillment)
        )
        assert (result.checkout.fulfillment_type, result.checkout.selected_option_id) == ("shipping", "pac")
        last = result.messages[-1]
        assert (last.type, last.severity, last.path) == ("error", "recoverable", path)


def test_an_unknown_method_type_is_named_not_called_unavailable_shipping_bcp_ful_05():
    """Agent walk: `{"type": "curbside"}` on update was answered "Entrega no endereço não está disponível no momento;
    escolha a retirada na loja." while shipping was on offer: the agent was told to stop shipping. Now the message
    names the type it sent and the types this store serves; the checkout stays as it was (BCP-FUL-05)."""
    from shop.checkout.types import FulfillmentInput, FulfillmentMethodInput

    make_variant()
    make_shipping()
    make_location()
    created = create(fulfillment=shipping(option="pac"))
    lines = (LineInput("SKU-CAFE-500G", 1, created.checkout.lines.all()[0].public_id),)
    curbside = FulfillmentInput(methods=(FulfillmentMethodInput(type="curbside"),))  # type: ignore[arg-type]
    result = checkout_update(
        checkout_id=created.checkout.public_id, data=CheckoutInput(lines=lines, buyer=BUYER, fulfillment=curbside)
    )
    assert (result.checkout.fulfillment_type, result.checkout.selected_option_id) == ("shipping", "pac")
    assert [(m.code, m.severity, m.path, m.content) for m in result.messages if m.type == "error"] == [
        (
            "fulfillment_method_unsupported",
            "recoverable",
            "$.fulfillment.methods[0].type",
            "O tipo de entrega “curbside” não é atendido por esta loja; use shipping ou pickup.",
        )
    ]


def test_destination_id_is_kept_across_updates_and_can_be_referenced_bcp_ful_04():
    """BCP-FUL-04."""
    make_variant()
    make_shipping()
    created = create(fulfillment=shipping(option="pac"))
    dest_id = created.checkout.ship_destination_id
    lid = created.checkout.lines.all()[0].public_id
    from shop.checkout.types import FulfillmentInput, FulfillmentMethodInput, GroupInput

    by_reference = FulfillmentInput(
        methods=(
            FulfillmentMethodInput(
                type="shipping", selected_destination_id=dest_id, groups=(GroupInput(selected_option_id="sedex"),)
            ),
        )
    )
    result = checkout_update(
        checkout_id=created.checkout.public_id,
        data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1, lid),), buyer=BUYER, fulfillment=by_reference),
    )
    assert (result.checkout.ship_destination_id, result.checkout.ship_cep, result.checkout.selected_option_id) == (
        dest_id, "01310-100", "sedex",
    )  # fmt: skip
    assert result.checkout.status == "ready_for_complete"
