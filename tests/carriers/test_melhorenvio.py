"""The Melhor Envio adapter against a local fake of its API v2 (tests/carriers/fake_melhorenvio.py): real HTTP
through the kernel's client, OAuth2, quotes, the cart → checkout → generate → print purchase, cancel, tracking
and the signed webhook."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from carriers import (
    Address,
    CarrierRejected,
    CarrierUnavailable,
    LabelItem,
    LabelRequest,
    LabelState,
    MelhorEnvio,
    Parcel,
    ServiceQuote,
    TrackingEvent,
    WebhookRejected,
)
from carriers.melhorenvio import parse_webhook
from kernel.http import Deadline
from tests.carriers.fake_melhorenvio import CLIENT_SECRET, PDF, TOKEN, FakeMelhorEnvio, fake_melhorenvio

ONE_SHIRT = (Parcel(275, 27, 18, 9, 7990),)
TEN_SHIRTS = (Parcel(2070, 36, 27, 18, 79900),)
SENDER = Address("Loja Exemplo", "01310100", "Avenida Paulista", "1578", district="Bela Vista", city="São Paulo",
                 state="SP", phone="11987654321", email="loja@example.com", document="11222333000181")  # fmt: skip
RECIPIENT = Address("Maria Silva", "20040002", "Rua da Assembleia", "10", district="Centro", city="Rio de Janeiro",
                    state="RJ", phone="21987654321", email="maria@example.com", document="52998224725")  # fmt: skip


@pytest.fixture
def fake() -> Iterator[FakeMelhorEnvio]:
    with fake_melhorenvio() as state:
        yield state


def _adapter(fake: FakeMelhorEnvio, **kwargs: str) -> MelhorEnvio:
    return MelhorEnvio(base_url=fake.url, **({"token": TOKEN} | kwargs))


def _request(service: str = "melhorenvio:2") -> LabelRequest:
    return LabelRequest("lbl_test1", service, SENDER, RECIPIENT, ONE_SHIRT, (LabelItem("Camiseta", 1, 7990),))


def test_quote_prices_by_weight_and_size_and_leaves_out_services_with_an_error(fake: FakeMelhorEnvio) -> None:
    one = _adapter(fake).quote(parcels=ONE_SHIRT, from_cep="01310100", to_cep="20040002", deadline=Deadline(5))
    ten = _adapter(fake).quote(parcels=TEN_SHIRTS, from_cep="01310100", to_cep="20040002", deadline=Deadline(5))
    assert one == [
        ServiceQuote("melhorenvio:1", "Correios", "PAC", 1500, 5, 8),
        ServiceQuote("melhorenvio:2", "Correios", "SEDEX", 2200, 1, 3),
        ServiceQuote("melhorenvio:3", "Jadlog", ".Package", 1800, 3, 5),
    ]
    # 2.07 kg real, 2.916 kg cubic: two kg above the first.
    assert [q.price for q in ten] == [1500 + 2 * 400, 2200 + 2 * 700, 1800 + 2 * 500]
    assert fake.calculations[0] == {
        "from": {"postal_code": "01310100"}, "to": {"postal_code": "20040002"},
        "products": [{"id": "volume-1", "width": 18, "height": 9, "length": 27, "weight": 0.275,
                      "insurance_value": 79.9, "quantity": 1}],
    }  # fmt: skip
    heavy = _adapter(fake).quote(
        parcels=(Parcel(12_000, 40, 30, 20),), from_cep="01310100", to_cep="20040002", deadline=Deadline(5)
    )
    assert [q.code for q in heavy] == ["melhorenvio:1", "melhorenvio:2"]  # Jadlog answered "error" over 10 kg


def test_oauth2_refresh_token_gets_the_access_token_once(fake: FakeMelhorEnvio) -> None:
    adapter = _adapter(fake, token="", client_id="42", client_secret=CLIENT_SECRET, refresh_token="refresh-1")
    adapter.quote(parcels=ONE_SHIRT, from_cep="01310100", to_cep="20040002", deadline=Deadline(5))
    adapter.quote(parcels=ONE_SHIRT, from_cep="01310100", to_cep="22000000", deadline=Deadline(5))
    assert [r for r in fake.requests if r[1] == "/oauth/token"] == [("POST", "/oauth/token")]


def test_purchase_goes_cart_checkout_generate_and_saves_every_step(fake: FakeMelhorEnvio) -> None:
    saved: list[tuple[str, str]] = []
    state = _adapter(fake).buy(
        request=_request(), state=LabelState(), deadline=Deadline(5),
        save=lambda s: saved.append((s.status, s.remote_id)),
    )  # fmt: skip
    order = next(iter(fake.orders.values()))
    assert state.status == "generated" and state.remote_id == order["id"] and state.cost == 2200
    assert [s for s, _ in saved] == ["pending", "pending", "purchased", "generated"]
    assert fake.checkouts == [order["id"]] and fake.balance == 100_000 - 2200
    cart = fake.carts[0]
    assert cart["service"] == 2 and cart["options"]["tags"] == [{"tag": "lbl_test1", "url": None}]
    assert cart["volumes"] == [{"height": 9, "width": 18, "length": 27, "weight": 0.275}]
    assert _adapter(fake).label_pdf(state=state, deadline=Deadline(5)) == PDF


def test_a_rerun_after_an_unanswered_checkout_asks_the_order_and_never_pays_twice(fake: FakeMelhorEnvio) -> None:
    fake.hang_after["/api/v2/me/shipment/checkout"] = 1.5  # paid at Melhor Envio; the answer never arrives
    state = LabelState()
    with pytest.raises(CarrierUnavailable):
        _adapter(fake).buy(request=_request(), state=state, deadline=Deadline(1.0), save=lambda s: None)
    assert state.status == "pending" and state.extra["checkout"] == "sent"
    again = _adapter(fake).buy(request=_request(), state=state, deadline=Deadline(5), save=lambda s: None)
    assert again.status == "generated"
    assert len(fake.checkouts) == 1 and len(fake.carts) == 1 and fake.balance == 100_000 - 2200


def test_no_balance_is_a_clear_portuguese_refusal_and_nothing_is_paid(fake: FakeMelhorEnvio) -> None:
    fake.balance = 100
    with pytest.raises(CarrierRejected) as refused:
        _adapter(fake).buy(request=_request(), state=LabelState(), deadline=Deadline(5), save=lambda s: None)
    assert refused.value.message == "Melhor Envio recusou: Saldo insuficiente para a compra das etiquetas."
    assert fake.checkouts == [] and fake.balance == 100


def test_a_refused_cart_names_the_field(fake: FakeMelhorEnvio) -> None:
    request = LabelRequest("lbl_x", "melhorenvio:2", SENDER, Address("Maria", ""), ONE_SHIRT)
    with pytest.raises(CarrierRejected) as refused:
        _adapter(fake).buy(request=request, state=LabelState(), deadline=Deadline(5), save=lambda s: None)
    assert refused.value.message == "Melhor Envio recusou: to.postal_code: O campo CEP do destinatário é obrigatório."


@pytest.mark.parametrize("mode", ["down", "garbage"])
def test_an_unavailable_or_garbled_carrier_is_unavailable(fake: FakeMelhorEnvio, mode: str) -> None:
    fake.mode = mode
    with pytest.raises(CarrierUnavailable):
        _adapter(fake).quote(parcels=ONE_SHIRT, from_cep="01310100", to_cep="20040002", deadline=Deadline(5))


def test_cancel_within_the_window_then_refused_once_posted(fake: FakeMelhorEnvio) -> None:
    state = _adapter(fake).buy(request=_request(), state=LabelState(), deadline=Deadline(5), save=lambda s: None)
    _adapter(fake).cancel(state=state, deadline=Deadline(5))
    assert fake.orders[state.remote_id]["status"] == "canceled"
    posted = _adapter(fake).buy(request=_request(), state=LabelState(), deadline=Deadline(5), save=lambda s: None)
    fake.orders[posted.remote_id]["status"] = "posted"
    with pytest.raises(CarrierRejected) as refused:
        _adapter(fake).cancel(state=posted, deadline=Deadline(5))
    assert "não permite mais cancelar" in refused.value.message


def test_tracking_reads_the_order_timestamps_in_brasilia_time(fake: FakeMelhorEnvio) -> None:
    state = _adapter(fake).buy(request=_request(), state=LabelState(), deadline=Deadline(5), save=lambda s: None)
    fake.orders[state.remote_id].update(status="posted", posted_at="2026-12-05 09:30:00")
    events = _adapter(fake).tracking(state=state, deadline=Deadline(5))
    code = fake.orders[state.remote_id]["tracking"]
    assert events == [
        TrackingEvent(f"{state.remote_id}:posted", "posted", datetime(2026, 12, 5, 12, 30, tzinfo=UTC), "", code,
                      state.remote_id)
    ]  # fmt: skip


def test_webhook_signature_is_base64_hmac_sha256_of_the_raw_body(fake: FakeMelhorEnvio) -> None:
    state = _adapter(fake).buy(request=_request(), state=LabelState(), deadline=Deadline(5), save=lambda s: None)
    body = fake.webhook(state.remote_id, "order.delivered", status="delivered", delivered_at="2026-12-06 14:00:00")
    events = parse_webhook(secret=CLIENT_SECRET, headers={"X-ME-Signature": fake.sign(body)}, body=body)
    assert [(e.kind, e.occurred_at, e.remote_id) for e in events] == [
        ("delivered", datetime(2026, 12, 6, 17, 0, tzinfo=UTC), state.remote_id)
    ]
    for headers in ({}, {"X-ME-Signature": fake.sign(body, "other-secret")}, {"X-ME-Signature": fake.sign(b"{}")}):
        with pytest.raises(WebhookRejected):
            parse_webhook(secret=CLIENT_SECRET, headers=headers, body=body)
    quiet = fake.webhook(state.remote_id, "order.generated")
    assert parse_webhook(secret=CLIENT_SECRET, headers={"x-me-signature": fake.sign(quiet)}, body=quiet) == []
