"""QA walk (admin in Portuguese): every kind the code writes on an order's timeline has staff words; the order page
never shows "label requested" or "return approved"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

import orders.services
import shop.freight.labels
import shop.invoicing.lifecycle
from orders.labels import TIMELINE_KINDS, timeline_kind_label
from orders.models import OrderEvent, OrderLine
from orders.services import order_mark_delivered, order_place_from_checkout, order_return, order_ship
from orders.types import LineQuantity
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db

# The modules that write order timeline events: `timeline(order, "kind", …)`, `OrderEvent(…, kind="kind")`,
# `new_row(OrderEvent, …, kind="kind")` and `order_event_record(…, kind="kind")`.
WRITERS = [
    *Path(orders.services.__file__).parent.glob("*.py"),
    Path(shop.freight.labels.__file__),
    Path(shop.invoicing.lifecycle.__file__),
]


def _written_kinds() -> set[str]:
    kinds: set[str] = set()
    for path in WRITERS:
        source = path.read_text()
        kinds |= set(re.findall(r'\btimeline\(\s*\w+,\s*"(\w+)"', source))
        writers = r"\b(?:OrderEvent|order_event_record|order_event_row|new_row)\("
        kinds |= set(re.findall(writers + r'[^)]*?\bkind="(\w+)"', source, re.S))
    return kinds


def test_every_timeline_kind_the_code_writes_has_portuguese_words() -> None:
    kinds = _written_kinds()
    assert {"placed", "return_requested", "return_approved", "return_refunded", "label_requested",
            "label_purchased", "label_failed", "tracking_corrected"} <= kinds  # the scan finds them  # fmt: skip
    missing = sorted(kind for kind in kinds if kind not in TIMELINE_KINDS)
    assert missing == []


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("label_requested", "Etiqueta solicitada"),
        ("label_purchased", "Etiqueta comprada"),
        ("label_failed", "Etiqueta não comprada"),
        ("label_canceled", "Etiqueta cancelada"),
        ("return_requested", "Devolução solicitada"),
        ("return_approved", "Devolução aprovada"),
        ("return_rejected", "Devolução recusada"),
        ("return_refunded", "Devolução encerrada (valor a devolver)"),
        ("tracking_corrected", "Rastreio corrigido"),
        ("credit_note", "Vale-troca emitido"),
        ("returned_to_sender", "Devolvido ao remetente"),
    ],
)
def test_the_order_page_shows_the_event_in_portuguese(admin_client: Client, kind: str, words: str) -> None:
    order = order_place_from_checkout(checkout=make_checkout())
    OrderEvent.objects.create(order=order, kind=kind, message="Mensagem do evento.", internal=True)
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert f'<td class="field-what"><p>{words}</p></td>' in html
    assert kind.replace("_", " ") not in html
    assert timeline_kind_label(kind) == words


def test_timeline_names_the_items_by_their_titles_not_skus(place_order) -> None:
    """QA walk (a new merchant): the timeline read "Enviado: 1× VEST-FLOR-P-AZ" and "Devolução (1× VEST-FLOR-P-AZ)"
    where the rest of the page names the dress; the steps now name the items as the buyer and staff know them."""
    order = place_order(lines=[("VEST-FLOR-P-AZ", 18990, 2)], freight=1000)
    line = order.lines.get()
    OrderLine.objects.filter(pk=line.pk).update(title="Vestido Midi Floral — P / Azul")
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    order_return(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)], reason="Ficou grande")
    messages = list(order.timeline.order_by("id").values_list("message", flat=True))
    assert "Enviado: 2× Vestido Midi Floral — P / Azul — BR123456785BR" in messages
    assert "Entregue: 2× Vestido Midi Floral — P / Azul" in messages
    assert "Devolução (1× Vestido Midi Floral — P / Azul): Ficou grande" in messages
    assert not [message for message in messages if "× VEST-FLOR-P-AZ" in message]
