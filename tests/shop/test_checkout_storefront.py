"""Storefront flow through the Django test client: product → cart → one-page checkout → Pix → order."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from django.test import Client

from orders.models import Order
from payments.selectors import pix_charge_latest_for_reference
from shop.cart import cart_items
from shop.checkout.selectors import checkout_continue_url
from shop.checkout.services import checkout_create
from shop.checkout.types import CheckoutInput, LineInput
from shop.models import Checkout, PickupLocation, ShippingMethod, Variant
from tests.shop.checkout_factories import full_input, make_coupon, make_location, make_shipping, make_variant

pytestmark = pytest.mark.django_db

CONTACT = {
    "email": "ana@example.com.br",
    "first_name": "Ana",
    "last_name": "Souza",
    "phone": "(11) 98765-4321",
    "tax_id": "529.982.247-25",
}
ADDRESS = {
    "method": "shipping",
    "cep": "01310-100",
    "street": "Rua das Flores",
    "number": "123",
    "complement": "Apto 45",
    "neighborhood": "Jardim Paulista",
    "city": "São Paulo",
    "uf": "SP",
}


@pytest.fixture
def shop_ready():
    variant = make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    location = make_location()
    make_coupon("BEMVINDO10", percent=10)
    return variant, location


def errors(response) -> dict[str, str]:
    html = response.content.decode()
    return {m.group(1): m.group(2) for m in re.finditer(r'data-testid="error-(\w+)">([^<]*)<', html)}


def start_checkout(client) -> str:
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "2"})
    response = client.get("/checkout/")
    assert response.status_code == 302
    return response["Location"].rsplit("/", 1)[1]


def test_add_to_cart_and_cart_page(client, shop_ready):
    # when the product page form posts sku and quantity
    response = client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "2"})
    assert (response.status_code, response["Location"]) == (302, "/carrinho/")
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    # then the cart shows the line and the header counts units
    page = client.get("/carrinho/")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-testid="cart-count">3<' in html
    assert 'data-testid="cart-subtotal">R$ 128,70<' in html


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ({"sku": "NOPE", "quantity": "1"}, "Produto indisponível."),
        ({"sku": "SKU-CAFE-500G", "quantity": "0"}, "A quantidade deve estar entre 1 e 99."),
        ({"sku": "SKU-CAFE-500G", "quantity": "abc"}, "Quantidade inválida."),
        ({}, "Produto indisponível."),
    ],
)
def test_bad_add_to_cart_is_a_clear_error_never_a_500(client, shop_ready, data, text):
    response = client.post("/carrinho/adicionar", data, follow=True)
    assert response.status_code == 200
    assert text in response.content.decode()
    assert cart_items(client.session) == {}


@pytest.mark.parametrize("typed", ["150", "0"])
def test_a_refused_quantity_stays_in_the_product_page_field(client, shop_ready, typed):
    """Browser walk: after "A quantidade deve estar entre 1 e 99." the product page's field read 1 again, not what
    the buyer typed (on the variant they chose)."""
    variant, _ = shop_ready
    page = f"/produtos/{variant.product.slug}/?sku={variant.sku}"
    response = client.post(
        "/carrinho/adicionar", {"sku": variant.sku, "quantity": typed}, HTTP_REFERER=f"http://testserver{page}"
    )
    assert response["Location"] == f"http://testserver{page}&quantidade={typed}"
    html = client.get(response["Location"]).content.decode()
    assert "A quantidade deve estar entre 1 e 99." in html
    assert f'<input id="qty" type="number" name="quantity" value="{typed}"' in html
    assert cart_items(client.session) == {}
    # the bare page (the one every buyer shares) still starts at 1
    bare = client.get(f"/produtos/{variant.product.slug}/").content.decode()
    assert '<input id="qty" type="number" name="quantity" value="1"' in bare


def test_cart_change_remove_and_coupon(client, shop_ready):
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "2"})
    client.post("/carrinho/alterar", {"sku": "SKU-CAFE-500G", "quantity": "4"})
    assert cart_items(client.session) == {"SKU-CAFE-500G": 4}
    client.post("/carrinho/cupom", {"code": "bemvindo10"})
    html = client.get("/carrinho/").content.decode()
    assert "Cupom BEMVINDO10 aplicado: -R$ 17,16." in html
    client.post("/carrinho/cupom", {"code": "NADA"})
    assert "O cupom NADA não foi encontrado." in client.get("/carrinho/").content.decode()
    client.post("/carrinho/alterar", {"sku": "SKU-CAFE-500G", "remove": "1"})
    assert cart_items(client.session) == {}


def test_empty_cart_checkout_goes_back_to_cart(client, shop_ready):
    response = client.get("/checkout/")
    assert (response.status_code, response["Location"]) == (302, "/carrinho/")


def test_checkout_form_shows_every_error_next_to_its_field(client, shop_ready):
    checkout_id = start_checkout(client)
    first = client.get(f"/checkout/{checkout_id}")
    assert first.status_code == 200
    assert errors(first) == {}  # a fresh checkout does not shout before the first submit
    # when the buyer submits an empty form
    response = client.post(f"/checkout/{checkout_id}", {"action": "update", "method": "shipping"})
    assert response.status_code == 200
    assert errors(response) == {
        "email": "Informe o e-mail.",
        "first_name": "Informe o nome.",
        "last_name": "Informe o sobrenome.",
        "cep": "Informe o endereço de entrega.",
    }
    # when the values are wrong
    bad = {
        "email": "ana@",
        "first_name": "Ana",
        "last_name": "Souza",
        "phone": "123",
        "tax_id": "111.111.111-11",
        "method": "shipping",
        "cep": "1234",
        "street": "",
        "city": "",
    }
    response = client.post(f"/checkout/{checkout_id}", {"action": "update", **bad})
    assert errors(response) == {
        "email": "Informe um e-mail válido, como nome@exemplo.com.br.",
        "phone": "Celular inválido: informe DDD e número, como (11) 98765-4321.",
        "tax_id": "CPF ou CNPJ inválido: confira os dígitos (11 do CPF ou 14 do CNPJ).",
        "cep": "CEP inválido: use o formato 00000-000.",
        "street": "Informe a rua.",
        "city": "Informe a cidade.",
    }
    # when the UF does not match the CEP the checkout already has (a new CEP brings its own UF)
    client.post(f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **ADDRESS})
    response = client.post(f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **ADDRESS, "uf": "RJ"})
    assert errors(response) == {"uf": "A UF não corresponde ao CEP (o CEP é de SP)."}
    # when the address is right but no option is chosen yet
    response = client.post(f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **ADDRESS})
    assert errors(response) == {"shipping_option": "Escolha a forma de entrega."}
    html = response.content.decode()
    assert 'value="pac"' in html and 'value="sedex"' in html and 'value="motoboy"' in html
    # and a bad coupon is reported next to the coupon field
    response = client.post(
        f"/checkout/{checkout_id}",
        {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "pac", "coupon": "NADA"},
    )
    assert errors(response) == {"coupon": "O cupom NADA não foi encontrado."}


def test_pay_too_early_stays_on_the_form(client, shop_ready):
    checkout_id = start_checkout(client)
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", **CONTACT})
    assert response.status_code == 200
    assert errors(response) == {"cep": "Informe o endereço de entrega."}
    assert Checkout.objects.get(public_id=checkout_id).status == "incomplete"


def test_storefront_flow_to_paid_order(client, shop_ready, django_capture_on_commit_callbacks, settings, mailoutbox):
    settings.DEBUG = True  # the sandbox "pay" button is a development tool
    # given a cart with 2 coffees and the buyer's data with SEDEX and a coupon
    checkout_id = start_checkout(client)
    form = {**CONTACT, **ADDRESS, "shipping_option": "sedex", "coupon": "BEMVINDO10"}
    response = client.post(f"/checkout/{checkout_id}", {"action": "update", **form})
    assert errors(response) == {}
    html = response.content.decode()
    assert 'data-testid="total">R$ 110,12<' in html  # 85,80 - 8,58 + 32,90
    assert Checkout.objects.get(public_id=checkout_id).status == "ready_for_complete"
    # when the buyer clicks "Pagar com Pix"
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", **form})
    assert (response.status_code, response["Location"]) == (302, f"/checkout/{checkout_id}/pix")
    assert Variant.objects.get(sku="SKU-CAFE-500G").stock == 8
    # then the Pix page shows the QR code, copia-e-cola, amount and the sandbox button
    page = client.get(f"/checkout/{checkout_id}/pix")
    html = page.content.decode()
    charge = pix_charge_latest_for_reference(checkout_id)
    assert page.status_code == 200
    assert "<svg" in html and charge.br_code in html
    assert 'data-testid="pix-amount">R$ 110,12<' in html
    assert f'action="/_sandbox/psp/cob/{charge.txid}/pay"' in html
    # The README's demo path names the button as the page shows it (QA: it said "Pagar no sandbox").
    button = re.search(r'data-testid="sandbox-pay-form">.*?<button[^>]*>([^<]+)</button>', html, re.S)
    assert button is not None and button.group(1) == "Pagar (sandbox)"
    assert f'**"{button.group(1)}"**' in (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert client.get(f"/checkout/{checkout_id}/status").json() == {
        "status": "complete_in_progress",
        "order_url": "",
        "pix_expired": False,
    }
    # when the sandbox bank pays (form post from the Pix page)
    with django_capture_on_commit_callbacks(execute=True):
        paid = client.post(f"/_sandbox/psp/cob/{charge.txid}/pay", {"next": f"/checkout/{checkout_id}/pix"})
    assert paid.status_code == 302
    # then the status endpoint points at the order and the Pix page moves there
    order = Order.objects.get(checkout_id=checkout_id)
    order_path = order.permalink_url.replace("http://127.0.0.1:8000", "")
    assert client.get(f"/checkout/{checkout_id}/status").json() == {
        "status": "completed",
        "order_url": order_path,
        "pix_expired": False,
    }
    final = client.get(f"/checkout/{checkout_id}/pix")
    assert (final.status_code, final["Location"]) == (302, order_path)
    assert cart_items(client.session) == {}
    assert client.get(f"/checkout/{checkout_id}")["Location"] == order_path
    # and the buyer got the order e-mail with the permalink (BCP-CHK-24)
    assert [m.to for m in mailoutbox] == [["ana@example.com.br"]]
    assert order.permalink_url in mailoutbox[0].body


def test_pickup_flow_is_ready(client, shop_ready):
    _, location = shop_ready
    checkout_id = start_checkout(client)
    response = client.post(
        f"/checkout/{checkout_id}",
        {"action": "update", **CONTACT, "method": "pickup", "pickup_location": location.public_id},
    )
    assert errors(response) == {}
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.status, checkout.fulfillment_type, checkout.selected_option_id) == (
        "ready_for_complete",
        "pickup",
        "retirada",
    )
    assert 'data-testid="total">R$ 85,80<' in response.content.decode()


def test_the_only_pickup_store_is_chosen_and_shown_with_its_complement(client, shop_ready):
    """QA walk (new merchant, one store): "Retirar na loja" then "Pagar com Pix" answered "Escolha a loja para
    retirada" (the only store was not chosen), and the store's room ("sala 804") and preparation time were missing
    from the option, though the order page shows them."""
    _, location = shop_ready
    PickupLocation.objects.filter(pk=location.pk).update(complement="sala 804", preparation_days=2)
    checkout_id = start_checkout(client)
    html = client.get(f"/checkout/{checkout_id}").content.decode()
    radio = re.search(r'<input type="radio" name="pickup_location"[^>]*>', html)
    assert radio is not None and "checked" in radio.group(0)
    assert "Avenida Paulista, 1000 — sala 804 — Bela Vista, São Paulo/SP" in html
    assert "pronto em 2 dias úteis" in html
    # with a second store the buyer chooses (nothing is pre-checked)
    make_location("Loja Centro")
    html = client.get(f"/checkout/{checkout_id}").content.decode()
    assert not re.search(r'<input type="radio" name="pickup_location"[^>]*checked', html)


def test_pickup_with_the_merchants_own_method_code_on_the_first_submit(client, shop_ready):
    """QA walk (a new merchant named her pickup method "retirada-atelie", not the demo's "retirada"): the buyer's
    first submit with "Retirar na loja" and the store answered "Opção de entrega indisponível para este destino",
    and nothing typed (name, phone, CPF) was kept."""
    _, location = shop_ready
    ShippingMethod.objects.filter(kind="pickup").update(code="retirada-atelie", title="Retirar no ateliê")
    checkout_id = start_checkout(client)
    response = client.post(
        f"/checkout/{checkout_id}",
        {"action": "shipping", **CONTACT, "method": "pickup", "pickup_location": location.public_id},
    )
    assert errors(response) == {}
    html = response.content.decode()
    assert "Opção de entrega indisponível" not in html
    # and the summary names the pickup, not a "Frete" (QA walk: "Frete — Retirar no ateliê: Grátis")
    assert "<dt>Retirar no ateliê</dt>" in html and "Frete — Retirar no ateliê" not in html
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.status, checkout.fulfillment_type, checkout.selected_option_id) == (
        "ready_for_complete",
        "pickup",
        "retirada-atelie",
    )
    assert checkout.buyer_first_name == "Ana"


def test_trying_pickup_keeps_the_typed_address_for_going_back_to_delivery(client, shop_ready):
    # given a checkout with the address typed and SEDEX chosen
    _, location = shop_ready
    checkout_id = start_checkout(client)
    client.post(f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "sedex"})
    # when the buyer switches to store pickup (the address inputs are still in the posted form, hidden)
    pickup = {**CONTACT, **ADDRESS, "method": "pickup", "pickup_location": location.public_id}
    response = client.post(f"/checkout/{checkout_id}", {"action": "shipping", **pickup})
    # then pickup is what is priced, and the delivery panel still holds the address (QA walk: all of it was emptied)
    html = response.content.decode()
    assert 'data-testid="total">R$ 85,80<' in html
    assert Checkout.objects.get(public_id=checkout_id).fulfillment_type == "pickup"
    for value in ("Rua das Flores", "Apto 45", "Jardim Paulista", 'value="123"'):
        assert value in html
    assert re.search(r'name="cep"[^>]*value="01310-?100"|value="01310-?100"[^>]*name="cep"', html)


def test_a_refused_choice_keeps_everything_typed_and_says_why_next_to_it(client, shop_ready):
    """QA walk (BCP-CHK-20 rejection of a selection): one thing the engine refused (here the pickup store, closed
    while the buyer typed) refused the whole update; the page came back with "Informe o nome" beside "Ana" (the
    stored, empty state's messages), the refusal itself was not shown, and a reload had lost name, phone, CPF."""
    other = make_location("Loja Centro")
    checkout_id = start_checkout(client)
    other.active = False
    other.save()  # closed by the merchant after the page showed it
    posted = {**CONTACT, **ADDRESS, "method": "pickup", "pickup_location": other.public_id}
    for action in ("shipping", "update"):
        response = client.post(f"/checkout/{checkout_id}", {"action": action, **posted})
        # then the refusal is next to the store choice, and nothing else is reported as missing
        assert response.status_code == 200
        assert errors(response) == {
            "pickup_location": "A loja de retirada Loja Centro não está mais disponível; escolha outra."
        }
        # and every typed field is in the form again
        html = response.content.decode()
        for value in ("Ana", "Souza", "(11) 98765-4321", "529.982.247-25", "Rua das Flores", "Apto 45", "Jardim"):
            assert f'value="{value}' in html, value
    # and the contact was saved: a reload (or an abandoned-cart reminder) still has it
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.buyer_first_name, checkout.buyer_last_name, checkout.buyer_email) == (
        "Ana",
        "Souza",
        "ana@example.com.br",
    )
    assert 'value="Ana"' in client.get(f"/checkout/{checkout_id}").content.decode()


def test_the_only_delivery_option_is_chosen_for_the_buyer(client, shop_ready):
    """QA walk (a new shop with one Correios rate): "Calcular frete" listed the rate unchosen, the summary's total
    left the freight out, and "Pagar com Pix" answered "Escolha a forma de entrega". The only option is chosen for
    the buyer; two or more still wait for the buyer's choice."""
    methods = {method.code: method for method in ShippingMethod.objects.all()}
    for code in ("sedex", "motoboy"):
        methods[code].active = False
        methods[code].save()  # save(), not update(): the freight table is cached until a method is saved
    checkout_id = start_checkout(client)
    response = client.post(f"/checkout/{checkout_id}", {"action": "shipping", **CONTACT, **ADDRESS})
    html = response.content.decode()
    assert errors(response) == {}
    assert re.search(r'<input type="radio" name="shipping_option" value="pac"\s+checked>', html)
    assert 'data-testid="total">R$ 104,70<' in html  # 2 × R$ 42,90 + PAC R$ 18,90
    assert Checkout.objects.get(public_id=checkout_id).selected_option_id == "pac"
    # with SEDEX back there are two: none is chosen for the buyer
    methods["sedex"].active = True
    methods["sedex"].save()
    second = Client()
    other = start_checkout(second)
    response = second.post(f"/checkout/{other}", {"action": "shipping", **CONTACT, **ADDRESS})
    assert "checked>" not in response.content.decode().split('data-testid="shipping-options"')[1].split("</div>")[0]
    assert Checkout.objects.get(public_id=other).selected_option_id == ""


def test_changing_cep_drops_an_option_the_new_cep_lacks(client, shop_ready):
    checkout_id = start_checkout(client)
    client.post(f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "motoboy"})
    rio = {**ADDRESS, "cep": "20040-002", "uf": "RJ", "city": "Rio de Janeiro", "shipping_option": "motoboy"}
    response = client.post(f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **rio})
    assert errors(response) == {"shipping_option": "Escolha a forma de entrega."}
    assert Checkout.objects.get(public_id=checkout_id).ship_cep == "20040-002"


def test_continue_url_resumes_an_agent_checkout(client, shop_ready, settings):
    # given a checkout an agent created over BCP
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),)), platform_id="plat_x")
    checkout_id = result.checkout.public_id
    # when the buyer opens the continue_url (signed: the id alone opens nothing, tests/shop/test_checkout_access.py)
    continue_url = checkout_continue_url(result.checkout)
    response = client.get(continue_url.removeprefix(settings.BCP_PUBLIC_URL))
    # then the same checkout is shown, with its line, and can be completed
    assert response.status_code == 200
    assert "1 × Café especial 500 g" in response.content.decode()
    response = client.post(
        f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "pac"}
    )
    assert Checkout.objects.get(public_id=checkout_id).status == "ready_for_complete"


def test_a_checkout_escalated_because_agents_may_not_complete_is_paid_by_the_buyer(client, shop_ready, settings):
    """The agent's checkout was handed to the buyer (`requires_escalation`, BCP-CHK-08) because the store lets no
    agent complete: the buyer's page does not repeat the agents' message, and "Pagar com Pix" charges it."""
    data = replace(full_input(LineInput("SKU-CAFE-500G", 1)), caller_may_complete=False)  # buyer and address given
    result = checkout_create(data=data, platform_id="plat_x")
    assert result.checkout.status == "requires_escalation"
    checkout_id = result.checkout.public_id
    html = client.get(checkout_continue_url(result.checkout).removeprefix(settings.BCP_PUBLIC_URL)).content.decode()
    assert "1 × Café especial 500 g" in html and "agentes" not in html
    client.post(f"/checkout/{checkout_id}", {"action": "pay", **CONTACT, **ADDRESS, "shipping_option": "pac"})
    assert Checkout.objects.get(public_id=checkout_id).status == "complete_in_progress"
    assert pix_charge_latest_for_reference(checkout_id) is not None


def test_unknown_and_closed_checkouts(client, shop_ready):
    assert client.get("/checkout/checkout_nope").status_code == 404
    assert client.get("/checkout/checkout_nope/status").status_code == 404
    checkout_id = start_checkout(client)
    Checkout.objects.filter(public_id=checkout_id).update(status="canceled")
    assert client.get(f"/checkout/{checkout_id}").status_code == 410
    # a new visit to /checkout/ starts a fresh checkout from the cart
    response = client.get("/checkout/")
    assert response["Location"] != f"/checkout/{checkout_id}"


def test_policy_pages(client):
    assert "Termos de uso" in client.get("/termos").content.decode()
    assert "LGPD" in client.get("/privacidade").content.decode()


def test_the_default_shipping_policy_counts_the_days_as_the_checkout_does(client):
    """QA walk of a new shop: /entrega and /termos said the days count "a partir da confirmação do pagamento"
    while the checkout's days are the carrier's, counted from the posting (the store's prazo de postagem first)
    or, with none, from the shipment."""
    from shop.store.services import store_row

    for path in ("/entrega", "/termos"):
        html = client.get(path).content.decode()
        assert "Os prazos de entrega mostrados na compra contam a partir do envio do pedido, em dias úteis." in html
        assert "a partir da confirmação do pagamento, em dias úteis" not in html
    row = store_row()
    row.handling_days = 2
    row.save()
    for path in ("/entrega", "/termos"):
        assert (
            "contam a partir da postagem, em dias úteis; a loja posta em até 2 dias úteis após a confirmação do "
            "pagamento. Na retirada, apresente o número do pedido"
        ) in client.get(path).content.decode()


@pytest.mark.parametrize(
    ("issuing", "said"),
    [("paid", "CPF (exigido para emitir a nota fiscal)"), ("off", "CPF (opcional)")],
)
def test_the_privacy_policy_says_what_the_checkout_asks_of_the_cpf(client, settings, issuing, said):
    """Issue 33: the policy said "CPF (opcional)" while the checkout required it for the NF-e."""
    settings.FISCAL_ISSUE_ON = issuing
    html = client.get("/privacidade").content.decode()
    assert said in html
    assert ("CPF (opcional)" in html) is (issuing == "off")


def test_expired_pix_leads_back_to_the_checkout(client, shop_ready):
    from datetime import timedelta

    from django.utils import timezone

    from payments.models import PixCharge
    from shop.checkout.services import checkout_expire_due

    checkout_id = start_checkout(client)
    form = {**CONTACT, **ADDRESS, "shipping_option": "pac"}
    client.post(f"/checkout/{checkout_id}", {"action": "update", **form})
    client.post(f"/checkout/{checkout_id}", {"action": "pay", **form})
    PixCharge.objects.filter(reference=checkout_id).update(expires_at=timezone.now() - timedelta(minutes=10))
    page = client.get(f"/checkout/{checkout_id}/pix").content.decode()
    assert "Este Pix expirou sem pagamento." in page and 'data-testid="pix-qr"' not in page
    assert checkout_expire_due() == 0  # reading the page already lapsed it: no beat needed (issue 12)
    assert client.get(f"/checkout/{checkout_id}/status").json() == {
        "status": "incomplete",
        "order_url": "",
        "pix_expired": True,
    }
    assert "Gerar novo Pix" in client.get(f"/checkout/{checkout_id}/pix").content.decode()
    html = client.get(f"/checkout/{checkout_id}").content.decode()
    assert "O Pix expirou sem pagamento; escolha o Pix de novo." in html
    # paying again issues a fresh charge
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", **form})
    assert response["Location"] == f"/checkout/{checkout_id}/pix"
    assert PixCharge.objects.filter(reference=checkout_id, status="active").count() == 1


def test_the_status_poll_itself_notices_the_expiry(client, shop_ready, django_assert_max_num_queries):
    """Issue 33, major 4: the open Pix page only polls; the poll must learn of the expiry with no beat."""
    from datetime import timedelta

    from django.utils import timezone

    from payments.models import PixCharge, SandboxCob

    checkout_id = start_checkout(client)
    form = {**CONTACT, **ADDRESS, "shipping_option": "pac"}
    client.post(f"/checkout/{checkout_id}", {"action": "update", **form})
    client.post(f"/checkout/{checkout_id}", {"action": "pay", **form})
    waiting = client.get(f"/checkout/{checkout_id}/status").json()
    assert (waiting["status"], waiting["pix_expired"]) == ("complete_in_progress", False)
    # when the charge's time runs out and the page polls again (nobody reloads the page)
    PixCharge.objects.filter(reference=checkout_id).update(expires_at=timezone.now() - timedelta(seconds=1))
    polled = client.get(f"/checkout/{checkout_id}/status").json()
    # then the poll reports it: the checkout is back to the form, the charge expired and removed at the PSP,
    # the stock given back
    assert polled == {"status": "incomplete", "order_url": "", "pix_expired": True}
    charge = PixCharge.objects.get(reference=checkout_id)
    assert (charge.status, charge.psp_removed) == ("expired", True)
    assert SandboxCob.objects.get(txid=charge.txid).status == "REMOVIDA_PELO_USUARIO_RECEBEDOR"
    assert Variant.objects.get(sku="SKU-CAFE-500G").stock == 10
    # and a poll before the expiry stays a cheap read
    client.post(f"/checkout/{checkout_id}", {"action": "pay", **form})
    with django_assert_max_num_queries(6):
        assert client.get(f"/checkout/{checkout_id}/status").json()["pix_expired"] is False


def test_from_product_page_to_ready_checkout(client, shop_ready):
    # given the product page with its add-to-cart form
    page = client.get("/produtos/sku-cafe-500g/").content.decode()
    assert 'action="/carrinho/adicionar"' in page and 'name="sku" value="SKU-CAFE-500G"' in page
    # when the buyer adds, goes to checkout and fills everything once the options are shown
    checkout_id = start_checkout(client)
    client.post(f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **ADDRESS})
    filled = {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "pac"}
    response = client.post(f"/checkout/{checkout_id}", filled)
    # then the checkout is ready with the engine's totals on the summary
    assert errors(response) == {}
    assert Checkout.objects.get(public_id=checkout_id).status == "ready_for_complete"
    html = response.content.decode()
    assert 'data-testid="total">R$ 104,70<' in html  # 85,80 + 18,90 PAC
    assert 'name="uf" type="text" value="SP"' in html  # normalized state shown back


def _to_pix(client) -> tuple[str, str]:
    checkout_id = start_checkout(client)
    form = {**CONTACT, **ADDRESS, "shipping_option": "sedex"}
    client.post(f"/checkout/{checkout_id}", {"action": "update", **form})
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", **form})
    assert response["Location"] == f"/checkout/{checkout_id}/pix"
    return checkout_id, pix_charge_latest_for_reference(checkout_id).txid


def test_switching_to_english_on_the_pix_page_writes_the_order_and_its_e_mails_in_english(
    client, shop_ready, django_capture_on_commit_callbacks, settings, mailoutbox
):
    """Closing note: the order kept the language the checkout was filled in. A buyer who chose English with the
    site's switch while the Pix QR code was on screen — before paying, or after (the tab still open) — reads
    English: the order, and its e-mails from then on, follow the switch."""
    settings.DEBUG = True
    checkout_id, txid = _to_pix(client)
    switched = client.post("/i18n/setlang/", {"language": "en", "next": f"/checkout/{checkout_id}/pix"})
    assert switched["Location"] == f"/checkout/{checkout_id}/pix"
    assert Checkout.objects.get(public_id=checkout_id).language == "en"
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/_sandbox/psp/cob/{txid}/pay", {"next": f"/checkout/{checkout_id}/pix"})
    order = Order.objects.get(checkout_id=checkout_id)
    assert order.language == "en"
    assert [m.subject for m in mailoutbox] == [f"Loja Exemplo: We received your order #{order.number}"]


def test_switching_after_the_pix_was_paid_switches_the_order(
    client, shop_ready, django_capture_on_commit_callbacks, settings
):
    settings.DEBUG = True
    checkout_id, txid = _to_pix(client)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/_sandbox/psp/cob/{txid}/pay", {"next": f"/checkout/{checkout_id}/pix"})
    assert Order.objects.get(checkout_id=checkout_id).language == "pt-br"
    client.post("/i18n/setlang/", {"language": "en", "next": f"/checkout/{checkout_id}/pix"})  # the tab still open
    assert Order.objects.get(checkout_id=checkout_id).language == "en"
    # another browser holding only the checkout id switches nothing
    Client().post("/i18n/setlang/", {"language": "pt-br", "next": f"/checkout/{checkout_id}/pix"})
    assert Order.objects.get(checkout_id=checkout_id).language == "en"
