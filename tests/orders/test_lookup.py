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
    assert SENT not in html


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
