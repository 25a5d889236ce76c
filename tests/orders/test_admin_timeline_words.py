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
from orders.models import OrderEvent
from orders.services import order_place_from_checkout
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db

# The modules that write order timeline events: `timeline(order, "kind", …)`, `OrderEvent(…, kind="kind")` and
# `order_event_record(…, kind="kind")`.
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
        kinds |= set(re.findall(r'\b(?:OrderEvent|order_event_record|order_event_row)\([^)]*?\bkind="(\w+)"', source,
                                re.S))  # fmt: skip
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
