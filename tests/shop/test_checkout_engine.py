"""Checkout engine: statuses, messages (codes + JSONPath), full replacement, cancel, expiry (BCP §4–§6)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from shop.checkout.selectors import checkout_view, token_valid
from shop.checkout.services import (
    CheckoutCreateImpossible,
    CheckoutInputError,
    CheckoutNotFound,
    checkout_cancel,
    checkout_create,
    checkout_expire_due,
    checkout_get,
    checkout_update,
)
from shop.checkout.types import AddressInput, BuyerInput, CheckoutInput, LineInput
from shop.models import Checkout, CheckoutEvent, CheckoutLine, Variant
from tests.shop.checkout_factories import BUYER, full_input, make_shipping, make_variant, shipping

pytestmark = pytest.mark.django_db


def triples(messages):
    return [(m.type, m.code, m.path) for m in messages]


def line_ids(checkout):
    return [line.public_id for line in checkout.lines.all()]


def test_create_minimal_is_incomplete_with_required_field_errors_bcp_chk_07():
    """BCP-CHK-07: missing data keeps it out of `ready_for_complete`."""
    # given a variant and shipping methods
    make_variant(price=4290, stock=10)
    make_shipping()
    # when an agent creates a checkout with only an item and an e-mail (BCP §4.4)
    result = checkout_create(
        data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 2),), buyer=BuyerInput(email="ana@example.com.br"))
    )
    # then it is incomplete, and every missing piece is named by path
    checkout = result.checkout
    assert checkout.status == "incomplete"
    assert checkout.public_id.startswith("checkout_")
    assert line_ids(checkout)[0].startswith("li_")
    assert triples(result.messages) == [
        ("error", "field_required", "$.buyer.first_name"),
        ("error", "field_required", "$.buyer.last_name"),
        ("error", "field_required", "$.fulfillment"),
    ]
    assert all(m.severity == "recoverable" for m in result.messages)
    view = checkout_view(checkout)
    assert [(t.type, t.amount) for t in view.totals] == [("subtotal", 8580), ("total", 8580)]
    assert [(t.type, t.amount) for t in view.lines[0].totals] == [("subtotal", 8580), ("total", 8580)]
    assert view.lines[0].title == "Produto SKU-CAFE-500G"
    assert view.lines[0].price == 4290


def test_ready_for_complete_with_all_data_and_view_fields_bcp_chk_09_15_21():
    make_variant(price=4290, stock=10)
    make_shipping()
    result = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 2), option="sedex"))
    view = checkout_view(result.checkout)
    assert view.status == "ready_for_complete"
    assert triples(view.messages) == []
    assert [(t.type, t.amount, t.display_text) for t in view.totals] == [
        ("subtotal", 8580, ""),
        ("fulfillment", 3290, "SEDEX"),
        ("total", 11870, ""),
    ]
    base, _, token = view.continue_url.partition("?t=")
    assert base == f"http://127.0.0.1:8000/checkout/{view.id}"
    assert token_valid(view.id, token)  # the signed link that opens the storefront page (shop/checkout/selectors.py)
    assert [(link.type, link.url) for link in view.links] == [
        ("terms_of_service", "http://127.0.0.1:8000/termos"),
        ("privacy_policy", "http://127.0.0.1:8000/privacidade"),
        ("refund_policy", "http://127.0.0.1:8000/trocas-e-devolucoes"),
        ("shipping_policy", "http://127.0.0.1:8000/entrega"),
    ]
    ttl = view.expires_at - result.checkout.created_at
    assert timedelta(hours=5, minutes=59) < ttl <= timedelta(hours=6)
    method = view.fulfillment_methods[0]
    assert (method.id, method.type, method.line_item_ids) == ("method_shipping", "shipping", (view.lines[0].id,))
    destination = method.destinations[0]
    assert destination.id.startswith("dest_")
    assert method.selected_destination_id == destination.id
    assert (destination.street_address, destination.extended_address, destination.postal_code) == (
        "Rua das Flores, 123",
        "Apto 45 - Jardim Paulista",
        "01310-100",
    )
    group = method.groups[0]
    assert [(o.id, o.title, o.amount, o.description) for o in group.options] == [
        ("pac", "PAC", 1890, "Chega em 3 a 5 dias úteis"),
        ("sedex", "SEDEX", 3290, "Chega em 1 a 2 dias úteis"),
        ("motoboy", "Motoboy", 1500, "Chega em 1 dia útil"),
    ]
    assert group.selected_option_id == "sedex"


def test_create_with_every_item_unknown_is_impossible_and_stores_nothing_bcp_chk_05():
    with pytest.raises(CheckoutCreateImpossible) as caught:
        checkout_create(data=CheckoutInput(lines=(LineInput("NOPE", 1), LineInput("NADA", 2))))
    assert [(m.code, m.severity) for m in caught.value.messages] == [
        ("item_unavailable", "unrecoverable"),
        ("item_unavailable", "unrecoverable"),
    ]
    assert Checkout.objects.count() == 0


def test_unknown_item_among_known_stays_as_unavailable_line_bcp_chk_19():
    make_variant()
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1), LineInput("NOPE", 1))))
    assert ("error", "item_unavailable", "$.line_items[1]") in triples(result.messages)
    assert [(line.sku, line.unit_price) for line in result.checkout.lines.all()] == [
        ("SKU-CAFE-500G", 4290),
        ("NOPE", 0),
    ]


def test_inactive_product_is_item_unavailable():
    make_variant(active=False)
    make_variant("SKU-OK")
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1), LineInput("SKU-OK", 1))))
    assert ("error", "item_unavailable", "$.line_items[0]") in triples(result.messages)


def test_quantity_above_stock_is_capped_with_warning_bcp_chk_20():
    make_variant(stock=3)
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 5),)))
    assert result.checkout.lines.all()[0].quantity == 3
    warning = next(m for m in result.messages if m.code == "quantity_adjusted")
    assert (warning.type, warning.path, warning.severity) == ("warning", "$.line_items[0].quantity", "")


def test_quantity_above_the_cap_and_the_stock_has_one_warning_naming_the_final_quantity_bcp_chk_20():
    """BCP §4.3 / BCP-CHK-20 (QA walk): 1000 units with 36 in stock said "limitada a 999" and then "só temos 36" at
    the same path; one `quantity_adjusted` per path, the one that tells what the line now holds."""
    make_variant(stock=36)
    make_variant("SKU-FARTO", stock=5000)
    lines = (LineInput("SKU-CAFE-500G", 1000), LineInput("SKU-FARTO", 1000))
    result = checkout_create(data=CheckoutInput(lines=lines))
    assert [line.quantity for line in result.checkout.lines.all()] == [36, 999]
    adjusted = [(m.path, m.content) for m in result.messages if m.code == "quantity_adjusted"]
    assert adjusted == [
        ("$.line_items[0].quantity", "Só temos 36 unidades de Produto SKU-CAFE-500G; a quantidade foi ajustada."),
        ("$.line_items[1].quantity", "Quantidade limitada a 999 por item."),
    ]


def test_two_lines_of_same_variant_share_the_stock():
    make_variant(stock=3)
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 2), LineInput("SKU-CAFE-500G", 2))))
    assert [line.quantity for line in result.checkout.lines.all()] == [2, 1]
    assert ("warning", "quantity_adjusted", "$.line_items[1].quantity") in triples(result.messages)


def test_out_of_stock_line_is_an_error():
    make_variant(stock=0)
    make_variant("SKU-OK")
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1), LineInput("SKU-OK", 1))))
    assert ("error", "out_of_stock", "$.line_items[0]") in triples(result.messages)
    assert result.checkout.status == "incomplete"


def test_backorder_variant_is_not_capped():
    variant = make_variant(stock=0)
    Variant.objects.filter(pk=variant.pk).update(allow_backorder=True)
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 4),)))
    assert result.checkout.lines.all()[0].quantity == 4
    assert "out_of_stock" not in [m.code for m in result.messages]


def test_bad_quantity_is_an_input_error_naming_the_field():
    make_variant()
    with pytest.raises(CheckoutInputError) as caught:
        checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 0),)))
    assert caught.value.path == "$.line_items[0].quantity"
    assert Checkout.objects.count() == 0


def test_buyer_field_validation_paths():
    make_variant()
    buyer = BuyerInput(first_name="Ana", last_name="Souza", email="ana@", phone_number="123", tax_id="123.456.789-00")
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), buyer=buyer))
    assert [t for t in triples(result.messages) if t[2].startswith("$.buyer")] == [
        ("error", "field_invalid", "$.buyer.email"),
        ("error", "field_invalid", "$.buyer.phone_number"),
        ("error", "field_invalid", "$.buyer.tax_id"),
    ]


def test_valid_cpf_and_storefront_phone_are_accepted_and_normalized():
    make_variant()
    buyer = BuyerInput(
        first_name="Ana",
        last_name="Souza",
        email="ana@example.com.br",
        phone_number="(11) 98765-4321",
        tax_id="529.982.247-25",
    )
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), buyer=buyer))
    assert [t for t in triples(result.messages) if t[2].startswith("$.buyer")] == []
    assert (result.checkout.buyer_phone, result.checkout.buyer_tax_id) == ("+5511987654321", "52998224725")


def test_alphanumeric_cnpj_is_a_valid_buyer_tax_id():
    """From July 2026 a CNPJ may have letters in its first 12 characters (Receita Federal example)."""
    make_variant()
    buyer = BuyerInput(first_name="Caju", last_name="Ltda", email="caju@example.com.br", tax_id="12.abc.345/01de-35")
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), buyer=buyer))
    assert [t for t in triples(result.messages) if t[2].startswith("$.buyer")] == []
    assert result.checkout.buyer_tax_id == "12ABC34501DE35"


def test_update_is_full_replacement_bcp_chk_06():
    # given a ready checkout with two lines
    make_variant("SKU-A")
    make_variant("SKU-B")
    make_shipping()
    created = checkout_create(data=full_input(LineInput("SKU-A", 1), LineInput("SKU-B", 1), option="pac"))
    first, second = line_ids(created.checkout)
    # when the update lists only the second line (by id) plus a new one, and omits buyer and fulfillment
    updated = checkout_update(
        checkout_id=created.checkout.public_id,
        data=CheckoutInput(lines=(LineInput("SKU-B", 3, second), LineInput("SKU-A", 1))),
    )
    # then the first line is gone, the second kept its id, omitted fields are cleared
    checkout = updated.checkout
    ids = line_ids(checkout)
    assert ids[0] == second and ids[1] not in (first, second)
    assert [line.quantity for line in checkout.lines.all()] == [3, 1]
    assert not CheckoutLine.objects.filter(public_id=first).exists()
    assert (checkout.buyer_given, checkout.buyer_email, checkout.fulfillment_type, checkout.ship_cep) == (
        False,
        "",
        "",
        "",
    )
    assert checkout.status == "incomplete"
    assert ("error", "field_required", "$.buyer.email") in triples(updated.messages)
    assert list(CheckoutEvent.objects.filter(checkout=checkout).values_list("kind", "from_status", "to_status")) == [
        ("created", "", "ready_for_complete"),
        ("status_changed", "ready_for_complete", "incomplete"),
    ]


def test_update_with_unknown_line_id_changes_nothing():
    make_variant()
    created = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), buyer=BUYER))
    updated = checkout_update(
        checkout_id=created.checkout.public_id,
        data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 5, "li_forged"),)),
    )
    assert updated.checkout.lines.all()[0].quantity == 1
    assert updated.checkout.buyer_email == "ana@example.com.br"
    rejection = updated.messages[-1]
    assert (rejection.type, rejection.code, rejection.severity, rejection.path) == (
        "error",
        "field_invalid",
        "recoverable",
        "$.line_items[0].id",
    )


def test_same_state_and_input_give_same_result_bcp_chk_23():
    """BCP-CHK-23."""
    make_variant()
    make_shipping()
    created = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 2), option="pac"))
    lid = line_ids(created.checkout)[0]
    data = full_input(LineInput("SKU-CAFE-500G", 2, lid), option="pac")
    first = checkout_update(checkout_id=created.checkout.public_id, data=data)
    snapshot = (
        first.checkout.status,
        first.checkout.totals,
        first.checkout.fulfillment_snapshot,
        first.checkout.messages,
    )
    second = checkout_update(checkout_id=created.checkout.public_id, data=data)
    assert (
        second.checkout.status,
        second.checkout.totals,
        second.checkout.fulfillment_snapshot,
        second.checkout.messages,
    ) == snapshot


def test_cancel_then_every_operation_is_refused_unrecoverable_bcp_chk_14():
    make_variant()
    created = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),)))
    checkout_id = created.checkout.public_id
    canceled = checkout_cancel(checkout_id=checkout_id)
    assert canceled.checkout.status == "canceled"
    view = checkout_view(canceled.checkout)
    assert (view.continue_url, view.expires_at) == (None, None)
    again = checkout_cancel(checkout_id=checkout_id)
    update = checkout_update(checkout_id=checkout_id, data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 2),)))
    for result in (again, update):
        assert result.checkout.status == "canceled"
        assert (result.messages[-1].code, result.messages[-1].severity) == ("invalid_checkout_status", "unrecoverable")
    assert update.checkout.lines.all()[0].quantity == 1


def test_get_unknown_checkout_raises_not_found_bcp_chk_13():
    with pytest.raises(CheckoutNotFound):
        checkout_get(checkout_id="checkout_nope")


def test_expiry_task_cancels_due_checkouts_only_bcp_chk_15():
    make_variant()
    due = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),))).checkout
    fresh = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),))).checkout
    Checkout.objects.filter(pk=due.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert checkout_expire_due() == 1
    assert Checkout.objects.get(pk=due.pk).status == "canceled"
    assert Checkout.objects.get(pk=fresh.pk).status == "incomplete"
    assert CheckoutEvent.objects.filter(checkout_id=due.pk, kind="expired").count() == 1
    assert checkout_expire_due() == 0


def test_get_expires_a_due_checkout_on_read():
    make_variant()
    checkout = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),))).checkout
    Checkout.objects.filter(pk=checkout.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert checkout_get(checkout_id=checkout.public_id).checkout.status == "canceled"


def test_expired_update_is_refused():
    make_variant()
    checkout = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),))).checkout
    Checkout.objects.filter(pk=checkout.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    result = checkout_update(checkout_id=checkout.public_id, data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),)))
    assert result.checkout.status == "canceled"
    assert result.messages[-1].code == "invalid_checkout_status"


def test_digital_only_checkout_needs_no_fulfillment():
    make_variant(requires_shipping=False)
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), buyer=BUYER))
    assert result.checkout.status == "ready_for_complete"
    assert checkout_view(result.checkout).fulfillment_methods == ()


def test_messages_keep_bcp_required_fields_bcp_chk_18():
    make_variant(stock=2)
    result = checkout_create(
        data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 5),), buyer=BUYER, fulfillment=shipping(option="nope"))
    )
    for message in result.messages:
        data = message.as_dict()
        assert data["content"] and data["code"]
        assert data["path"].startswith("$")
        if data["type"] == "error":
            assert data["severity"] == "recoverable"
        else:
            assert "severity" not in data


def test_checkout_view_has_a_fixed_query_count(django_assert_num_queries):
    from shop.checkout.selectors import checkout_by_public_id

    make_variant("SKU-A")
    make_variant("SKU-B")
    make_shipping()
    created = checkout_create(data=full_input(LineInput("SKU-A", 1), LineInput("SKU-B", 2), option="pac"))
    checkout_view(checkout_by_public_id(created.checkout.public_id))  # warms the cached store settings (links)
    with django_assert_num_queries(1):  # the lines with their checkout joined; nothing else for a non-Pix checkout
        view = checkout_view(checkout_by_public_id(created.checkout.public_id))
    assert len(view.lines) == 2


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (CheckoutInput(lines=(LineInput("X" * 65, 1),)), "$.line_items[0].item.id"),
        (CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), buyer=BuyerInput(email="a" * 255)), "$.buyer.email"),
        (
            CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), fulfillment=shipping(AddressInput(street="R" * 201))),
            "$.fulfillment.methods[0].destinations[0].street_address",
        ),
        (CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), discount_codes=("C" * 41,)), "$.discounts.codes[0]"),
    ],
)
def test_overlong_values_are_input_errors_never_500(data, path):
    make_variant()
    make_shipping()
    with pytest.raises(CheckoutInputError) as caught:
        checkout_create(data=data)
    assert caught.value.path == path
    assert Checkout.objects.count() == 0


def test_tax_id_with_too_many_digits_is_invalid_not_truncated():
    make_variant()
    buyer = BuyerInput(first_name="A", last_name="B", email="a@example.com", tax_id="11222333000181999")
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), buyer=buyer))
    assert ("error", "field_invalid", "$.buyer.tax_id") in triples(result.messages)
