"""Buyer permalink page `/orders/<token>`: content, languages, 404 without hint, noindex, no other order's data."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings
from django.core import mail
from django.template import Context, Template

from orders.models import Order
from orders.selectors import order_bcp_render, order_for_bcp
from orders.services import (
    fulfillment_event_create,
    order_cancel,
    order_mark_delivered,
    order_place_from_checkout,
    order_refund,
    order_return,
    order_ship,
)
from orders.types import LineQuantity
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db


def _path(order) -> str:
    return f"/orders/{order.permalink_token}"


def test_permalink_shows_the_order_in_portuguese(client, place_order):
    # given a shipped order with a completed refund
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 1)])
    order_refund(order_id=order.public_id, amount=1500, reason="Desconto combinado")
    # when the buyer opens the link without logging in
    response = client.get(_path(order))
    # then the page has the order, in words, with tracking and the refund in plain language
    assert response.status_code == 200
    html = response.content.decode()
    assert f"Pedido #{order.number}" in html
    assert "Enviado em parte" in html
    assert "Pagamento" in html and "Pago" in html
    assert "Produto CAM" in html
    assert 'src="https://cdn.example.com.br/CAM.jpg"' in html
    assert "R$ 68,00" in html  # total
    assert "Frete SEDEX" in html
    assert "Rua das Flores, 123" in html and "01310-100" in html
    assert "Chega em 3 a 5 dias úteis" in html
    assert 'href="https://rastreamento.correios.com.br/app/index.php?objeto=BR123456785BR"' in html
    assert "Reembolso de R$ 15,00" in html and "em andamento" in html and "Desconto combinado" in html
    assert '<meta name="robots" content="noindex">' in html
    assert response["X-Robots-Tag"] == "noindex"
    assert response["Content-Language"] == "pt-br"
    assert response["Referrer-Policy"] == "same-origin"  # no token to other sites; own forms keep working


def test_permalink_follows_the_order_language_english(client, place_order):
    order = place_order(language="en")
    response = client.get(_path(order))
    html = response.content.decode()
    assert response["Content-Language"] == "en"
    assert f"Order #{order.number}" in html
    assert "Order received" in html
    assert "Awaiting payment" not in html and "Paid" in html
    assert "We are preparing your order." in html


def test_an_unshipped_orders_delivery_promise_reads_in_english(client, django_capture_on_commit_callbacks):
    """The checkout stored its promise in Portuguese ("Chega em 3 a 5 dias úteis"); with no "prazo de postagem" the
    carrier's days count from a posting not known yet, so no date is given: the page and the e-mail said the stored
    Portuguese words to an English reader. They are said from the days the order kept, in the reader's language."""
    placed = replace(make_checkout(language="en"), fulfillment_days=(3, 5))
    with django_capture_on_commit_callbacks(execute=True):
        order = order_place_from_checkout(checkout=placed)
    assert order.fulfillment_description == "Chega em 3 a 5 dias úteis"  # as stored
    html = client.get(_path(order)).content.decode()
    expectations = html.split('data-testid="order-expectations"')[1].split("</ul>")[0]
    assert "<strong>Arrives in 3 to 5 business days</strong>" in expectations and "Chega" not in html
    (placed_email,) = mail.outbox
    assert "Delivery: SEDEX · Arrives in 3 to 5 business days" in placed_email.body
    assert "Chega" not in placed_email.body and "Chega" not in placed_email.alternatives[0][0]
    with django_capture_on_commit_callbacks(execute=True):  # the same in Portuguese
        pt = order_place_from_checkout(checkout=replace(make_checkout(), fulfillment_days=(3, 5)))
    assert "<strong>Chega em 3 a 5 dias úteis</strong>" in client.get(_path(pt)).content.decode()
    assert "Entrega: SEDEX · Chega em 3 a 5 dias úteis" in mail.outbox[-1].body


def test_site_language_switch_wins_over_the_order_language(client, place_order):
    # given a Portuguese order and a buyer who chose English with the site's (footer) language switch
    order = place_order(language="pt-br")
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    # when the page is opened, then it is in English
    response = client.get(_path(order))
    assert response.headers["Content-Language"] == "en"
    assert "Order received" in response.content.decode()
    # and switching back to Portuguese there gives Portuguese
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "pt-br"
    assert "Pedido recebido" in client.get(_path(order)).content.decode()


def test_old_lang_links_become_the_site_choice_and_redirect_to_the_clean_link(client, place_order):
    order = place_order(language="pt-br")
    response = client.get(_path(order) + "?lang=en")
    assert (response.status_code, response["Location"]) == (302, _path(order))
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "en"
    assert response["Referrer-Policy"] == "same-origin"  # no token to other sites; own forms keep working
    assert "Order received" in client.get(_path(order)).content.decode()


def test_one_language_switch_only_the_sites_footer(client, place_order):
    """QA: the page had its own "English" link above the title besides the footer's switch."""
    html = client.get(_path(place_order())).content.decode()
    assert html.count('class="lang-switch"') == 1
    assert 'action="/i18n/setlang/"' in html or "setlang" in html
    assert "?lang=" not in html


@pytest.mark.parametrize(
    ("language", "method", "expected"),
    [
        ("pt-br", "shipping", ["Enviado", "Parcialmente enviado", "Em preparação", "Devolvido"]),
        ("pt-br", "pickup", ["Retirado", "Parcialmente retirado", "Em preparação", "Devolvido"]),
        ("en", "shipping", ["Shipped", "Partially shipped", "Preparing", "Returned"]),
        ("en", "pickup", ["Picked up", "Partially picked up", "Preparing", "Returned"]),
    ],
)
def test_line_statuses_in_buyer_words(client, place_order, language, method, expected):
    # given four lines: fulfilled, partly fulfilled, untouched, and one sent back in full (returned; QA walk: the
    # buyer's returned dress read "Removido")
    order = place_order(
        lines=[("A", 1000, 1), ("B", 1000, 2), ("C", 1000, 1), ("D", 1000, 1)], language=language, method=method
    )
    a, b, _c, d = order.lines.order_by("position")
    lines = [LineQuantity(a.public_id, 1), LineQuantity(b.public_id, 1), LineQuantity(d.public_id, 1)]
    if method == "shipping":
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=lines)
        order_mark_delivered(order_id=order.public_id, lines=[LineQuantity(d.public_id, 1)])  # returned once delivered
    else:
        order_mark_delivered(order_id=order.public_id, lines=lines)
    order_return(order_id=order.public_id, lines=[LineQuantity(d.public_id, 1)], reason="Arrependimento")
    # when the buyer opens the page
    html = client.get(_path(order)).content.decode()
    # then each line says what happened in words a buyer understands
    statuses = re.findall(r'data-testid="line-status">([^<]*)<', html)
    assert statuses == expected
    assert "Atendido" not in html and "Fulfilled" not in html


@pytest.mark.parametrize(("language", "words"), [("pt-br", ["Enviado", "Cancelado"]), ("en", ["Shipped", "Canceled"])])
def test_a_line_the_store_cancelled_after_a_partial_shipment_reads_cancelled(client, place_order, language, words):
    # given an order whose first line shipped and whose second the store then cancelled (QA walk: "Removido")
    order = place_order(lines=[("A", 1000, 1), ("B", 1000, 2)], language=language)
    a, _b = order.lines.order_by("position")
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(a.public_id, 1)])
    order_cancel(order_id=order.public_id, reason="Sem estoque")
    # when the buyer opens the page, then the cancelled line says so, in the buyer's words
    html = client.get(_path(order)).content.decode()
    assert re.findall(r'data-testid="line-status">([^<]*)<', html) == words


@pytest.mark.parametrize(("language", "words"), [("pt-br", "Pronto para retirada"), ("en", "Ready for pickup")])
def test_a_pickup_order_the_store_made_ready_says_so(client, place_order, language, words):
    from orders.services.handover import order_pickup_done, order_pickup_ready

    # given a paid pickup order the store marked "Pronto para retirada" (its default note)
    order = place_order(lines=[("A", 1000, 1), ("B", 1000, 2)], language=language, method="pickup", freight=0)
    order_pickup_ready(order_id=order.public_id)
    # when the buyer opens the page
    html = client.get(_path(order)).content.decode()
    # then the order and each item are ready, and the timeline names the step once
    status = re.search(r'data-testid="order-status">\s*<strong>([^<]*)</strong>', html)
    assert status is not None and status.group(1) == words
    assert re.findall(r'data-testid="line-status">([^<]*)<', html) == [words, words]
    # the store's default note is the step's own words: not "X — X", nor (QA walk) "Ready for pickup — Pronto para
    # retirada" on an English page: the notes the shop writes itself are shown in the reader's language
    events = html[html.index('data-testid="order-events"') :]
    assert re.search(rf"<strong>{words}</strong>\s*—", events) is None
    assert language == "pt-br" or "Pronto para retirada" not in events
    # and once picked up, it is delivered like any order, the shop's note in the reader's language too
    order_pickup_done(order_id=order.public_id)
    html = client.get(_path(order)).content.decode()
    status = re.search(r'data-testid="order-status">\s*<strong>([^<]*)</strong>', html)
    assert status is not None and status.group(1) != words
    events = html[html.index('data-testid="order-events"') :]
    assert ("Retirado na loja" in events) == (language == "pt-br")
    assert ("Picked up at the store" in events) == (language == "en")


@pytest.mark.parametrize("token", ["x" * 32, "abc", "order_123", "%2e%2e"])
def test_unknown_tokens_are_404_without_hint(client, place_order, token):
    place_order()
    response = client.get(f"/orders/{token}")
    assert response.status_code == 404
    # the styled page echoes the requested path only in the language switch's "next" field
    body = response.content.decode().replace(f'value="{response.wsgi_request.get_full_path()}"', "")
    assert "order" not in body.lower()
    assert "Pedido" not in body
    assert "Página não encontrada" in body
    assert response["X-Robots-Tag"] == "noindex"


def test_page_shows_no_data_of_other_orders(client, place_order):
    mine = place_order(lines=[("MINHA-CAMISA", 3000, 1)], email="ana@example.com.br")
    other = place_order(lines=[("OUTRA-CALCA", 9000, 1)], email="bruno@example.com.br")
    html = client.get(_path(mine)).content.decode()
    assert "MINHA-CAMISA" in html
    assert "OUTRA-CALCA" not in html
    assert f"#{other.number}" not in html
    assert other.permalink_token not in html


def test_internal_notes_never_reach_the_buyer(client, place_order):
    from orders.services import order_note_add

    order = place_order()
    order_note_add(order_id=order.public_id, text="Cliente difícil, conferir CPF", actor="staff")
    assert "conferir CPF" not in client.get(_path(order)).content.decode()


def test_permalink_url_is_the_bcp_permalink(place_order, settings):
    settings.BCP_PUBLIC_URL = "https://loja.example.com.br"
    order = place_order()
    assert order.permalink_url == f"https://loja.example.com.br/orders/{order.permalink_token}"


def test_backordered_expectation_shows_its_date(client, place_order):
    from orders.services import expectation_update

    order = place_order()
    expectation_update(
        order_id=order.public_id,
        expectation_id=order.expectations.get().public_id,
        description="Sob encomenda",
        fulfillable_on="2026-12-10T15:00:00Z",
    )
    html = client.get(_path(order)).content.decode()
    assert "Sob encomenda" in html
    assert "Previsão de envio: 10/12/2026" in html


def test_dates_read_with_the_month_in_lower_case(client, place_order):
    # Brazilians write "1 de dezembro de 2026"; Django's pt_BR catalog said "1 de Dezembro de 2026".
    order = place_order()
    type(order).objects.filter(pk=order.pk).update(placed_at=datetime(2026, 12, 1, 15, 0, tzinfo=ZoneInfo("UTC")))

    html = client.get(_path(order)).content.decode()

    assert "Feito em 1 de dezembro de 2026" in html
    assert "Dezembro" not in html
    months = Template('{{ d|date:"F" }} {{ d|date:"E" }}').render(Context({"d": datetime(2026, 3, 9)}))
    assert months == "março março"


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("pt-br", "Produto digital: a loja envia o acesso para ana@example.com.br."),
        ("en", "Digital product: the store sends access to ana@example.com.br."),
    ],
)
def test_a_digital_order_says_how_it_arrives_without_an_empty_address(client, place_order, language, words):
    """QA walk: an e-book's page showed an empty address block and "Entrega digital" twice."""
    order = place_order(method="digital", language=language)
    html = client.get(_path(order)).content.decode()
    assert words in html
    assert 'data-testid="order-address"' not in html
    assert html.count("Entrega digital") <= 1


def test_a_shipped_order_still_shows_its_address(client, place_order):
    html = client.get(_path(place_order())).content.decode()
    assert 'data-testid="order-address"' in html and 'data-testid="digital-delivery"' not in html


@pytest.mark.parametrize(
    ("language", "promise", "words"),
    [
        ("pt-br", "Chega em 3 a 5 dias úteis", ("A caminho", "enviado em", "Previsão de entrega", "a partir do envio")),
        ("en", "Arrives in 3 to 5 business days", ("On its way", "shipped on", "Estimated delivery", "from shipping")),
    ],
)
def test_a_shipped_order_says_when_what_travels_should_arrive(client, place_order, language, promise, words):
    """The gap closing note 43 named: after shipping the page showed only "SEDEX" and the tracking code. What left and
    has not arrived is listed with the promise the order holds (the quote's days, worded at checkout in the order's
    language), counted from the shipment; what is still in the shop keeps its own row; nothing once delivered."""
    # given two shirts and a cap, one shirt shipped on 5 Dec
    order = place_order(lines=[("CAM", 3000, 2), ("BONE", 2000, 1)], language=language)
    order.expectations.update(description=promise)  # as a checkout in that language worded it
    shirt = order.lines.get(sku="CAM")
    shipment = order_ship(
        order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 1)]
    )
    shipment.__class__.objects.filter(pk=shipment.pk).update(
        occurred_at=datetime(2026, 12, 5, 15, 0, tzinfo=ZoneInfo("America/Sao_Paulo"))
    )
    # when the buyer opens the page
    html = client.get(_path(order)).content.decode()
    # then the shirt on its way has its estimate from the shipment; the rest is still to be sent
    on_the_way = html.split('data-testid="order-on-the-way">')[1].split("</ul>")[0]
    flat = " ".join(re.sub(r"<[^>]+>", " ", on_the_way).split())
    arriving, since, estimate, counted = words
    when = "05/12/2026" if language == "pt-br" else "12/05/2026"
    assert flat == f"{arriving} · {since} {when} {estimate}: {promise} {counted} 1× Produto CAM"
    waiting = html.split('data-testid="order-expectations">')[1].split("</ul>")[0]
    assert "1× Produto CAM, 1× Produto BONE" in " ".join(re.sub(r"<[^>]+>", " ", waiting).split())
    # and once everything arrived, no estimate is left
    order_ship(order_id=order.public_id, tracking_number="BR123456799BR")
    order_mark_delivered(order_id=order.public_id)
    html = client.get(_path(order)).content.decode()
    assert 'data-testid="order-on-the-way"' not in html and 'data-testid="arrival-estimate"' not in html


def test_units_delivered_then_returned_are_not_on_their_way_again(client, place_order):
    """QA walk: after the buyer sent back what was delivered (a registered return), the page said "A caminho ·
    enviado em …, Previsão de entrega: …" again: the returned units had left the line's delivered count, so the
    expectation read them as shipped and not arrived. A return takes back delivered units only; they stay arrived."""
    # given two shirts, both shipped and delivered, one sent back by the buyer, then the other
    order = place_order(lines=[("CAM", 3000, 2)])
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    shirt = order.lines.get(sku="CAM")
    order_return(order_id=order.public_id, lines=[LineQuantity(shirt.public_id, 1)], reason="Desistência")
    # then nothing is on its way on the buyer's page, nor after the second return
    html = client.get(_path(order)).content.decode()
    assert 'data-testid="order-on-the-way"' not in html and "A caminho" not in html
    order_return(order_id=order.public_id, lines=[LineQuantity(shirt.public_id, 1)], reason="Desistência")
    html = client.get(_path(order)).content.decode()
    assert 'data-testid="order-on-the-way"' not in html and "A caminho" not in html


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("pt-br", "A caminho · enviado em 04/12/2026 Previsão de entrega: entre 09/12 e 11/12 1× Produto CAM"),
        ("en", "On its way · shipped on 12/04/2026 Estimated delivery: between 12/09 and 12/11 1× Produto CAM"),
    ],
)
def test_a_shipped_order_with_the_quotes_days_dates_the_arrival(client, place_order, language, words):
    """An order that kept the quote's business days (3 to 5, counted from shipping), shipped on Friday 4 Dec 2026:
    the page gives the days (Wed 9 to Fri 11, the weekend skipped) instead of "Chega em 3 a 5 dias úteis a partir
    do envio"; before shipping it keeps the words (the shop has no handling days to date the posting)."""
    order = place_order(lines=[("CAM", 3000, 1)], language=language)
    order.expectations.update(days_min=3, days_max=5, days_from="shipping")
    # in the reader's language, from the days (the stored words are the checkout's Portuguese)
    promise = {"pt-br": "Chega em 3 a 5 dias úteis", "en": "Arrives in 3 to 5 business days"}[language]
    waiting = client.get(_path(order)).content.decode().split('data-testid="order-expectations">')[1].split("</ul>")[0]
    assert f"<strong>{promise}</strong>" in waiting
    fulfillment_event_create(
        order_id=order.public_id,
        type="shipped",
        tracking_number="BR123456785BR",
        occurred_at=datetime(2026, 12, 4, 20, 30, tzinfo=ZoneInfo("America/Sao_Paulo")),  # 23:30 UTC: still the 4th
    )
    html = client.get(_path(order)).content.decode()
    on_the_way = html.split('data-testid="order-on-the-way">')[1].split("</ul>")[0]
    assert " ".join(re.sub(r"<[^>]+>", " ", on_the_way).split()) == words


def test_days_that_count_from_the_payment_date_the_arrival_before_shipping(client, place_order):
    """Days that count from the payment (the merchant's handling included) give dates while the order is still in
    the shop: paid (placed) on Friday 4 Dec 2026 with 3 to 5 days, "Chega entre 09/12 e 11/12" on the page and in
    Get Order's expectation description (BCP-ORD-07; the spec has no member for a dated window)."""
    order = place_order(lines=[("CAM", 3000, 1)])
    order.expectations.update(days_min=3, days_max=5, days_from="payment")
    Order.objects.filter(pk=order.pk).update(
        placed_at=datetime(2026, 12, 4, 9, 0, tzinfo=ZoneInfo("America/Sao_Paulo"))
    )
    waiting = client.get(_path(order)).content.decode().split('data-testid="order-expectations">')[1].split("</ul>")[0]
    assert "<strong>Chega entre 09/12 e 11/12</strong>" in waiting
    [expectation] = order_bcp_render(order_for_bcp(order.public_id))["fulfillment"]["expectations"]
    assert expectation["description"] == "Chega entre 09/12 e 11/12"


def test_switching_the_language_on_the_order_page_makes_the_next_e_mails_follow_it(
    client, place_order, django_capture_on_commit_callbacks
):
    """Closing note: a buyer who paid in Portuguese and then chose English with the site's switch on the order's
    page still got the next e-mails in Portuguese (the order kept the checkout's language). The explicit switch
    there is the buyer saying which language they read: the order's next e-mails follow it, and back again."""
    order = place_order(lines=[("CAM", 3000, 1)], language="pt-br")
    # a switch elsewhere, with a token of no order, by a GET (not the form) or to no language of the site: nothing
    client.post("/i18n/setlang/", {"language": "en", "next": "/produtos/"})
    client.post("/i18n/setlang/", {"language": "en", "next": "/orders/not-a-token"})
    client.get("/i18n/setlang/", {"language": "en", "next": _path(order)})
    client.post("/i18n/setlang/", {"language": "xx", "next": _path(order)})
    order.refresh_from_db()
    assert order.language == "pt-br" and not order.timeline.filter(kind="buyer_updated").exists()

    switched = client.post("/i18n/setlang/", {"language": "en", "next": _path(order)})
    assert (switched.status_code, switched["Location"]) == (302, _path(order))
    order.refresh_from_db()
    assert order.language == "en"
    assert "Order received" in client.get(_path(order)).content.decode()
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    assert [m.subject for m in mail.outbox] == [f"Loja Exemplo: Your order #{order.number} has shipped"]
    assert order.timeline.filter(kind="buyer_updated", internal=True).get().message == (
        "O comprador trocou o idioma do site para inglês: os próximos e-mails saem nele."
    )

    client.post("/i18n/setlang/", {"language": "pt-br", "next": _path(order)})
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=order.public_id)
    assert [m.subject for m in mail.outbox] == [f"Loja Exemplo: Seu pedido #{order.number} foi entregue"]
