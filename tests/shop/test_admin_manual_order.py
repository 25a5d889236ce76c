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
        ({"qty_0": "0"}, "qty_0", "Certifique-se que este valor seja maior ou igual a 1."),
        ({"qty_0": "50"}, "sku_0", "Só temos 10 unidades de Produto SKU-CAFE-500G"),
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
    # then the form comes back saying which product is sold out, and nothing was created
    assert response.status_code == 200
    errors = re.search(r'<ul class="errorlist nonfield">(.*?)</ul>', response.content.decode(), re.S)
    assert errors is not None and errors.group(1) == "<li>Produto SKU-CAFE-500G está esgotado.</li>"
    assert (Order.objects.count(), Checkout.objects.count()) == (0, 0)


def test_dashboard_links_to_the_manual_sale(admin_client: Client) -> None:
    assert 'href="/admin/venda-manual/"' in admin_client.get("/admin/").content.decode()
    assert Client().get(URL).status_code == 302  # staff only
