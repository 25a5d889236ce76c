"""Pix Automático at the PSP boundary: `BacenPixPSP` against the fake Bacen API Pix (`/rec`, `/solicrec`,
`/cobr/{txid}`), and the `/rec` webhook stored once per state change (issue 38)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest
from django.test import Client

from payments.models import PixRecurrenceWebhookEvent
from payments.psp import PixPayer, PSPNotFound, PSPRejected
from payments.psp.bacen import BacenPixPSP
from payments.psp.recurring import PayerAccount
from payments.sandbox import recurring as sandbox_recurring
from payments.sandbox.psp import SandboxPixPSP
from tests.payments.fake_bacen import CLIENT_ID, CLIENT_SECRET, PROXY_VERIFIED, FakeBacenServer, use_fake_bacen

TXID = "cobr0sub00000000000000000000001"
ID_REC = "RN999999992026072800000000001"


@pytest.fixture
def fake() -> Iterator[FakeBacenServer]:
    server = FakeBacenServer().start()
    yield server
    server.stop()


def _psp(fake: FakeBacenServer) -> BacenPixPSP:
    return BacenPixPSP(
        base_url=fake.base_url,
        token_url=fake.base_url + "/oauth/token",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        pix_key="7d9f0335-8dcc-4054-9bf9-0dbd61d36906",
        retries=3,
        backoff=0.0,
        timeout=5.0,
    )


def _create(psp: BacenPixPSP) -> Any:
    return psp.create_recurrence(
        contract="sub_abc123",
        debtor=PixPayer(name="Fulana de Tal", tax_id="123.456.789-09"),
        description="Clube do café - mensal",
        periodicity="monthly",
        start=date(2026, 8, 10),
        amount_cents=8990,
    )


def test_create_recurrence_posts_the_bacen_body_and_parses_rec_gerada(fake: FakeBacenServer) -> None:
    rec = _create(_psp(fake))

    method, path, body = fake.state.requests[-1]
    assert (method, path) == ("POST", "/rec")
    assert body == {
        "vinculo": {
            "contrato": "sub_abc123",
            "devedor": {"cpf": "12345678909", "nome": "Fulana de Tal"},
            "objeto": "Clube do café - mensal",
        },
        "calendario": {"dataInicial": "2026-08-10", "periodicidade": "MENSAL"},
        "politicaRetentativa": "NAO_PERMITE",
        "valor": {"valorRec": "89.90"},
    }
    assert (rec.id_rec, rec.status, rec.amount_cents, rec.periodicity) == (ID_REC, "CREATED", 8990, "monthly")
    assert (rec.start, rec.end, rec.contract, rec.cancellation) == (date(2026, 8, 10), None, "sub_abc123", None)
    assert rec.location == f"pix.example.com/qr/v2/rec/{ID_REC.lower()}"


def test_authorization_request_then_payer_approval_is_read_back(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    rec = _create(psp)

    solic = psp.request_authorization(
        id_rec=rec.id_rec,
        payer=PayerAccount(tax_id="12345678909", ispb="91193552", branch="2569", account="550689"),
        expires_at=datetime(2026, 7, 30, 12, 0, tzinfo=UTC),
    )

    assert fake.state.requests[-1][1:] == (
        "/solicrec",
        {
            "idRec": ID_REC,
            "calendario": {"dataExpiracaoSolicitacao": "2026-07-30T12:00:00.000Z"},
            "destinatario": {
                "ispbParticipante": "91193552",
                "agencia": "2569",
                "conta": "550689",
                "cpf": "12345678909",
            },
        },
    )
    assert (solic.id_solic_rec, solic.id_rec, solic.status) == ("SC999999992026072800000000001", ID_REC, "CREATED")
    assert solic.expires_at == datetime(2026, 7, 30, 12, 0, tzinfo=UTC)
    assert psp.get_authorization_request(solic.id_solic_rec).status == "CREATED"
    assert psp.get_recurrence(ID_REC).status == "CREATED"

    fake.approve_rec(ID_REC)

    assert psp.get_recurrence(ID_REC).status == "APPROVED"


def test_recurring_charge_needs_an_approved_recurrence(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    _create(psp)

    with pytest.raises(PSPRejected) as refused:
        psp.create_recurring_charge(txid=TXID, id_rec=ID_REC, amount_cents=8990, due_date=date(2026, 8, 10))

    assert (refused.value.status_code, refused.value.name) == (400, "CobROperacaoInvalida")
    assert fake.state.cobrs == {}


def test_a_fixed_recurrence_is_charged_exactly_its_value_and_a_variable_one_at_least_its_minimum(
    fake: FakeBacenServer,
) -> None:
    psp = _psp(fake)
    _create(psp)  # valorRec 89.90
    fake.approve_rec(ID_REC)

    with pytest.raises(PSPRejected) as refused:
        psp.create_recurring_charge(txid=TXID, id_rec=ID_REC, amount_cents=7990, due_date=date(2026, 8, 10))
    assert (refused.value.status_code, refused.value.name) == (400, "CobRValorInvalido")

    variable = psp.create_recurrence(
        contract="sub_var1",
        debtor=PixPayer(name="Fulana de Tal", tax_id="123.456.789-09"),
        description="Clube do café - mensal",
        periodicity="monthly",
        start=date(2026, 8, 10),
        amount_cents=None,
        minimum_cents=7990,
    )
    assert fake.state.requests[-1][2]["valor"] == {"valorMinimoRecebedor": "79.90"}
    assert variable.amount_cents is None
    fake.approve_rec(variable.id_rec)
    due = date(2026, 8, 10)
    with pytest.raises(PSPRejected):
        psp.create_recurring_charge(txid=TXID, id_rec=variable.id_rec, amount_cents=7000, due_date=due)
    first = psp.create_recurring_charge(txid=TXID, id_rec=variable.id_rec, amount_cents=7990, due_date=due)
    assert first.amount_cents == 7990


def test_recurring_charge_is_scheduled_read_and_cancelled(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    _create(psp)
    fake.approve_rec(ID_REC)

    cobr = psp.create_recurring_charge(
        txid=TXID, id_rec=ID_REC, amount_cents=8990, due_date=date(2026, 8, 10), info="Ciclo 1 de sub_abc123"
    )

    assert fake.state.requests[-1] == (
        "PUT",
        f"/cobr/{TXID}",
        {
            "idRec": ID_REC,
            "calendario": {"dataDeVencimento": "2026-08-10"},
            "valor": {"original": "89.90"},
            "ajusteDiaUtil": True,
            "infoAdicional": "Ciclo 1 de sub_abc123",
        },
    )
    assert (cobr.txid, cobr.id_rec, cobr.status, cobr.amount_cents, cobr.due_date) == (
        TXID,
        ID_REC,
        "CREATED",
        8990,
        date(2026, 8, 10),
    )
    assert psp.get_recurring_charge(TXID) == cobr
    assert psp.cancel_recurring_charge(TXID).status == "CANCELLED"
    with pytest.raises(PSPNotFound):
        psp.get_recurring_charge("cobr0sub00000000000000000000999")


def test_receiver_cancels_the_recurrence(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    _create(psp)
    fake.approve_rec(ID_REC)

    rec = psp.cancel_recurrence(ID_REC)

    assert fake.state.requests[-1] == ("PATCH", f"/rec/{ID_REC}", {"status": "CANCELADA"})
    assert rec.status == "CANCELLED"
    assert rec.cancellation is not None
    assert (rec.cancellation.requester, rec.cancellation.code, rec.cancellation.by_payer) == (
        "USUARIO_RECEBEDOR",
        "SLCR",
        False,
    )
    with pytest.raises(PSPRejected):
        psp.cancel_recurrence(ID_REC)  # already cancelled: the PSP refuses, we do not hide it


@pytest.mark.django_db
def test_rec_webhook_stores_approval_and_payer_cancellation_once(
    fake: FakeBacenServer, settings: Any, client: Client
) -> None:
    use_fake_bacen(settings, fake)
    _create(_psp(fake))
    approved = fake.approve_rec(ID_REC)

    def deliver(body: dict[str, Any]) -> Any:
        return client.post(
            "/payments/pix/webhook/rec", data=body, content_type="application/json", headers=PROXY_VERIFIED
        )

    first = deliver(approved)
    replay = deliver(approved)
    cancelled = deliver(fake.payer_cancels_rec(ID_REC))

    assert (first.status_code, first.json()) == (200, {"received": 1, "duplicates": 0})
    assert (replay.status_code, replay.json()) == (200, {"received": 0, "duplicates": 1})
    assert (cancelled.status_code, cancelled.json()) == (200, {"received": 1, "duplicates": 0})
    rows = list(
        PixRecurrenceWebhookEvent.objects.order_by("id").values_list(
            "id_rec", "status", "cancelled_by", "cancellation_code"
        )
    )
    assert rows == [(ID_REC, "APROVADA", "", ""), (ID_REC, "CANCELADA", "USUARIO_PAGADOR", "ACCL")]


@pytest.mark.django_db
def test_rec_webhook_refuses_forged_and_malformed_bodies_storing_nothing(
    fake: FakeBacenServer, settings: Any, client: Client
) -> None:
    use_fake_bacen(settings, fake)
    good = {"recs": [{"idRec": ID_REC, "status": "APROVADA", "atualizacao": []}]}

    forged = client.post("/payments/pix/webhook/rec", data=good, content_type="application/json")
    bad_status = client.post(
        "/payments/pix/webhook/rec",
        data={"recs": [{"idRec": ID_REC, "status": "PAGA"}]},
        content_type="application/json",
        headers=PROXY_VERIFIED,
    )
    bad_id = client.post(
        "/payments/pix/webhook/rec",
        data={"recs": [{"idRec": "curto", "status": "APROVADA"}]},
        content_type="application/json",
        headers=PROXY_VERIFIED,
    )

    assert forged.status_code == 401
    assert (bad_status.status_code, bad_status.json()["detail"]) == (400, "recs[0].status 'PAGA' is unknown")
    assert (bad_id.status_code, bad_id.json()["detail"]) == (400, "recs[0].idRec is not 29 alphanumerics")
    assert PixRecurrenceWebhookEvent.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_sandbox_psp_authorizes_and_the_payer_cancels_through_the_signed_rec_webhook() -> None:
    """`make run`'s PSP: the same bodies and parsers; "Autorizar no sandbox" and a cancel in the bank app reach
    our `/rec` webhook signed, stored once each."""
    psp = SandboxPixPSP()
    rec = psp.create_recurrence(
        contract="sub_sbx1",
        debtor=PixPayer(name="Fulana de Tal", tax_id="12345678909"),
        description="Clube do café - semanal",
        periodicity="weekly",
        start=date(2026, 8, 10),
        amount_cents=2990,
    )
    assert (rec.status, rec.amount_cents, rec.periodicity, rec.contract) == ("CREATED", 2990, "weekly", "sub_sbx1")
    assert rec.id_rec.startswith("RN99999999") and len(rec.id_rec) == 29
    with pytest.raises(PSPRejected):  # no charge before the payer authorized
        psp.create_recurring_charge(txid=TXID, id_rec=rec.id_rec, amount_cents=2990, due_date=date(2026, 8, 10))

    sandbox_recurring.authorize(rec.id_rec)
    with pytest.raises(PSPRejected):  # a fixed recurrence is charged exactly its valorRec, as at a real PSP
        psp.create_recurring_charge(txid=TXID, id_rec=rec.id_rec, amount_cents=2500, due_date=date(2026, 8, 10))
    cobr = psp.create_recurring_charge(txid=TXID, id_rec=rec.id_rec, amount_cents=2990, due_date=date(2026, 8, 10))
    replay = psp.create_recurring_charge(txid=TXID, id_rec=rec.id_rec, amount_cents=2990, due_date=date(2026, 8, 10))
    sandbox_recurring.payer_cancel(rec.id_rec)

    assert (cobr.status, cobr.amount_cents, replay) == ("CREATED", 2990, cobr)
    ended = psp.get_recurrence(rec.id_rec)
    assert ended.status == "CANCELLED"
    assert ended.cancellation is not None and ended.cancellation.by_payer
    rows = list(PixRecurrenceWebhookEvent.objects.order_by("id").values_list("id_rec", "status", "cancelled_by"))
    assert rows == [(rec.id_rec, "APROVADA", ""), (rec.id_rec, "CANCELADA", "USUARIO_PAGADOR")]
