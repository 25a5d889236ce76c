""" "Minha conta" without a password (issue 33, minor): a sign-in link by e-mail (signed, short-lived, single
use, rate limited, the same answer whether or not the e-mail bought here), order history, addresses used, the
checkout prefilled for a returning buyer, and the LGPD export and erasure."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import timedelta

import pytest
from django.core import mail
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from orders.models import Order
from orders.services import order_place_from_checkout
from shop.account.services import account_link_use
from shop.models import AccountLoginLink, Checkout
from shop.store.services import store_row
from tests.orders.conftest import make_checkout
from tests.shop.checkout_factories import make_shipping, make_variant

pytestmark = pytest.mark.django_db

EMAIL = "ana@example.com.br"
BUDGET_HOME = 5  # the session, the store row, the orders, their lines, the subscriptions


@pytest.fixture(autouse=True)
def _fresh_limits():
    cache.clear()  # the request counters live in the cache


@pytest.fixture
def order(django_capture_on_commit_callbacks) -> Order:
    with django_capture_on_commit_callbacks(execute=True):
        placed = order_place_from_checkout(checkout=make_checkout(lines=[("CAFE", 4290, 2)], email=EMAIL))
    mail.outbox.clear()
    return placed


def _page(html: str, typed: str) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html.replace(typed, "X"))


def ask_link(client: Client, email: str, django_capture_on_commit_callbacks) -> str:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/conta/", {"email": email})
    assert response.status_code == 200
    return response.content.decode()


def link_from_mail() -> str:
    (message,) = mail.outbox
    return re.search(r"https?://\S+/conta/entrar/\S+", message.body).group(0).split("8000", 1)[-1]


def sign_in(client: Client, django_capture_on_commit_callbacks) -> None:
    ask_link(client, EMAIL, django_capture_on_commit_callbacks)
    path = link_from_mail()
    assert client.post(path).status_code == 302


def test_the_link_goes_only_to_a_buyer_and_the_answer_is_the_same(client, order, django_capture_on_commit_callbacks):
    known = ask_link(client, EMAIL.upper(), django_capture_on_commit_callbacks)
    (message,) = mail.outbox
    assert message.to == [EMAIL]
    assert message.subject == "Loja Exemplo: seu link para entrar em Minha conta"
    assert "vale 15 minutos e só pode ser usado uma vez" in message.body
    mail.outbox.clear()
    unknown = ask_link(client, "nunca-comprou@example.com.br", django_capture_on_commit_callbacks)
    assert mail.outbox == []
    # no account enumeration: the page reads the same (but for the typed address)
    assert _page(known, EMAIL.upper()) == _page(unknown, "nunca-comprou@example.com.br")


def test_the_link_e_mail_names_the_shop_as_the_merchant_renamed_it(
    client, order, django_capture_on_commit_callbacks
) -> None:
    """QA walk: subject and sender said the project's SHOP_NAME, not the name set in the admin (as order e-mails)."""
    row = store_row()
    row.trade_name = "Ateliê Ipê"
    row.save()
    ask_link(client, EMAIL, django_capture_on_commit_callbacks)
    (message,) = mail.outbox
    assert message.subject == "Ateliê Ipê: seu link para entrar em Minha conta"
    assert message.from_email.startswith("Ateliê Ipê <") and "na Ateliê Ipê" in message.body


def test_requests_are_rate_limited_per_e_mail(client, order, django_capture_on_commit_callbacks) -> None:
    for _ in range(3):
        ask_link(client, EMAIL, django_capture_on_commit_callbacks)
    response = client.post("/conta/", {"email": EMAIL})
    assert response.status_code == 429
    assert "Muitos pedidos de link. Tente de novo em alguns minutos." in response.content.decode()
    assert len(mail.outbox) == 3


def test_a_bad_e_mail_is_named(client) -> None:
    response = client.post("/conta/", {"email": "ana@"})
    assert response.status_code == 400
    assert "E-mail inválido: confira o endereço." in response.content.decode()


def test_the_link_signs_in_once_after_a_click(client, order, django_capture_on_commit_callbacks) -> None:
    ask_link(client, EMAIL, django_capture_on_commit_callbacks)
    path = link_from_mail()
    # opening the link (a mail scanner does) does not use it
    assert 'data-testid="account-enter-button"' in client.get(path).content.decode()
    assert AccountLoginLink.objects.get().used_at is None
    response = client.post(path)
    assert (response.status_code, response["Location"]) == (302, "/conta/")
    home = client.get("/conta/").content.decode()
    assert f"Pedido #{order.number}" in home and "2× " in home
    assert "Rua das Flores, 123, Apto 45 — Jardim Paulista, São Paulo/SP, 01310-100" in home
    # a second use, another browser: refused
    again = Client().post(path)
    assert again.status_code == 410
    assert "Este link expirou ou já foi usado." in again.content.decode()


def test_forged_and_expired_links_are_refused(client, order, django_capture_on_commit_callbacks) -> None:
    ask_link(client, EMAIL, django_capture_on_commit_callbacks)
    path = link_from_mail()
    token = path.rsplit("/", 1)[1]
    _public_id, signature = token.split(":", 1)
    assert account_link_use(token=f"acl_{'0' * 32}:{signature}") is None  # another id, the same signature
    AccountLoginLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.post(path).status_code == 410
    assert "account_email" not in client.session


def test_sign_in_uses_a_fixed_number_of_statements(
    order, django_capture_on_commit_callbacks, django_assert_max_num_queries
):
    with django_capture_on_commit_callbacks(execute=False):
        Client().post("/conta/", {"email": EMAIL})
    link = AccountLoginLink.objects.get()
    from shop.account.services import link_token

    with django_assert_max_num_queries(4):  # savepoint-free: begin, select for update, update, commit
        assert account_link_use(token=link_token(link)) == EMAIL


def test_a_returning_buyer_finds_the_checkout_filled(client, order, django_capture_on_commit_callbacks) -> None:
    sign_in(client, django_capture_on_commit_callbacks)
    make_variant(price=4290, stock=10)
    make_shipping()
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    checkout_id = client.get("/checkout/")["Location"].rsplit("/", 1)[1]
    html = client.get(f"/checkout/{checkout_id}").content.decode()
    for value in (EMAIL, "Ana", "Souza", "(11) 98765-4321", "390.533.447-05", "01310-100"):
        assert f'value="{value}"' in html, value
    # nothing is saved until the buyer submits
    assert Checkout.objects.get(public_id=checkout_id).buyer_email == ""


def test_the_export_has_the_buyers_data_in_json_and_csv(client, order, django_capture_on_commit_callbacks) -> None:
    sign_in(client, django_capture_on_commit_callbacks)
    response = client.get("/conta/meus-dados.json")
    assert response["Content-Disposition"] == 'attachment; filename="meus-dados.json"'
    data = json.loads(response.content)
    assert data["email"] == EMAIL
    (exported,) = data["orders"]
    assert (exported["number"], exported["buyer"]["cpf"], exported["total_centavos"]) == (
        order.number,
        "39053344705",
        order.total_amount,
    )
    rows = list(csv.reader(io.StringIO(client.get("/conta/meus-dados.csv").content.decode("utf-8-sig")), delimiter=";"))
    assert rows[0] == ["registro", "data", "pedido", "situacao", "campo", "valor"]
    assert ["pedido", exported["placed_at"], str(order.number), order.status, "comprador.cpf", "39053344705"] in rows
    # signed out: no export
    assert Client().get("/conta/meus-dados.json")["Location"] == "/conta/"


def test_erasure_keeps_what_the_law_requires_and_signs_out(client, order, django_capture_on_commit_callbacks) -> None:
    unfinished = Checkout.objects.create(
        buyer_email=EMAIL, buyer_first_name="Ana", buyer_tax_id="39053344705", ship_cep="01310-100", status="incomplete"
    )
    sign_in(client, django_capture_on_commit_callbacks)
    page = client.get("/conta/excluir").content.decode()
    assert "devem ser guardadas por 5 anos" in page
    refused = client.post("/conta/excluir", {})
    assert refused.status_code == 400 and "Marque a confirmação para apagar seus dados." in refused.content.decode()
    done = client.post("/conta/excluir", {"confirm": "on"})
    assert "Apagamos seus dados pessoais." in done.content.decode()
    order.refresh_from_db()
    # the fiscal record stays (name, CPF, address, items, money); e-mail and phone go
    assert order.buyer_email.endswith("@apagado.invalid") and order.buyer_phone == ""
    assert (order.buyer_first_name, order.buyer_tax_id, order.destination["postal_code"]) == (
        "Ana",
        "39053344705",
        "01310-100",
    )
    unfinished.refresh_from_db()
    assert (unfinished.buyer_first_name, unfinished.buyer_tax_id, unfinished.ship_cep) == ("", "", "")
    assert not Order.objects.filter(buyer_email=EMAIL).exists()
    assert client.get("/conta/").content.decode().count('data-testid="account-request"') == 1


def test_the_account_page_reads_a_fixed_number_of_statements(
    client, order, django_capture_on_commit_callbacks, django_assert_max_num_queries
) -> None:
    sign_in(client, django_capture_on_commit_callbacks)
    for _ in range(3):
        order_place_from_checkout(checkout=make_checkout(lines=[("CAFE", 4290, 1), ("CANECA", 3900, 2)], email=EMAIL))
    with django_assert_max_num_queries(BUDGET_HOME):  # 4 orders or 40: the same statements
        assert client.get("/conta/").status_code == 200


def test_asking_for_a_link_is_a_fixed_handful_of_statements(order, django_assert_max_num_queries) -> None:
    from shop.account.services import account_link_request

    with django_assert_max_num_queries(4):  # the order exists?, the link row (in one transaction)
        account_link_request(email=EMAIL)


def test_the_privacy_policy_points_to_minha_conta(client) -> None:
    html = client.get("/privacidade").content.decode()
    assert 'Em <a href="/conta/">Minha conta</a> (sem senha: um link chega ao seu e-mail)' in html
