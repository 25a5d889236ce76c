"""The Correios adapter against a local fake of the contract APIs (tests/carriers/fake_correios.py): token,
preço/prazo in batch, pre-posting and label, cancel, tracking."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from carriers import CarrierRejected, CarrierUnavailable, Correios, LabelRequest, LabelState, Parcel, ServiceQuote
from carriers.correios import event_kind
from kernel.http import Deadline
from tests.carriers.fake_correios import ACCESS_CODE, CARD, PDF, USER, FakeCorreios, fake_correios
from tests.carriers.test_melhorenvio import ONE_SHIRT, RECIPIENT, SENDER, TEN_SHIRTS


@pytest.fixture
def fake() -> Iterator[tuple[Correios, FakeCorreios]]:
    with fake_correios() as (url, state):
        yield Correios(base_url=url, user=USER, access_code=ACCESS_CODE, posting_card=CARD, contract="9912208555",
                       dr=74), state  # fmt: skip


def test_quote_prices_every_parcel_and_service_in_two_batch_calls(fake: tuple[Correios, FakeCorreios]) -> None:
    correios, state = fake
    one = correios.quote(parcels=ONE_SHIRT, from_cep="01310100", to_cep="20040002", deadline=Deadline(5))
    assert one == [
        ServiceQuote("correios:03220", "Correios", "SEDEX", 2500, 2, 2),
        ServiceQuote("correios:03298", "Correios", "PAC", 1800, 6, 6),
    ]
    two = correios.quote(parcels=ONE_SHIRT + TEN_SHIRTS, from_cep="01310100", to_cep="20040002", deadline=Deadline(5))
    # Two parcels: 0.729 kg and 2.916 kg cubic (two kg above the first) priced one by one and added.
    assert [q.price for q in two] == [2500 + (2500 + 2 * 800), 1800 + (1800 + 2 * 400)]
    assert [r for r in state.requests if r[1] == "/token/v1/autentica/cartaopostagem"] == [
        ("POST", "/token/v1/autentica/cartaopostagem")
    ]


def test_a_service_refused_for_a_parcel_is_left_out(fake: tuple[Correios, FakeCorreios]) -> None:
    correios, _ = fake
    quotes = correios.quote(parcels=(Parcel(31_000, 40, 30, 20),), from_cep="01310100", to_cep="20040002",
                            deadline=Deadline(5))  # fmt: skip
    assert quotes == []


def test_prepostagem_per_parcel_label_pdf_and_cancel(fake: tuple[Correios, FakeCorreios]) -> None:
    correios, state = fake
    request = LabelRequest("lbl_c1", "correios:03220", SENDER, RECIPIENT, ONE_SHIRT + TEN_SHIRTS)
    saved: list[str] = []
    label = correios.buy(request=request, state=LabelState(), deadline=Deadline(5),
                         save=lambda s: saved.append(s.extra.get("ids", "")))  # fmt: skip
    ids = list(state.prepostagens)
    assert label.status == "generated" and label.remote_id == ids[0] and len(ids) == 2
    assert label.tracking_code == state.prepostagens[ids[0]]["codigoObjeto"]
    assert saved[:2] == [ids[0], ",".join(ids)]
    first = state.prepostagens[ids[0]]
    assert first["codigoServico"] == "03220" and first["pesoInformado"] == "275"
    assert first["destinatario"]["endereco"]["cep"] == "20040002" and first["observacao"] == "lbl_c1 (1/2)"
    # A rerun continues where it stopped: no third pre-posting.
    correios.buy(request=request, state=label, deadline=Deadline(5), save=lambda s: None)
    assert len(state.prepostagens) == 2
    assert correios.label_pdf(state=label, deadline=Deadline(5)) == PDF
    correios.cancel(state=label, deadline=Deadline(5))
    assert [p["statusAtual"] for p in state.prepostagens.values()] == [2, 2]


def test_cancel_after_posting_is_refused_in_the_correios_words(fake: tuple[Correios, FakeCorreios]) -> None:
    correios, state = fake
    request = LabelRequest("lbl_c2", "correios:03298", SENDER, RECIPIENT, ONE_SHIRT)
    label = correios.buy(request=request, state=LabelState(), deadline=Deadline(5), save=lambda s: None)
    state.add_event(label.tracking_code, "PO", "01", "2026-12-05T10:00:00", "Objeto postado")
    with pytest.raises(CarrierRejected) as refused:
        correios.cancel(state=label, deadline=Deadline(5))
    assert refused.value.message == "Correios recusou: Pré-postagem já postada não pode ser cancelada."


def test_tracking_maps_sro_events_oldest_first(fake: tuple[Correios, FakeCorreios]) -> None:
    correios, state = fake
    label = correios.buy(request=LabelRequest("lbl_c3", "correios:03220", SENDER, RECIPIENT, ONE_SHIRT),
                         state=LabelState(), deadline=Deadline(5), save=lambda s: None)  # fmt: skip
    code = label.tracking_code
    assert correios.tracking(state=label, deadline=Deadline(5)) == []  # SRO-020: not posted yet
    state.add_event(code, "PO", "01", "2026-12-05T10:00:00", "Objeto postado")
    state.add_event(code, "RO", "01", "2026-12-05T18:00:00", "Objeto em transferência - por favor aguarde")
    state.add_event(code, "OEC", "01", "2026-12-06T08:00:00", "Objeto saiu para entrega ao destinatário")
    state.add_event(code, "BDE", "01", "2026-12-06T14:00:00", "Objeto entregue ao destinatário")
    events = correios.tracking(state=label, deadline=Deadline(5))
    assert [(e.kind, e.occurred_at) for e in events] == [
        ("posted", datetime(2026, 12, 5, 13, 0, tzinfo=UTC)),
        ("in_transit", datetime(2026, 12, 5, 21, 0, tzinfo=UTC)),
        ("out_for_delivery", datetime(2026, 12, 6, 11, 0, tzinfo=UTC)),
        ("delivered", datetime(2026, 12, 6, 17, 0, tzinfo=UTC)),
    ]
    assert events[0].event_id == f"{code}:PO:01:2026-12-05T10:00:00"


def test_sro_codes_to_kinds() -> None:
    codes = (("BDE", "23"), ("BDI", "20"), ("FC", "01"), ("PAR", "16"), ("LDI", "01"))
    assert [event_kind(c, t) for c, t in codes] == [
        "returned", "failed_attempt", "other", "in_transit",
        "failed_attempt",  # "Objeto aguardando retirada no endereço indicado": not delivered, waits at the agency
    ]  # fmt: skip


def test_bad_credentials_and_an_outage_are_unavailable(fake: tuple[Correios, FakeCorreios]) -> None:
    correios, state = fake
    correios.access_code = "wrong"
    with pytest.raises(CarrierUnavailable):
        correios.quote(parcels=ONE_SHIRT, from_cep="01310100", to_cep="20040002", deadline=Deadline(5))
    correios.access_code, state.mode = ACCESS_CODE, "down"
    with pytest.raises(CarrierUnavailable):
        correios.quote(parcels=ONE_SHIRT, from_cep="01310100", to_cep="20040002", deadline=Deadline(5))
