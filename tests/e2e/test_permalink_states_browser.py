"""The buyer's order page in every state, rendered by a real browser on a 360 px phone (issue 16 §5): paid,
partially shipped, shipped, delivered, ready for pickup, picked up, cancelled (refund under way), cancelled
and refunded, partially refunded, awaiting payment. Each state: the status words, the structure that state
must (not) show, no horizontal scroll, and a screenshot (kept in SCREENSHOT_DIR when set, for a person).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from orders.models import Order
from orders.services import (
    adjustment_mark_refund_result,
    fulfillment_event_create,
    order_cancel,
    order_mark_delivered,
    order_pickup_done,
    order_pickup_ready,
    order_place_from_checkout,
    order_refund,
    order_ship,
)
from orders.types import LineQuantity
from tests.e2e.admin_browser import launch, needs_chromium
from tests.orders.conftest import make_checkout

pytestmark = [pytest.mark.e2e, needs_chromium]
SCREENSHOT_DIR = os.environ.get("SCREENSHOT_DIR", "")
TWO_ITEMS = [("CAM", 3000, 2), ("BONE", 2000, 1)]
ARRIVAL = "Previsão de entrega: Chega em 3 a 5 dias úteis a partir do envio"  # after shipping, not only "SEDEX"


def _place(**kwargs: object) -> Order:
    # Paid outside the shop: its refunds are given back by staff, so they stay "em andamento" until marked (a
    # card or Pix refund goes to the gateway/PSP through the outbox at once).
    return order_place_from_checkout(checkout=make_checkout(lines=TWO_ITEMS, payment_type="manual", **kwargs))


def _paid() -> Order:
    return _place()


def _partially_shipped() -> Order:
    order = _place()
    shirt = order.lines.get(sku="CAM")
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 2)])
    return order


def _shipped() -> Order:
    order = _place()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    return order


def _shipped_dated() -> Order:
    # placed with the quote's business days (3 to 5 from shipping) and shipped on Friday 4 Dec 2026
    checkout = replace(make_checkout(lines=TWO_ITEMS, payment_type="manual"), fulfillment_days=(3, 5))
    order = order_place_from_checkout(checkout=checkout)
    friday = datetime(2026, 12, 4, 15, 0, tzinfo=ZoneInfo("America/Sao_Paulo"))
    fulfillment_event_create(
        order_id=order.public_id, type="shipped", tracking_number="BR123456785BR", occurred_at=friday
    )
    return order


def _delivered() -> Order:
    order = _shipped()
    order_mark_delivered(order_id=order.public_id)
    return order


def _ready_for_pickup() -> Order:
    order = _place(method="pickup", freight=0)
    order_pickup_ready(order_id=order.public_id)
    return order


def _picked_up() -> Order:
    order = _ready_for_pickup()
    order_pickup_done(order_id=order.public_id)
    return order


def _cancelled() -> Order:
    order = _place()
    order_cancel(order_id=order.public_id, reason="Sem estoque")
    return order


def _cancelled_refunded() -> Order:
    order = _cancelled()
    refund = order.adjustments.get(type="refund")
    adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    return order


def _partially_refunded() -> Order:
    order = _place()
    refund = order_refund(order_id=order.public_id, amount=1500, reason="Desconto combinado")
    adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    return order


def _awaiting_payment() -> Order:
    return _place(paid=False)


# state: (builder, status words, texts the page must show, test ids it must not have)
STATES: dict[str, tuple[Callable[[], Order], str, list[str], list[str]]] = {
    "paid": (_paid, "Pedido recebido", ["Estamos preparando seu pedido.", "R$ 88,00"], ["order-closed"]),
    "partially_shipped": (
        _partially_shipped, "Enviado em parte", ["BR123456785BR", "A caminho", ARRIVAL], ["order-closed"],
    ),
    "shipped": (_shipped, "Enviado", ["BR123456785BR", ARRIVAL], ["order-expectations", "order-closed"]),
    "shipped_dated": (
        _shipped_dated, "Enviado", ["Previsão de entrega: entre 09/12 e 11/12"], ["order-expectations", "order-closed"],
    ),
    "delivered": (_delivered, "Entregue", ["Entregue"], ["order-expectations", "order-on-the-way", "order-closed"]),
    "ready_for_pickup": (_ready_for_pickup, "Pronto para retirada", ["Pronto para retirada"], ["order-closed"]),
    "picked_up": (_picked_up, "Entregue", ["Retirado na loja"], ["order-expectations", "order-closed"]),
    "cancelled": (
        _cancelled, "Cancelado",
        ["Este pedido foi cancelado e não será enviado.", "Reembolso de R$ 88,00 em andamento."],
        ["order-expectations"],
    ),
    "cancelled_refunded": (
        _cancelled_refunded, "Cancelado", ["Reembolso de R$ 88,00 concluído"], ["order-expectations"],
    ),
    "partially_refunded": (
        _partially_refunded, "Pedido recebido", ["Valor final do pedido", "R$ 73,00"], ["order-closed"],
    ),
    "awaiting_payment": (_awaiting_payment, "Pedido recebido", ["Aguardando a confirmação do pagamento."], []),
}  # fmt: skip


def test_every_order_state_renders_on_a_360px_phone(live_server, transactional_db, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    pages = {state: (builder(), words, texts, absent) for state, (builder, words, texts, absent) in STATES.items()}
    shots = Path(SCREENSHOT_DIR) if SCREENSHOT_DIR else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_context(locale="pt-BR", viewport={"width": 360, "height": 740}).new_page()
            for state, (order, words, texts, absent) in pages.items():
                page.goto(f"{live_server.url}/orders/{order.permalink_token}")
                expect(page.get_by_test_id("order-status")).to_contain_text(words)
                body = page.get_by_test_id("order-page")
                for text in texts:
                    expect(body).to_contain_text(text)
                for test_id in absent:
                    assert page.get_by_test_id(test_id).count() == 0, (state, test_id)
                width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
                assert width <= inner, (state, width, inner)
                shot = page.screenshot(path=str(shots / f"order-{state}-360.png"), full_page=True)
                assert shot.startswith(b"\x89PNG"), state
        finally:
            browser.close()


def _on_its_way_with_carrier_steps(language: str) -> Order:
    """Shipped by Correios (dated: the quote's 3 to 5 business days), then the carrier's scans: in transit, out for
    delivery, a failed attempt and the parcel waiting at the agency, each with the Correios' own words."""
    checkout = replace(
        make_checkout(lines=TWO_ITEMS, payment_type="manual", language=language), fulfillment_days=(3, 5)
    )
    order = order_place_from_checkout(checkout=checkout)
    friday = datetime(2026, 12, 4, 15, 0, tzinfo=ZoneInfo("America/Sao_Paulo"))
    fulfillment_event_create(
        order_id=order.public_id, type="shipped", tracking_number="BR123456785BR", occurred_at=friday
    )
    for step, hours, note in (
        ("in_transit", 20, "Objeto em transferência - por favor aguarde"),
        ("out_for_delivery", 90, "Objeto saiu para entrega ao destinatário"),
        ("failed_attempt", 96, "Carteiro não atendido"),
        ("failed_attempt", 114, "Objeto aguardando retirada no endereço indicado"),
    ):
        fulfillment_event_create(
            order_id=order.public_id, type=step, tracking_number="BR123456785BR", description=note,
            occurred_at=friday + timedelta(hours=hours),
        )  # fmt: skip
    return order


WORDS = {
    "pt-br": {
        "step": "Entrega não realizada",
        "failed": "Veja no rastreio abaixo se ela vai tentar de novo ou onde retirar o pacote",
        "waiting": "Tentativa de entrega sem sucesso — Objeto aguardando retirada no endereço indicado",
        "out": "Saiu para entrega",
        "not": ["A caminho", "Objeto saiu para entrega"],
    },
    "en": {
        "step": "Delivery failed",
        "failed": "See the tracking below for a new attempt or where to pick the parcel up",
        "waiting": "Delivery attempt failed — Waiting for pickup at the address shown in the tracking",
        "out": "Out for delivery",
        "not": ["Objeto", "Carteiro", "Chega", "On its way"],
    },
}


@pytest.mark.parametrize("language", ["pt-br", "en"])
def test_a_shipped_order_with_the_carriers_steps_reads_right_on_a_360px_phone(
    live_server, transactional_db, tmp_path: Path, language: str
) -> None:
    """QA walk at 360 px of a shipped order the carrier could not deliver: the page said "A caminho" and an estimate
    while the parcel waited at the agency, the Correios' Portuguese notes on an English page (some only saying the
    step again), and the same items and code on every scan."""
    from playwright.sync_api import expect, sync_playwright

    order = _on_its_way_with_carrier_steps(language)
    shots = Path(SCREENSHOT_DIR) if SCREENSHOT_DIR else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_context(locale=language, viewport={"width": 360, "height": 740}).new_page()
            page.goto(f"{live_server.url}/orders/{order.permalink_token}")
            width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert width <= inner, (width, inner)
            page.screenshot(path=str(shots / f"order-carrier-steps-{language}-360.png"), full_page=True)
            words = WORDS[language]
            # where the parcel is, not "A caminho" with an arrival estimate while it waits at the agency
            expect(page.get_by_test_id("on-the-way-step")).to_have_text(words["step"])
            expect(page.get_by_test_id("delivery-failed")).to_contain_text(words["failed"])
            assert page.get_by_test_id("arrival-estimate").count() == 0
            timeline = page.get_by_test_id("order-events")
            expect(timeline).to_contain_text(words["waiting"])
            expect(timeline).to_contain_text(words["out"] + "\n")  # its note only said the step again
            # one parcel: its code and items once (on the shipment), not on every scan of a phone's screen
            expect(page.get_by_test_id("tracking-link")).to_have_count(1)
            text = page.get_by_test_id("order-page").inner_text()
            assert text.count("2× Produto CAM, 1× Produto BONE") == 2  # on the way, and the shipment
            for portuguese in words["not"]:
                assert portuguese not in text, portuguese
        finally:
            browser.close()
