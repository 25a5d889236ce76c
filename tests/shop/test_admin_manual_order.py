"""Manual sales (WhatsApp, counter) entered in the admin go through the checkout engine: stock moves as
for any order; the buyer pays on the storefront Pix page, or staff record a payment made elsewhere."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from django.core import mail
from django.test import Client

from orders.models import Order, OrderEvent
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_latest_for_reference
from shop.models import Checkout, Variant
from tests.shop.checkout_factories import make_coupon, make_location, make_shipping, make_variant

pytestmark = pytest.mark.django_db
URL = "/admin/venda-manual/"


@pytest.fixture
def shop_setup() -> dict[str, object]:
    variant = make_variant(price=4290, stock=10)
    make_shipping()
    location = make_location()
    make_coupon("BALCAO10", kind="fixed", amount=1000)
    return {"variant": variant, "location": location}


def _form(shop_setup: dict[str, object], **changes: str) -> dict[str, str]:
    form = {
        "first_name": "Maria",
        "last_name": "Silva",
        "email": "maria@example.com.br",
        "phone": "(11) 98765-4321",
        "tax_id": "",
        "delivery": "pickup",
        "location": shop_setup["location"].public_id,
        "option": "",
        "sku_0": "SKU-CAFE-500G",
        "qty_0": "2",
        "coupon": "BALCAO10",
        "payment": "paid",
        "paid_method": "dinheiro",
        "paid_reason": "Pago no balcão",
    }
    form.update(changes)
    return form


def test_sale_marked_paid_places_a_paid_order_and_moves_stock(
    admin_client: Client, shop_setup: dict[str, object], django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(URL, _form(shop_setup))
    assert response.status_code == 302, response.content.decode()[:3000]
    order = Order.objects.get()
    assert response["Location"] == f"/admin/orders/order/{order.pk}/change/"
    assert (order.payment_status, order.payment_type, order.total_amount, order.paid_amount) == (
        "paid",
        "manual",
        7580,  # 2 × 42,90 − 10,00 (cupom), retirada grátis
        7580,
    )
    assert (order.fulfillment_method, order.buyer_email) == ("pickup", "maria@example.com.br")
    assert Variant.objects.get(sku="SKU-CAFE-500G").stock == 8
    event = OrderEvent.objects.get(order=order, kind="payment_confirmed")
    assert event.message == "Pagamento registrado pela loja (dinheiro): R$ 75,80 — Pago no balcão"
    assert event.actor == "admin"
    assert mail.outbox[-1].to == ["maria@example.com.br"]
    # like any order: the permalink page shows it
    assert Client().get(f"/orders/{order.permalink_token}").status_code == 200


def test_sale_with_pix_link_is_paid_on_the_storefront_pix_page(
    admin_client: Client, shop_setup: dict[str, object], django_capture_on_commit_callbacks
) -> None:
    response = admin_client.post(URL, _form(shop_setup, payment="pix", paid_method="", paid_reason="", coupon=""))
    assert response.status_code == 200
    checkout = Checkout.objects.get()
    assert checkout.status == "complete_in_progress"
    assert f"/checkout/{checkout.public_id}/pix" in response.content.decode()
    assert Variant.objects.get(sku="SKU-CAFE-500G").stock == 8  # reserved while the Pix is awaited
    # the link shown to the merchant opens the Pix page for the buyer (it carries the signed token)
    shown = re.search(r'value="(http[^"]+/checkout/[^"]+/pix\?t=[^"]+)"', response.content.decode())
    assert shown is not None
    parts = urlsplit(shown.group(1))
    buyer_page = Client().get(f"{parts.path}?{parts.query}")
    assert buyer_page.status_code == 200
    assert Client().get(f"/checkout/{checkout.public_id}/pix").status_code == 404  # the id alone opens nothing
    charge = pix_charge_latest_for_reference(checkout.public_id)
    assert charge.amount == 8580
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=charge.txid, options=PayOptions())
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert (order.payment_status, order.payment_type, order.paid_amount) == ("paid", "pix", 8580)
    assert shown.group(1).startswith(f"http://127.0.0.1:8000/checkout/{checkout.public_id}/pix?t=")


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"sku_0": "", "qty_0": ""}, "sku_0", "Escolha pelo menos um produto."),
        # a line's quantity problems show on its line (product and quantity side by side)
        ({"qty_0": "0"}, "sku_0", "Certifique-se que este valor seja maior ou igual a 1."),
        ({"qty_0": "50"}, "sku_0", "Só há 10 em estoque."),
        ({"sku_0": "NAO-EXISTE"}, "sku_0", "Produto “NAO-EXISTE” não encontrado"),
        ({"email": "maria@"}, "email", "Insira um endereço de email válido."),
        ({"location": ""}, "location", "Escolha o local de retirada."),
        ({"delivery": "shipping"}, "postal_code", "Obrigatório para envio."),
        ({"paid_reason": ""}, "paid_reason", "Conte o motivo (ex.: pago em dinheiro no balcão)."),
        ({"coupon": "NAOEXISTE"}, "coupon", "NAOEXISTE"),
    ],
)
def test_bad_input_is_refused_on_the_field_and_nothing_is_created(
    admin_client: Client, shop_setup: dict[str, object], changes: dict[str, str], field: str, message: str
) -> None:
    response = admin_client.post(URL, _form(shop_setup, **changes))
    assert response.status_code == 200
    html = response.content.decode()
    block = re.search(rf'<div class="form-row field-{field}">(.*?)(?:<div class="form-row|</fieldset>)', html, re.S)
    assert block is not None and message in block.group(1), html[html.find("errornote") :][:3000]
    assert Order.objects.count() == 0
    assert Variant.objects.get(sku="SKU-CAFE-500G").stock == 10
    assert set(Checkout.objects.values_list("status", flat=True)) <= {"canceled"}  # none left open


def test_a_sold_out_product_is_refused_on_its_field_not_a_500(
    admin_client: Client, shop_setup: dict[str, object]
) -> None:
    # given the only product of the sale sold out (the engine creates no checkout at all then, BCP §4.3)
    Variant.objects.filter(sku="SKU-CAFE-500G").update(stock=0)
    # when staff register the sale
    response = admin_client.post(URL, _form(shop_setup))
    # then the form comes back saying, on its line, that the product is sold out, and nothing was created
    assert response.status_code == 200
    errors = re.search(r'<ul class="errorlist" id="id_sku_0_error">(.*?)</ul>', response.content.decode(), re.S)
    assert errors is not None and errors.group(1) == "<li>Esgotado.</li>"
    assert (Order.objects.count(), Checkout.objects.count()) == (0, 0)


def test_dashboard_links_to_the_manual_sale(admin_client: Client) -> None:
    assert 'href="/admin/venda-manual/"' in admin_client.get("/admin/").content.decode()
    assert Client().get(URL).status_code == 302  # staff only


def _field_errors(html: str) -> dict[str, str]:
    """{field: its error text} as the page shows them under each field."""
    found = re.findall(r'<ul class="errorlist" id="id_(\w+)_error"><li>(.*?)</li>', html)
    return dict(found)


def test_every_error_is_shown_in_one_round_each_under_its_field(
    admin_client: Client, shop_setup: dict[str, object]
) -> None:
    # given a sale with a bad phone, a bad CPF, a CEP of another UF, a missing number and the note left empty
    form = _form(
        shop_setup,
        phone="1234",
        tax_id="111.111.111-12",
        delivery="shipping",
        option="pac",
        postal_code="20040-002",
        street="Av. Paulista",
        number="",
        city="São Paulo",
        state="SP",
        paid_reason="",
        qty_0="50",
    )
    response = admin_client.post(URL, form)
    html = response.content.decode()
    # then every problem comes back at once, each under its own field (the CEP's under CEP, not "Rua")
    assert _field_errors(html) == {
        "qty_0": "Só há 10 em estoque.",
        "phone": "Celular inválido: informe DDD e número, ex.: (11) 98765-4321.",
        "tax_id": "CPF ou CNPJ inválido: confira os dígitos (11 do CPF ou 14 do CNPJ).",
        "number": "Obrigatório para envio.",
        "postal_code": "Este CEP é de RJ, não de SP.",
        "paid_reason": "Conte o motivo (ex.: pago em dinheiro no balcão).",
    }
    assert "Corrija os 6 erros abaixo." in html
    assert (Order.objects.count(), Checkout.objects.count()) == (0, 0)


def test_the_page_hints_the_phone_as_elsewhere_and_marks_the_conditional_fields(admin_client: Client) -> None:
    html = admin_client.get(URL).content.decode()
    assert 'placeholder="(11) 98765-4321"' in html and "Ex.: (11) 98765-4321" in html
    assert "+5511" not in html
    note = re.search(r'<label for="id_paid_reason"[^>]*>(.*?)</label>', html, re.S)
    assert note is not None and "(obrigatório)" in note.group(1)
    # each choice's fields sit in a section the page shows only for that choice
    for group, rule in (
        ("delivery-pickup", "delivery=pickup"),
        ("payment-paid", "payment=paid"),
        ("payment-pix_due", "payment=pix_due"),
        ("delivery-shipping", "delivery=shipping"),
    ):
        assert f'id="group-{group}" data-when="{rule}"' in html


def test_a_sale_with_more_than_four_lines_found_by_sku(admin_client: Client, shop_setup: dict[str, object]) -> None:
    skus = ["SKU-CAFE-500G"] + [make_variant(sku=f"LINHA-{i}", price=1000 + i, stock=5).sku for i in range(5)]
    form = _form(shop_setup, coupon="")
    for row, sku in enumerate(skus):
        form[f"sku_{row}"], form[f"qty_{row}"] = sku.lower() if row == 5 else sku, "1"  # case as typed
    response = admin_client.post(URL, form)
    assert response.status_code == 302, _field_errors(response.content.decode())
    order = Order.objects.get()
    assert sorted(order.lines.values_list("sku", flat=True)) == sorted(skus)
