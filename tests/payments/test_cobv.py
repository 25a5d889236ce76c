"""Pix com vencimento (`cobv`, issue 17): the amount owed on a day, the Bacen adapter against a local fake PSP
speaking the cobv shape, the sandbox PSP's cobv, and settlement through the one webhook path exactly once."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from django.test import Client

from payments.due import DueTerms, amount_due
from payments.exceptions import PaymentInputError
from payments.models import PixCharge, PixPayment, PixWebhookEvent
from payments.psp import PixPayer, PSPRejected
from payments.psp.base import cobv_request_body
from payments.services import pix_due_charge_ensure
from tests.payments import test_bacen_psp, test_bacen_webhook_flow
from tests.payments.fake_bacen import PROXY_VERIFIED, FakeBacenServer

# The adapter's fake PSP and the Bacen-mode settings of the neighbouring tests (pytest finds fixtures by name).
fake = test_bacen_psp.fake
bacen = test_bacen_webhook_flow.bacen
_psp = test_bacen_psp._psp

TXID = "9d36b84fc70b478fb95c12729b90ca25"
E2E = "E99999999202608151500cobvPaid001"
KEY = "7d9f0335-8dcc-4054-9bf9-0dbd61d36906"
TERMS = DueTerms(
    due_date=date(2026, 8, 10),
    validity_days=30,
    fine_bp=200,
    interest_bp=100,
    discount_bp=500,
    discount_until=date(2026, 8, 5),
)
PAYER = PixPayer(name="Caju Comércio de Cafés Ltda", tax_id="12ABC34501DE35")


# --- the amount owed on a day ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("paid_on", "fine", "interest", "discount", "total"),
    [
        (date(2026, 8, 1), 0, 0, 5000, 95000),  # early: 5 % off until 05/08
        (date(2026, 8, 5), 0, 0, 5000, 95000),  # the discount's last day
        (date(2026, 8, 6), 0, 0, 0, 100000),  # after the discount, before the due date
        (date(2026, 8, 10), 0, 0, 0, 100000),  # on the due date: no fine
        (date(2026, 8, 11), 2000, 33, 0, 102033),  # 1 day late: 2 % fine + 1 %/30 = 33,33 → 33
        (date(2026, 8, 15), 2000, 167, 0, 102167),  # 5 days: 166,67 → 167
        (date(2026, 9, 9), 2000, 1000, 0, 103000),  # 30 days: a whole month of interest
    ],
)
def test_amount_due_by_payment_day(paid_on: date, fine: int, interest: int, discount: int, total: int) -> None:
    owed = amount_due(100000, TERMS, paid_on)
    assert (owed.fine, owed.interest, owed.discount, owed.total) == (fine, interest, discount, total)


def test_interest_rounds_half_to_even_per_component() -> None:
    # 1500 × 1 %/month × 1 day / 30 = 0,5 centavo → 0 (even); 4500 × … = 1,5 → 2
    terms = DueTerms(due_date=date(2026, 8, 10), interest_bp=100)
    assert amount_due(1500, terms, date(2026, 8, 11)).interest == 0
    assert amount_due(4500, terms, date(2026, 8, 11)).interest == 2


def test_expiry_is_the_end_of_the_last_day_of_validity_in_brasilia() -> None:
    assert TERMS.expires_at == datetime(2026, 9, 10, 3, 0, tzinfo=UTC)  # 10/09 00:00 in São Paulo (UTC−3)


# --- the cobv body and the Bacen adapter ------------------------------------------------------------------------


def test_cobv_body_follows_the_bacen_shape() -> None:
    assert cobv_request_body(pix_key=KEY, amount_cents=100000, terms=TERMS, payer=PAYER) == {
        "calendario": {"dataDeVencimento": "2026-08-10", "validadeAposVencimento": 30},
        "devedor": {"cnpj": "12ABC34501DE35", "nome": "Caju Comércio de Cafés Ltda"},
        "valor": {
            "original": "1000.00",
            "multa": {"modalidade": 2, "valorPerc": "2.00"},
            "juros": {"modalidade": 3, "valorPerc": "1.00"},
            "desconto": {"modalidade": 2, "descontoDataFixa": [{"data": "2026-08-05", "valorPerc": "5.00"}]},
        },
        "chave": KEY,
    }


def test_adapter_puts_gets_and_cancels_a_cobv(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    # when a cobv is created
    charge = psp.create_due_charge(
        txid=TXID, amount_cents=100000, terms=TERMS, payer=PAYER, message="Pedido checkout_b2b", extra=[]
    )
    # then PUT /cobv/{txid} carried the Bacen body, and the CobVGerada answer parses back into the same terms
    method, path, body = fake.state.requests[-1]
    assert (method, path) == ("PUT", f"/cobv/{TXID}")
    assert body["calendario"] == {"dataDeVencimento": "2026-08-10", "validadeAposVencimento": 30}
    assert body["devedor"] == {"cnpj": "12ABC34501DE35", "nome": "Caju Comércio de Cafés Ltda"}
    assert body["solicitacaoPagador"] == "Pedido checkout_b2b"
    assert (charge.kind, charge.status, charge.amount_cents, charge.due) == ("cobv", "ACTIVE", 100000, TERMS)
    # created 28/07 15:00 UTC, payable until the end of 09/09 in São Paulo
    assert charge.created_at == datetime(2026, 7, 28, 15, 0, tzinfo=UTC)
    assert charge.expires_in == int((TERMS.expires_at - charge.created_at).total_seconds())
    assert charge.location == f"pix.example.com/qr/v2/cobv/{TXID}"
    # and GET and PATCH go to /cobv/{txid}
    assert psp.get_charge(TXID, kind="cobv").due == TERMS
    assert psp.cancel_charge(TXID, kind="cobv").status == "REMOVED_BY_RECEIVER"
    assert [r[:2] for r in fake.state.requests[-2:]] == [("GET", f"/cobv/{TXID}"), ("PATCH", f"/cobv/{TXID}")]


def test_adapter_surfaces_the_psps_refusal_of_a_cobv_without_debtor(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    with pytest.raises(PSPRejected) as refused:
        psp.create_due_charge(
            txid=TXID, amount_cents=100000, terms=TERMS, payer=PixPayer(name="", tax_id=""), message=None, extra=[]
        )
    assert (refused.value.status_code, refused.value.name) == (400, "CobVPayloadInvalido")


# --- settlement through the one webhook path ---------------------------------------------------------------------


def _deliver(client: Client, *items: dict[str, Any]) -> Any:
    return client.post(
        "/payments/pix/webhook/pix", data={"pix": list(items)}, content_type="application/json", headers=PROXY_VERIFIED
    )


@pytest.mark.django_db
def test_overdue_cobv_settles_once_through_the_webhook_with_fine_and_interest(
    client: Client, bacen: FakeBacenServer, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a cobv of R$ 1.000,00 due 10/08 (2 % fine, 1 % a month)
    charge = pix_due_charge_ensure(
        reference="checkout_b2b", amount=100000, terms=TERMS, payer_name=PAYER.name, payer_tax_id="12.ABC.345/01DE-35"
    )
    assert (charge.kind, charge.due_date, charge.terms) == ("cobv", date(2026, 8, 10), TERMS)
    # when the buyer pays 5 days late what their bank computed (R$ 1.021,67) and the PSP calls back twice
    pix = bacen.pay_cobv(charge.txid, e2eid=E2E, valor="1021.67", horario="2026-08-15T15:00:00.000Z")
    with django_capture_on_commit_callbacks(execute=True):
        first = _deliver(client, pix)
    with django_capture_on_commit_callbacks(execute=True):
        second = _deliver(client, pix)
    # then the payment was confirmed at GET /cobv/{txid} and settled exactly once
    assert (first.json(), second.json()) == ({"received": 1, "duplicates": 0}, {"received": 0, "duplicates": 1})
    assert ("GET", f"/cobv/{charge.txid}", None) in bacen.state.requests
    assert PixCharge.objects.get().status == "paid"
    assert PixPayment.objects.get().outcome == "settled"
    assert PixWebhookEvent.objects.count() == 1
    # and the shop hears the charge's amount (its checkout total) plus what actually arrived
    assert [(c["amount"], c["received"], c["end_to_end_id"]) for c in settled.calls] == [(100000, 102167, E2E)]


@pytest.mark.django_db
def test_cobv_paid_without_the_fine_is_refunded_as_a_mismatch(
    client: Client, bacen: FakeBacenServer, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    charge = pix_due_charge_ensure(
        reference="checkout_b2b", amount=100000, terms=TERMS, payer_name=PAYER.name, payer_tax_id="12ABC34501DE35"
    )
    pix = bacen.pay_cobv(charge.txid, e2eid=E2E, valor="1000.00", horario="2026-08-15T15:00:00.000Z")
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, pix)
    assert PixPayment.objects.get().outcome == "refunded_amount_mismatch"
    assert settled.calls == []


@pytest.mark.django_db
def test_cobv_needs_the_debtors_cpf_or_cnpj(bacen: FakeBacenServer) -> None:
    with pytest.raises(PaymentInputError) as refused:
        pix_due_charge_ensure(reference="checkout_b2b", amount=100000, terms=TERMS, payer_name="Ana", payer_tax_id="")
    assert refused.value.field == "payer_tax_id"
    assert bacen.state.cobvs == {}


@pytest.mark.django_db
def test_sandbox_cobv_is_paid_at_the_value_of_the_day_and_settles_through_the_signed_webhook(
    settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from payments.sandbox import bodies as sandbox_bodies
    from payments.sandbox import services as sandbox

    # given a cobv at the sandbox PSP (the default in tests)
    charge = pix_due_charge_ensure(
        reference="checkout_b2b", amount=100000, terms=TERMS, payer_name=PAYER.name, payer_tax_id="12ABC34501DE35"
    )
    calendario = sandbox_bodies.cob_body(sandbox.get_cob(charge.txid, kind="cobv"))["calendario"]
    assert calendario["dataDeVencimento"] == "2026-08-10"
    # when the payer's app pays on 11/08 (Brasília), one day late
    with django_capture_on_commit_callbacks(execute=True):
        (paid,) = sandbox.pay(txid=charge.txid, options=sandbox.PayOptions(at=datetime(2026, 8, 11, 15, tzinfo=UTC)))
    # then it paid fine and a day of interest, and the signed webhook settled it once
    assert paid.amount == 102033
    assert [(c["amount"], c["received"]) for c in settled.calls] == [(100000, 102033)]
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.redeliver(e2eid=paid.end_to_end_id)
    assert len(settled.calls) == 1
    assert PixCharge.objects.get(txid=charge.txid).status == "paid"


@pytest.mark.django_db
def test_sandbox_api_speaks_cobv_over_http(client: Client, settings: Any) -> None:
    import base64

    token = client.post(
        "/_sandbox/psp/api/oauth/token",
        {"grant_type": "client_credentials", "scope": "cob.write"},
        headers={
            "Authorization": "Basic " + base64.b64encode(f"x:{settings.PIX_SANDBOX_WEBHOOK_SECRET}".encode()).decode()
        },
    ).json()["access_token"]
    auth = {"Authorization": f"Bearer {token}"}
    body = cobv_request_body(pix_key=KEY, amount_cents=100000, terms=TERMS, payer=PAYER)
    created = client.put(f"/_sandbox/psp/api/cobv/{TXID}", data=body, content_type="application/json", headers=auth)
    assert created.status_code == 201
    assert created.json()["calendario"]["validadeAposVencimento"] == 30
    assert created.json()["valor"]["multa"] == {"modalidade": 2, "valorPerc": "2.00"}
    # a cobv is not a cob: GET /cob/{txid} does not find it
    assert client.get(f"/_sandbox/psp/api/cob/{TXID}", headers=auth).status_code == 404
    no_debtor = {k: v for k, v in body.items() if k != "devedor"}
    refused = client.put(
        f"/_sandbox/psp/api/cobv/{'a' * 30}", data=no_debtor, content_type="application/json", headers=auth
    )
    assert (refused.status_code, refused.json()["title"]) == (400, "CobVPayloadInvalido")


def test_terms_without_a_discount_carry_no_discount_date() -> None:
    # what the PSP answers for a cobv without `desconto` compares equal to what was asked
    assert DueTerms(due_date=date(2026, 8, 10), discount_until=date(2026, 8, 5)) == DueTerms(due_date=date(2026, 8, 10))
