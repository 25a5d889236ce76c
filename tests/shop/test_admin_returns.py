"""Returns, exchanges and expectation split/merge from the admin: each a page calling its service,
bad input refused in Portuguese on the field, nothing changed. In tests/shop because a return's
restock goes through the shop's receiver (orders tests isolate orders' signals)."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.utils import timezone, translation

from orders.models import Adjustment, Order
from orders.selectors import order_bcp_payload, order_for_bcp
from orders.services import order_mark_delivered, order_place_from_checkout, order_ship
from orders.types import LineQuantity
from shop.models import Category, Product, Variant
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db


def _action(order: Order, slug: str) -> str:
    return f"/admin/orders/order/{order.public_id}/action/{slug}/"


@pytest.fixture
def place_order(django_capture_on_commit_callbacks):
    def _place(**kwargs: object) -> Order:
        with django_capture_on_commit_callbacks(execute=True):
            return order_place_from_checkout(checkout=make_checkout(**kwargs))

    return _place


@pytest.fixture
def variant() -> Variant:
    category = Category.objects.create(name="C", slug="c")
    product = Product.objects.create(title="Camiseta", slug="camiseta", category=category)
    return Variant.objects.create(product=product, sku="CAM", price=3000, stock=5)


def test_return_with_restock_and_pix_refund(
    admin_client: Client, place_order, variant: Variant, django_capture_on_commit_callbacks
) -> None:
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    line = order.lines.get()
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert _action(order, "return") not in html  # nothing reached the buyer yet
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 2)])
    order_mark_delivered(
        order_id=order.public_id, lines=[LineQuantity(line.public_id, 2)]
    )  # a return is of what reached the buyer
    assert _action(order, "return") in admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    form = {
        f"qty_{line.public_id}": "1",
        "reason": "Tamanho errado",
        "condition": "novo",
        "restock": "on",
        "refund_amount": "30,00",
    }
    # money back asks for the tick naming the sum, as "Reembolsar" does: without it nothing changes
    html = admin_client.post(_action(order, "return"), form).content.decode()
    assert "Marque “Confirmo o reembolso de R$ 30,00” para reembolsar; nada foi reembolsado." in html
    assert '<label for="id_confirm" class="vCheckboxLabel">Confirmo o reembolso de R$ 30,00</label>' in html
    assert not order.adjustments.exists()
    form["confirm"] = "on"
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(_action(order, "return"), form)
    assert response.status_code == 302
    # the page says what it did with the money too (QA walk: "Devolução registrada." and nothing of the refund)
    assert "Devolução registrada. Reembolso de R$ 30,00 solicitado." in admin_client.get(response.url).content.decode()
    line.refresh_from_db()
    variant.refresh_from_db()
    assert (line.quantity_total, variant.stock) == (1, 6)
    returned = Adjustment.objects.get(order=order, type="return")
    assert (returned.description, returned.condition) == ("Tamanho errado", "novo")  # the condition as data
    refund = Adjustment.objects.get(order=order, type="refund")
    assert refund.amount == -3000
    # the buyer sees it on the permalink page
    permalink = Client().get(f"/orders/{order.permalink_token}").content.decode()
    assert "Itens devolvidos" in permalink and "(Tamanho errado; estado dos itens: Novo, na embalagem)" in permalink
    assert "Reembolso de R$ 30,00" in permalink


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"qty": "3"}, "Certifique-se que este valor seja menor ou igual a 2."),
        ({"reason": ""}, "Preencha “Motivo”."),
        ({"refund_amount": "99,00"}, "Só R$ 68,00 do valor pago pode ser reembolsado."),
        ({"refund_amount": "-1"}, "O valor não pode ser negativo."),
        ({"qty": "0"}, "Informe a quantidade de pelo menos um item."),
    ],
)
def test_bad_return_is_refused_and_changes_nothing(
    admin_client: Client, place_order, variant: Variant, changes: dict[str, str], message: str
) -> None:
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)  # a return is of what reached the buyer
    form = {
        f"qty_{line.public_id}": changes.get("qty", "1"),
        "reason": changes.get("reason", "Defeito"),
        "condition": "avariado",
        "refund_amount": changes.get("refund_amount", ""),
        "confirm": "on",
    }
    response = admin_client.post(_action(order, "return"), form)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert order.adjustments.count() == 0
    variant.refresh_from_db()
    assert variant.stock == 5


def test_split_then_merge_expectations(admin_client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 2), ("CAF", 4290, 1)], freight=0)
    cam = order.lines.get(sku="CAM")
    source = order.expectations.get()
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert _action(order, "split") in html and _action(order, "merge") not in html
    form = {"expectation": source.public_id, f"qty_{cam.public_id}": "1", "description": "Segue depois"}
    assert admin_client.post(_action(order, "split"), form).status_code == 302
    expectations = list(order.expectations.order_by("position", "id"))
    assert [e.description for e in expectations][1] == "Segue depois"
    assert expectations[1].line_items == [{"id": cam.public_id, "quantity": 1}]
    # merging needs two of them
    refused = admin_client.post(_action(order, "merge"), {"expectations": [expectations[0].public_id]})
    assert "Marque pelo menos duas previsões." in refused.content.decode()
    both = {"expectations": [e.public_id for e in expectations]}
    assert admin_client.post(_action(order, "merge"), both).status_code == 302
    assert order.expectations.count() == 1
    assert sum(i["quantity"] for i in order.expectations.get().line_items) == 3


def test_return_refund_is_a_pix_devolucao_settled_by_the_psp(
    admin_client: Client, django_capture_on_commit_callbacks
) -> None:
    """A Pix-paid order: the return's refund goes to the PSP (sandbox) and the adjustment settles."""
    from payments.models import PixRefund
    from payments.sandbox.services import PayOptions, pay
    from payments.selectors import pix_charge_latest_for_reference
    from tests.shop.test_completion import PIX, complete, ready_checkout

    checkout = ready_checkout(quantity=2)
    complete(checkout, PIX)
    charge = pix_charge_latest_for_reference(checkout.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=charge.txid, options=PayOptions())
    order = Order.objects.get(checkout_id=checkout.public_id)
    line = order.lines.get()
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
        order_mark_delivered(order_id=order.public_id)  # a return is of what reached the buyer
    form = {
        f"qty_{line.public_id}": "1",
        "reason": "Defeito",
        "condition": "avariado",
        "refund_amount": "42,90",
        "confirm": "on",
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert admin_client.post(_action(order, "return"), form).status_code == 302
    refund = Adjustment.objects.get(order=order, type="refund")
    assert (refund.amount, refund.status) == (-4290, "completed")
    assert PixRefund.objects.get(refund_id=refund.public_id).amount == 4290
    assert Variant.objects.get(sku="SKU-CAFE-500G").stock == 8  # not restocked: damaged
    order.refresh_from_db()
    assert (order.refunded_amount, order.payment_status) == (4290, "partially_refunded")


@pytest.mark.parametrize(
    ("payment_type", "label"),
    [("pix", "Reembolso por Pix (R$)"), ("card", "Reembolso no cartão (R$)"), ("boleto", "Reembolso (R$)")],
)
def test_the_return_refund_field_names_the_way_the_order_was_paid(
    admin_client: Client, place_order, variant: Variant, payment_type: str, label: str
) -> None:
    """QA walk: the return page of an order paid by card offered "Reembolso por Pix (R$)"; the money goes back the
    way it came (the card gateway's estorno, or the boleto's transfer)."""
    order = place_order(lines=[("CAM", 3000, 1)], freight=0, payment_type=payment_type)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    html = admin_client.get(_action(order, "return")).content.decode()
    assert f'<label for="id_refund_amount">{label}:</label>' in html
    assert payment_type == "pix" or "Pix" not in html.split('for="id_refund_amount"')[1].split("</label>")[0]


def test_exchange_with_a_store_credit_note(admin_client: Client, place_order, variant: Variant) -> None:
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)  # a return is of what reached the buyer
    form = {f"qty_{line.public_id}": "1", "reason": "Troca de tamanho", "condition": "novo", "restock": "on"}
    both = admin_client.post(_action(order, "return"), {**form, "refund_amount": "10", "credit_amount": "10"})
    assert "Escolha reembolso ou vale-troca, não os dois." in both.content.decode()
    assert order.adjustments.count() == 0
    assert admin_client.post(_action(order, "return"), {**form, "credit_amount": "30,00"}).status_code == 302
    credit = Adjustment.objects.get(order=order, type="credit")
    assert (credit.amount, credit.status, credit.description) == (
        -3000,
        "completed",
        "Vale-troca: Troca de tamanho",
    )
    assert not Adjustment.objects.filter(order=order, type="refund").exists()
    permalink = Client().get(f"/orders/{order.permalink_token}").content.decode()
    assert "R$ 30,00" in permalink and "Vale-troca: Troca de tamanho" in permalink
    # and BCP get_order shows it like any adjustment
    from orders.selectors import order_bcp_payload, order_for_bcp

    kinds = [a["type"] for a in order_bcp_payload(order_for_bcp(order.public_id))["adjustments"]]
    assert kinds == ["return", "credit"]


def _one_shirt_returned_damaged(admin_client: Client, place_order) -> Order:
    """A delivered order of two shirts, one of them returned by staff ("Wrong size", condition "avariado")."""
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    form = {f"qty_{line.public_id}": "1", "reason": "Wrong size", "condition": "avariado", "restock": "on"}
    assert admin_client.post(_action(order, "return"), form).status_code == 302
    return order


def test_a_returns_condition_reads_in_the_buyers_language(admin_client: Client, place_order, variant: Variant) -> None:
    """Merchant walk: an English buyer page read "(Wrong size (estado: Novo, na embalagem))", Portuguese in nested
    parentheses; rows stored that way before the condition was data read the same as new ones."""
    order = _one_shirt_returned_damaged(admin_client, place_order)
    Adjustment.objects.create(
        order=order, type="return", status="completed", description="Too big (estado: Usado, em bom estado)",
        occurred_at=timezone.now(),
    )  # fmt: skip
    buyer = Client()
    buyer.get(f"/orders/{order.permalink_token}?lang=en")  # the site's language choice, then the clean link
    english = buyer.get(f"/orders/{order.permalink_token}").content.decode()
    assert "(Wrong size; item condition: Damaged)" in english
    assert "(Too big; item condition: Used, in good condition)" in english
    assert "estado" not in english
    portuguese = Client().get(f"/orders/{order.permalink_token}").content.decode()
    assert "(Wrong size; estado dos itens: Avariado)" in portuguese
    assert "(Too big; estado dos itens: Usado, em bom estado)" in portuguese


def test_a_returns_condition_is_in_the_bcp_adjustments_description(
    admin_client: Client, place_order, variant: Variant
) -> None:
    """BCP §7 / BCP-ORD-09: since the condition became data (orders 0033) the BCP order's return adjustment said only
    "Wrong size", its "(estado: …)" gone. The adjustment schema has no member for it; `description` (its one human
    text) says it again, in pt-BR whatever language rendered the snapshot that REST, MCP, A2A and webhooks send."""
    order = _one_shirt_returned_damaged(admin_client, place_order)

    order.refresh_from_db()
    with translation.override("en"):
        rendered = order_bcp_payload(order_for_bcp(order.public_id))
    stored = [a["description"] for a in json.loads(order.bcp_json)["adjustments"] if a["type"] == "return"]
    assert stored == ["Wrong size (estado: Avariado)"]
    assert [a["description"] for a in rendered["adjustments"] if a["type"] == "return"] == stored
