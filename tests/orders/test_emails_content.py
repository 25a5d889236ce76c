"""What the buyer's e-mails say (issue 16, item 4): every totals line, the address or the pickup store with its
hours, the payment; shipment e-mails list what shipped; "delivered" only when everything was; cancellation and
refund with amounts; readable 8bit UTF-8 on the console; English too.
"""

from __future__ import annotations

import email.policy
import io
import os
import re
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.core.mail.backends.console import EmailBackend as ConsoleBackend
from django.template import Context, engines
from django.template.loader import get_template
from django.templatetags.i18n import TranslateNode
from django.utils import translation
from django.utils.formats import date_format
from django.utils.timezone import localtime

from orders.emails import build_order_email
from orders.services import (
    adjustment_mark_refund_result,
    fulfillment_event_create,
    order_cancel,
    order_mark_delivered,
    order_place_from_checkout,
    order_refund,
    order_ship,
    return_request_approve,
    return_request_create,
    return_request_receive,
    return_request_refund,
)
from orders.templatetags.orders_i18n import LiteralTranslateNode
from orders.types import LineQuantity
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db

STORE = {
    "name": "Loja Paulista",
    "first_name": "Ana",
    "last_name": "Souza",
    "street": "Avenida Paulista",
    "number": "1000",
    "complement": "",
    "neighborhood": "Bela Vista",
    "city": "São Paulo",
    "state": "SP",
    "postal_code": "01310-100",
    "country": "BR",
    "opening_hours": "Seg a Sex 9h–18h",
}


def _place(django_capture_on_commit_callbacks, **kwargs):
    placed = make_checkout(lines=[("CAM", 3000, 2), ("BONE", 2000, 1)], freight=800, **kwargs)
    # 80,00 of items, 10% coupon, SEDEX 8,00 → 80,00
    placed = replace(
        placed,
        totals=[
            ("subtotal", 8000, ""),
            ("discount", -800, "Cupom BEMVINDO10"),
            ("fulfillment", 800, "Frete SEDEX"),
            ("total", 8000, ""),
        ],
        paid_amount=8000,
    )
    with django_capture_on_commit_callbacks(execute=True):
        return order_place_from_checkout(checkout=placed)


def test_confirmation_has_every_totals_line_the_address_and_the_payment(django_capture_on_commit_callbacks):
    order = _place(django_capture_on_commit_callbacks)
    (message,) = mail.outbox
    body = message.body
    for text in (
        "- 2× Produto CAM (CAM) — R$ 60,00",
        "- 1× Produto BONE (BONE) — R$ 20,00",
        "Subtotal: R$ 80,00",
        "Cupom BEMVINDO10: -R$ 8,00",
        "Frete SEDEX: R$ 8,00",
        "Total: R$ 80,00",
        "Entrega: SEDEX · Chega em 3 a 5 dias úteis",
        "Rua das Flores, 123 — Apto 45",
        "Jardim Paulista · São Paulo/SP · CEP 01310-100",
        "Pagamento: Pix — Pago",
        order.permalink_url,
        "Loja Exemplo · pedidos@loja.example.com.br",
    ):
        assert text in body, text
    html = message.alternatives[0][0]
    assert "Cupom BEMVINDO10" in html and "-R$ 8,00" in html and "Rua das Flores, 123" in html


def test_pickup_confirmation_names_the_store_and_its_hours(django_capture_on_commit_callbacks):
    placed = replace(make_checkout(method="pickup"), destination=STORE, fulfillment_title="Retirada na loja")
    with django_capture_on_commit_callbacks(execute=True):
        order_place_from_checkout(checkout=placed)
    body = mail.outbox[0].body
    assert "Retirada na loja: Loja Paulista" in body
    assert "Avenida Paulista, 1000 — Bela Vista, São Paulo/SP" in body
    assert "Horário: Seg a Sex 9h–18h" in body
    assert "Entrega:" not in body
    assert "Seg a Sex 9h–18h" in mail.outbox[0].alternatives[0][0]


def test_shipment_lists_only_what_shipped_and_delivery_is_partial_until_all_is(django_capture_on_commit_callbacks):
    order = _place(django_capture_on_commit_callbacks)
    shirt = order.lines.get(sku="CAM")
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 2)])
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=order.public_id)
    shipped, delivered = mail.outbox[1:]
    assert shipped.subject == f"Loja Exemplo: Parte do seu pedido #{order.number} foi enviada"
    assert "Itens enviados:\n- 2× Produto CAM (CAM) — R$ 60,00\n\n" in shipped.body
    assert "BONE" not in shipped.body.split("Subtotal")[0]
    assert delivered.subject == f"Loja Exemplo: Parte do seu pedido #{order.number} foi entregue"
    assert "foi entregue. Esperamos que goste" not in delivered.body
    # when the cap ships and arrives too, then "your order was delivered"
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR987654326BR")
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=order.public_id)
    assert mail.outbox[3].subject == f"Loja Exemplo: Seu pedido #{order.number} foi enviado"
    assert "Itens enviados:\n- 1× Produto BONE (BONE) — R$ 20,00\n\n" in mail.outbox[3].body
    assert mail.outbox[4].subject == f"Loja Exemplo: Seu pedido #{order.number} foi entregue"


def test_refund_and_cancellation_e_mails_carry_the_amounts(django_capture_on_commit_callbacks):
    order = _place(django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        refund = order_refund(order_id=order.public_id, amount=1500, reason="Avaria")
    with django_capture_on_commit_callbacks(execute=True):
        adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    refunded = mail.outbox[-1]
    assert "Devolvemos R$ 15,00" in refunded.body
    assert "Pago: R$ 80,00\nReembolsado: -R$ 15,00\nValor final do pedido: R$ 65,00" in refunded.body
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order_id=order.public_id, reason="Sem estoque", refund=False)
    canceled = mail.outbox[-1]
    assert canceled.subject == f"Loja Exemplo: Pedido #{order.number} cancelado"
    assert f"Seu pedido #{order.number} foi cancelado. Você pagou R$ 80,00" in canceled.body
    assert "Reembolsado: -R$ 15,00" in canceled.body


def test_cancellation_e_mail_lists_what_was_cancelled_and_promises_no_arrival(django_capture_on_commit_callbacks):
    """QA walk (buyer cancels from the order page): the e-mail said "Itens:" over an empty list under a subtotal of
    R$ 80,00, and still "Entrega: SEDEX · Chega em 3 a 5 dias úteis" for an order that will not travel."""
    order = _place(django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order_id=order.public_id, reason="Desisti")
    canceled = mail.outbox[-1]
    assert canceled.subject == f"Loja Exemplo: Pedido #{order.number} cancelado"
    body = canceled.body
    assert "Itens cancelados:\n- 2× Produto CAM (CAM) — R$ 60,00\n- 1× Produto BONE (BONE) — R$ 20,00\n" in body
    assert "Subtotal: R$ 80,00" in body
    assert "Entrega: SEDEX\n" in body and "Chega em" not in body
    # QA walk: "Pagamento: Pix — Pago" alone on a cancellation whose refund is on its way
    assert "Reembolso em andamento: -R$ 80,00\n" in body
    assert "Pagamento: Pix — Pago; reembolso em andamento\n" in body
    html = canceled.alternatives[0][0]
    assert "Itens cancelados" in html and "2× Produto CAM" in html and "1× Produto BONE" in html
    assert "Chega em" not in html


def test_delivered_e_mail_promises_no_arrival_any_more(django_capture_on_commit_callbacks):
    order = _place(django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    shipped = mail.outbox[-1]
    assert "Entrega: SEDEX · Chega em 3 a 5 dias úteis" in shipped.body  # on its way: the estimate helps
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=order.public_id)
    delivered = mail.outbox[-1]
    assert delivered.subject == f"Loja Exemplo: Seu pedido #{order.number} foi entregue"
    assert "Entrega: SEDEX\n" in delivered.body and "Chega em" not in delivered.body
    assert "Chega em" not in delivered.alternatives[0][0]
    # and it says until when a return may be asked, and where (the page said it; the e-mail did not)
    arrived = order.fulfillment_events.get(type="delivered").occurred_at
    until = date_format(localtime(arrived + timedelta(days=7)), "SHORT_DATE_FORMAT")
    sentence = f"Se precisar devolver algum item, peça pela página do pedido até {until} (7 dias após a entrega)."
    assert sentence in delivered.body and sentence in delivered.alternatives[0][0]


def test_shipped_e_mail_dates_the_arrival_from_the_quotes_days(django_capture_on_commit_callbacks):
    """An order that kept the quote's business days (3 to 5, from shipping): the shipped e-mail gives the dates the
    order page gives, counted from the shipment (Friday 4 Dec 2026: Wed 9 to Fri 11), not only the words."""
    placed = replace(make_checkout(lines=[("CAM", 3000, 2)], freight=800), fulfillment_days=(3, 5))
    with django_capture_on_commit_callbacks(execute=True):
        order = order_place_from_checkout(checkout=placed)
    with django_capture_on_commit_callbacks(execute=True):
        fulfillment_event_create(
            order_id=order.public_id,
            type="shipped",
            tracking_number="BR123456785BR",
            occurred_at=datetime(2026, 12, 4, 11, 0, tzinfo=ZoneInfo("America/Sao_Paulo")),
        )
    shipped = mail.outbox[-1]
    assert "Entrega: SEDEX · Previsão de entrega entre 09/12 e 11/12" in shipped.body
    assert "SEDEX · Previsão de entrega entre 09/12 e 11/12" in shipped.alternatives[0][0]


def test_english_shipped_e_mail_dates_the_arrival_in_english(django_capture_on_commit_callbacks):
    """The estimate was worded before the e-mail switched to the buyer's language: an English shipped e-mail said
    "Previsão de entrega entre 09/12 e 11/12"."""
    placed = replace(make_checkout(lines=[("CAM", 3000, 2)], freight=800, language="en"), fulfillment_days=(3, 5))
    with django_capture_on_commit_callbacks(execute=True):
        order = order_place_from_checkout(checkout=placed)
    assert "Delivery: SEDEX · Arrives in 3 to 5 business days" in mail.outbox[-1].body  # not shipped: no dates yet
    with django_capture_on_commit_callbacks(execute=True):
        fulfillment_event_create(
            order_id=order.public_id,
            type="shipped",
            tracking_number="BR123456785BR",
            occurred_at=datetime(2026, 12, 4, 11, 0, tzinfo=ZoneInfo("America/Sao_Paulo")),
        )
    shipped = mail.outbox[-1]
    assert "Delivery: SEDEX · Estimated delivery between 12/09 and 12/11" in shipped.body


def test_english_e_mail(django_capture_on_commit_callbacks):
    _place(django_capture_on_commit_callbacks, language="en")
    body = mail.outbox[0].body
    assert "Items:" in body and "Payment: Pix — Paid" in body and "Follow your order" in body
    assert "Total: R$80.00" in body  # amounts as English writes them (CLDR)


def test_console_output_is_readable_utf8_8bit(django_capture_on_commit_callbacks):
    order = _place(django_capture_on_commit_callbacks)
    message = build_order_email(order, "placed", to="ana@example.com.br")
    stream = io.StringIO()
    ConsoleBackend(stream=stream).send_messages([message])
    output = stream.getvalue()
    assert "Content-Transfer-Encoding: quoted-printable" not in output
    assert "Content-Transfer-Encoding: base64" not in output
    assert output.count("Content-Transfer-Encoding: 8bit") == 2  # text and HTML
    assert "Olá, Ana!" in output and "Jardim Paulista · São Paulo/SP" in output
    assert order.permalink_url in output  # a long line, still whole


def test_cancelling_the_rest_of_a_partly_shipped_order_e_mails_what_was_cancelled(django_capture_on_commit_callbacks):
    """Gap: cancelling what had not shipped sent "Seu pedido foi cancelado. Você pagou R$ 80,00: o reembolso
    volta…" while the shirts were on their way and only the cap's money came back; a later full cancel could not
    e-mail again. The e-mail names what was cancelled and the money of those items, and says the rest is coming."""
    order = _place(django_capture_on_commit_callbacks)
    shirt = order.lines.get(sku="CAM")
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 2)])
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order_id=order.public_id, reason="Sem estoque")
    canceled = mail.outbox[-1]
    assert canceled.subject == f"Loja Exemplo: Parte do seu pedido #{order.number} foi cancelada"
    assert (
        f"Do seu pedido #{order.number}, foi cancelado o que ainda não tinha sido enviado: 1× Produto BONE. O que já "
        "foi enviado segue para você. O reembolso de R$ 18,00 desses itens volta pela mesma conta usada no Pix."
    ) in canceled.body
    assert "Você pagou R$ 80,00" not in canceled.body
    assert "O reembolso de R$ 18,00 desses itens" in canceled.alternatives[0][0]


def test_refund_e_mail_after_a_return_lists_what_was_refunded_and_the_items_bought(django_capture_on_commit_callbacks):
    """QA walk: the refund e-mail after a return said "Itens:" over an empty list (the returned line is at 0 units)
    above "Subtotal R$ 59,90". It names what the money is for (quantity, item, amount, adding up to the refund) and
    lists the items as bought, which the subtotal counts."""
    placed = make_checkout(lines=[("BLUSA", 5990, 1)], freight=800)
    with django_capture_on_commit_callbacks(execute=True):
        order = order_place_from_checkout(checkout=placed)
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
        order_mark_delivered(order_id=order.public_id)
    line = order.lines.get(sku="BLUSA").public_id
    with django_capture_on_commit_callbacks(execute=True):
        request = return_request_create(
            order_id=order.public_id, lines=[LineQuantity(line, 1)], reason_code="defective"
        )
        return_request_approve(return_id=request.public_id)
        return_request_receive(return_id=request.public_id)
        return_request_refund(return_id=request.public_id)
    refund = order.adjustments.get(type="refund")
    with django_capture_on_commit_callbacks(execute=True):
        adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    refunded = mail.outbox[-1]
    assert refunded.subject == f"Loja Exemplo: Reembolso do pedido #{order.number}"
    body = refunded.body
    # every item back as defective: the freight goes back too (CDC art. 18 §1 II), named on its own line
    assert (
        "Reembolso referente a:\n- 1× Produto BLUSA — R$ 59,90\n- Frete e outros valores — R$ 8,00\n"
        "Total reembolsado: R$ 67,90\n"
    ) in body
    assert "Itens comprados:\n- 1× Produto BLUSA (BLUSA) — R$ 59,90\n\nSubtotal: R$ 59,90" in body
    assert "Itens:\n\n" not in body
    html = refunded.alternatives[0][0]
    assert "Reembolso referente a" in html and "1× Produto BLUSA" in html and "Total reembolsado" in html


def test_refund_e_mail_names_the_freight_a_withdrawal_gives_back(django_capture_on_commit_callbacks):
    """A withdrawal (CDC art. 49) of every item gives back the freight too: the rows still add up to the refund."""
    placed = make_checkout(lines=[("BLUSA", 5990, 1)], freight=800)
    with django_capture_on_commit_callbacks(execute=True):
        order = order_place_from_checkout(checkout=placed)
    line = order.lines.get(sku="BLUSA").public_id
    with django_capture_on_commit_callbacks(execute=True):
        refund = order_refund(order_id=order.public_id, amount=6790, reason="Arrependimento",
                              lines=[LineQuantity(line, 1)])  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    body = mail.outbox[-1].body
    assert (
        "Reembolso referente a:\n- 1× Produto BLUSA — R$ 59,90\n- Frete e outros valores — R$ 8,00\n"
        "Total reembolsado: R$ 67,90\n"
    ) in body


@pytest.mark.parametrize("language", ["pt-br", "en"])
def test_the_e_mails_translate_tag_writes_what_djangos_writes(language):
    """orders_i18n's `{% translate %}` (issue 34: a literal translated directly, not through a lazy round trip)."""
    engine = engines["django"].engine
    uses = [
        '"Itens"', '"Pagamento"', '"Frete 100%% grátis"', '"100% off"', '"a < b & c"', '""', '"Itens" as x',
        '"Itens" noop', '"Itens"|upper', '"Itens" context "email"', "kind", '"Itens"|default:"x"',
    ]  # fmt: skip
    for use in uses:
        for escape in ("on", "off"):
            body = f"{{% autoescape {escape} %}}[{{% translate {use} %}}]{{{{ x }}}}{{% endautoescape %}}"
            django = engine.from_string("{% load i18n %}" + body)
            ours = engine.from_string("{% load i18n orders_i18n %}" + body)
            with translation.override(language):
                expected = django.render(Context({"kind": "<b>", "x": ""}))
                assert ours.render(Context({"kind": "<b>", "x": ""})) == expected, (use, escape)
    with translation.override("en"):
        assert engine.from_string('{% load i18n orders_i18n %}{% translate "Itens" %}').render(Context()) == "Items"


def test_the_e_mail_templates_translate_their_literals_directly():
    found = 0
    for path in sorted((Path(__file__).resolve().parents[2] / "templates" / "orders" / "email").iterdir()):
        nodes = get_template(f"orders/email/{path.name}").template.nodelist.get_nodes_by_type(TranslateNode)
        assert all(isinstance(node, LiteralTranslateNode) for node in nodes), path.name
        found += len(nodes)
    assert found > 40


GOLDEN = Path(__file__).parent / "fixtures" / "order_emails.expected.txt"


def _golden_dump(order_numbers: dict[int, str], dynamic: dict[str, str]) -> str:
    """Every e-mail in the outbox as the SMTP backend puts it on the wire (headers, both bodies as encoded), then its
    text and HTML bodies as rendered; what differs between runs (order number, permalink token, Date, Message-ID,
    boundary, the returns deadline counted from today) replaced by names."""
    out = []
    for index, message in enumerate(mail.outbox):
        wire = message.message(policy=email.policy.SMTP).as_bytes().decode("utf-8").replace("\r\n", "\n")
        wire = re.sub(r"(?m)^(Date|Message-ID): .*$", r"\1: <varies>", wire)
        wire = re.sub(r"===============\d+==|=_[0-9a-f]{24}", "BOUNDARY", wire)
        parts = [wire, "--- text ---", message.body, "--- html ---", message.alternatives[0][0]]
        text = "\n".join(parts)
        for value, name in [*dynamic.items(), *((f"#{number}", f"#{name}") for number, name in order_numbers.items())]:
            # also where quoted-printable broke the line inside the value ("=" at the end of the line)
            text = re.sub("(?:=\n)?".join(map(re.escape, value)), name, text)
        out.append(f"===== e-mail {index}: to {message.to} =====\n{text}")
    return "\n".join(out) + "\n"


def test_order_e_mails_are_byte_identical_to_the_stored_rendering(django_capture_on_commit_callbacks, settings):
    """Issue 34 (worker CPU per order): rendering and building the e-mails faster must not change a byte of what the
    buyer gets. Placed (pt-BR, English, card with installments, pickup), partial and full shipment and delivery,
    refund, partial and full cancellation — the wire bytes (subject, From, To, Reply-To, every header, encoded
    bodies) and the rendered text and HTML, against the rendering of the code before the change
    (fixtures/order_emails.expected.txt)."""
    settings.BCP_PUBLIC_URL = "https://loja.example.com.br"
    numbers: dict[int, str] = {}
    dynamic: dict[str, str] = {}

    def track(order, name):
        numbers[order.number] = name
        dynamic[order.permalink_token] = f"TOKEN-{name}"
        return order

    first = track(_place(django_capture_on_commit_callbacks), "A")
    track(_place(django_capture_on_commit_callbacks, language="en"), "B")
    track(_place(django_capture_on_commit_callbacks, payment_type="card"), "C")
    placed = replace(make_checkout(method="pickup"), destination=STORE, fulfillment_title="Retirada na loja")
    with django_capture_on_commit_callbacks(execute=True):
        track(order_place_from_checkout(checkout=placed), "D")
    shirt = first.lines.get(sku="CAM")
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=first.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 2)])
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=first.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=first.public_id, tracking_number="BR987654326BR")
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=first.public_id)
    arrived = first.fulfillment_events.filter(type="delivered").order_by("occurred_at")
    for event in arrived:
        dynamic[date_format(localtime(event.occurred_at + timedelta(days=7)), "SHORT_DATE_FORMAT")] = "DEADLINE"
    refunded = track(_place(django_capture_on_commit_callbacks), "E")
    with django_capture_on_commit_callbacks(execute=True):
        refund = order_refund(order_id=refunded.public_id, amount=1500, reason="Avaria")
    with django_capture_on_commit_callbacks(execute=True):
        adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order_id=refunded.public_id, reason="Sem estoque", refund=False)
    partly = track(_place(django_capture_on_commit_callbacks), "F")
    shirt = partly.lines.get(sku="CAM")
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=partly.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 2)])
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order_id=partly.public_id, reason="Sem estoque")
    dump = _golden_dump(numbers, dynamic)
    if os.environ.get("ORDER_EMAILS_WRITE_GOLDEN"):  # to regenerate after a deliberate change of wording
        GOLDEN.write_text(dump, encoding="utf-8")
    assert len(mail.outbox) == 14
    assert dump == GOLDEN.read_text(encoding="utf-8")


STEPS_GOLDEN = Path(__file__).parent / "fixtures" / "step_emails.expected.txt"


def test_carrier_step_e_mails_are_byte_identical_to_the_stored_rendering(django_capture_on_commit_callbacks, settings):
    """The carrier's steps the buyer is told of (out for delivery; delivery failed or waiting at the agency, with the
    carrier's note), in Portuguese and English: the shipment's tracking code and link, the parcel's items, the order
    page (fixtures/step_emails.expected.txt; regenerate with ORDER_EMAILS_WRITE_GOLDEN=1 after a deliberate change)."""
    settings.BCP_PUBLIC_URL = "https://loja.example.com.br"
    numbers: dict[int, str] = {}
    dynamic: dict[str, str] = {}
    for language, name in (("pt-br", "A"), ("en", "B")):
        order = _place(django_capture_on_commit_callbacks, language=language)
        numbers[order.number] = name
        dynamic[order.permalink_token] = f"TOKEN-{name}"
        shirt = order.lines.get(sku="CAM")
        with django_capture_on_commit_callbacks(execute=True):
            order_ship(
                order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 2)]
            )
        mail.outbox.clear()
        for step, note in (
            ("in_transit", "Objeto em transferência - por favor aguarde"),
            ("out_for_delivery", "Objeto saiu para entrega ao destinatário"),
            ("failed_attempt", "Objeto aguardando retirada no endereço indicado"),
        ):
            with django_capture_on_commit_callbacks(execute=True):
                fulfillment_event_create(
                    order_id=order.public_id, type=step, tracking_number="BR123456785BR", description=note
                )
        assert len(mail.outbox) == 2  # "em trânsito" sends nothing
        dump = _golden_dump(numbers, dynamic)
        numbers.clear()
        if language == "pt-br":
            first = dump
    # staff's "resend e-mail" of a step: the same e-mail (the shipment of the latest such step)
    for index, kind in enumerate(("out_for_delivery", "delivery_failed")):
        again = build_order_email(order, kind, ref="resend:1", to="ana@example.com.br")
        assert (again.subject, again.body) == (mail.outbox[index].subject, mail.outbox[index].body)
    both = first + dump
    if os.environ.get("ORDER_EMAILS_WRITE_GOLDEN"):
        STEPS_GOLDEN.write_text(both, encoding="utf-8")
    assert both == STEPS_GOLDEN.read_text(encoding="utf-8")
