import pytest

from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_create, checkout_update
from shop.checkout.types import CheckoutInput, LineInput
from tests.shop.checkout_factories import full_input, make_shipping, make_variant


@pytest.mark.django_db
def test_smoke_create_then_ready():
    make_variant(price=4290, stock=10)
    make_shipping()
    created = checkout_create(data=CheckoutInput(lines=(LineInput(sku="SKU-CAFE-500G", quantity=2),)))
    assert created.checkout.status == "incomplete"
    lid = created.checkout.lines.all()[0].public_id
    updated = checkout_update(
        checkout_id=created.checkout.public_id, data=full_input(LineInput("SKU-CAFE-500G", 2, lid), option="pac")
    )
    view = checkout_view(updated.checkout)
    print(updated.messages)
    assert view.status == "ready_for_complete"
    assert [(t.type, t.amount) for t in view.totals] == [("subtotal", 8580), ("fulfillment", 1890), ("total", 10470)]
