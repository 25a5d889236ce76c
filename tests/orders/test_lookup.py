"""Order lookup `/pedido` (issue 16, item 6): the permalink goes by e-mail to the order's address; the page
never tells whether an order exists; attempts are limited per client and per e-mail.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core import mail
from django.core.cache import cache

from orders.lookup import MAX_PER_CLIENT, lookup_keys

pytestmark = pytest.mark.django_db

SENT = "Se houver um pedido com esses dados, enviamos o link dele para o e-mail informado."


@pytest.fixture(autouse=True)
def _forget_attempts() -> Iterator[None]:
    keys = [
        key
        for email in ("ana@example.com.br", "ANA@example.com.br", "bruno@example.com.br", "x@example.com.br")
        for key in lookup_keys(client="127.0.0.1", email=email)
    ]
    cache.delete_many(keys)
    yield
    cache.delete_many(keys)


def test_right_email_and_number_sends_the_permalink_to_the_order_email(
    client, place_order, django_capture_on_commit_callbacks
):
    order = place_order()
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/pedido", {"email": "ANA@example.com.br", "number": str(order.number)})
    assert response.status_code == 200
    assert SENT in response.content.decode()
    assert [m.to for m in mail.outbox] == [["ana@example.com.br"]]
    assert order.permalink_url in mail.outbox[0].body
    assert response["X-Robots-Tag"] == "noindex"


@pytest.mark.parametrize("typed", ["#{n}", " # {n} ", "Pedido nº {n}", "pedido #{n}"])
def test_the_number_as_written_in_the_email_subject_is_accepted(
    client, place_order, django_capture_on_commit_callbacks, typed
):
    order = place_order()
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/pedido", {"email": "ana@example.com.br", "number": typed.format(n=order.number)})
    assert SENT in response.content.decode()
    assert len(mail.outbox) == 1


def test_the_lookup_sends_only_the_link_not_the_confirmation_again(
    client, place_order, django_capture_on_commit_callbacks
):
    order = place_order()
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/pedido", {"email": "ana@example.com.br", "number": f"#{order.number}"})
    (message,) = mail.outbox
    assert message.subject == f"Loja Exemplo: Link para acompanhar o pedido #{order.number}"
    assert message.body == (
        f"Olá, Ana!\n\nVocê pediu o link do pedido #{order.number}. Acompanhe o pedido por aqui:\n"
        f"{order.permalink_url}\n\nSe não foi você que pediu, ignore este e-mail: o link só foi enviado para o seu "
        "endereço.\n\nLoja Exemplo\n"
    )
    assert "Recebemos seu pedido" not in message.body
    event = order.timeline.get(kind="email_resend")
    assert (event.message, event.internal) == ("Link do pedido enviado a pedido do comprador (/pedido).", True)


@pytest.mark.parametrize(
    "data", [{"email": "bruno@example.com.br", "number": "OWN"}, {"email": "ana@example.com.br", "number": "999999"}]
)
def test_wrong_email_or_unknown_number_gets_the_same_answer_and_no_email(
    client, place_order, django_capture_on_commit_callbacks, data
):
    order = place_order()
    mail.outbox.clear()
    if data["number"] == "OWN":
        data = {**data, "number": str(order.number)}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/pedido", data)
    assert response.status_code == 200
    assert SENT in response.content.decode()
    assert mail.outbox == []


def test_bad_input_is_named_and_changes_nothing(client):
    response = client.post("/pedido", {"email": "ana@", "number": "abc"})
    html = response.content.decode()
    assert response.status_code == 400
    assert 'data-testid="error-email"' in html and 'data-testid="error-number"' in html
    assert "Informe o número do pedido, como 1005 ou #1005." in html
    assert SENT not in html


def test_each_error_names_its_field(client):
    """QA walk: an empty form answered Django's "Este campo é obrigatório." twice and a bad e-mail "Insira um
    endereço de email válido.", naming no field; what was typed stays."""
    empty = client.post("/pedido", {"email": "", "number": ""}).content.decode()
    assert 'data-testid="error-email">Informe o e-mail usado na compra.<' in empty.replace("\n", "")
    assert "Informe o número do pedido, como 1005 ou #1005." in empty
    assert "Este campo é obrigatório." not in empty
    bad = client.post("/pedido", {"email": "ana@exemplo", "number": "1001"}).content.decode()
    assert "E-mail inválido: confira o endereço usado na compra." in bad
    assert 'value="ana@exemplo"' in bad and 'value="1001"' in bad
    english = client.post("/pedido", {"email": "", "number": ""}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Enter the e-mail used for the purchase." in english


def test_attempts_are_limited_per_client(client, place_order, django_capture_on_commit_callbacks):
    order = place_order()
    mail.outbox.clear()
    for attempt in range(MAX_PER_CLIENT):
        email = "x@example.com.br" if attempt % 2 else "bruno@example.com.br"
        assert client.post("/pedido", {"email": email, "number": str(1000 + attempt)}).status_code == 200
    # when the next attempt comes, even with the right data, it is refused and nothing is sent
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/pedido", {"email": "ana@example.com.br", "number": str(order.number)})
    assert response.status_code == 429
    assert "Muitas tentativas. Tente de novo em alguns minutos." in response.content.decode()
    assert mail.outbox == []


def test_lookup_page_in_english(client):
    client.cookies["django_language"] = "en"
    html = client.get("/pedido").content.decode()
    assert "Find my order" in html and "Order number" in html
