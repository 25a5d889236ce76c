"""`BacenPixPSP` against a local fake Bacen API Pix server: token, create, get, cancel, refund, list, errors."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from payments.models import PixCharge
from payments.psp import PixPayer, PSPInvalidResponse, PSPNotFound, PSPRejected, PSPUnavailable
from payments.psp.bacen import BacenPixPSP
from tests.payments.fake_bacen import CLIENT_ID, CLIENT_SECRET, FakeBacenServer

TXID = "4dbaa2bc0a4a45d8b63e50117f566fca"
E2E = "E99999999202607281504xixWhrEFcz1"


@pytest.fixture
def fake() -> Iterator[FakeBacenServer]:
    server = FakeBacenServer().start()
    yield server
    server.stop()


def _psp(fake: FakeBacenServer, **kwargs: Any) -> BacenPixPSP:
    options = {"retries": 3, "backoff": 0.0, "timeout": 5.0, **kwargs}
    return BacenPixPSP(
        base_url=fake.base_url,
        token_url=fake.base_url + "/oauth/token",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        pix_key="7d9f0335-8dcc-4054-9bf9-0dbd61d36906",
        **options,
    )


def test_create_charge_sends_the_bacen_body_and_parses_cob_gerada(fake: FakeBacenServer) -> None:
    psp = _psp(fake)

    charge = psp.create_charge(
        txid=TXID,
        amount_cents=599900,
        expires_in=1800,
        payer=PixPayer(name="Fulana", tax_id="12345678909"),
        message="Pedido checkout_1",
        extra=[("checkout", "checkout_1")],
    )

    method, path, body = fake.state.requests[-1]
    assert (method, path) == ("PUT", f"/cob/{TXID}")
    assert body == {
        "calendario": {"expiracao": 1800},
        "valor": {"original": "5999.00", "modalidadeAlteracao": 0},
        "chave": "7d9f0335-8dcc-4054-9bf9-0dbd61d36906",
        "devedor": {"cpf": "12345678909", "nome": "Fulana"},
        "solicitacaoPagador": "Pedido checkout_1",
        "infoAdicionais": [{"nome": "checkout", "valor": "checkout_1"}],
    }
    assert (charge.txid, charge.status, charge.amount_cents, charge.expires_in) == (TXID, "ACTIVE", 599900, 1800)
    assert charge.created_at == datetime(2026, 7, 28, 15, 0, tzinfo=UTC)
    assert charge.location == f"pix.example.com/qr/v2/{TXID}"


def test_token_is_fetched_once_and_cached_across_calls_and_instances(fake: FakeBacenServer) -> None:
    _psp(fake).create_charge(txid=TXID, amount_cents=100, expires_in=60, payer=None, message=None, extra=[])
    _psp(fake).get_charge(TXID)
    _psp(fake).get_charge(TXID)

    token_calls = [request for request in fake.state.requests if request[1] == "/oauth/token"]
    assert fake.state.tokens_issued == 1
    assert token_calls[0][2] == {
        "grant_type": ["client_credentials"],
        "scope": ["cob.write cob.read pix.write pix.read webhook.write webhook.read"],
    }


def test_revoked_token_is_refreshed_once_on_401(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    psp.create_charge(txid=TXID, amount_cents=100, expires_in=60, payer=None, message=None, extra=[])
    fake.state.valid_tokens.clear()  # the PSP forgets every token

    charge = psp.get_charge(TXID)

    assert charge.txid == TXID
    assert fake.state.tokens_issued == 2


def test_wrong_client_secret_is_rejected(fake: FakeBacenServer) -> None:
    psp = BacenPixPSP(
        base_url=fake.base_url,
        token_url=fake.base_url + "/oauth/token",
        client_id=CLIENT_ID,
        client_secret="wrong",
        pix_key="k",
        backoff=0.0,
    )

    with pytest.raises(PSPRejected) as excinfo:
        psp.get_charge(TXID)

    assert excinfo.value.status_code == 401


def test_get_charge_parses_received_pix(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    psp.create_charge(txid=TXID, amount_cents=599900, expires_in=1800, payer=None, message=None, extra=[])
    fake.pay(TXID, e2eid=E2E)

    charge = psp.get_charge(TXID)

    assert charge.status == "COMPLETED"
    assert [(p.end_to_end_id, p.txid, p.amount_cents) for p in charge.payments] == [(E2E, TXID, 599900)]


def test_cancel_patches_removida_pelo_usuario_recebedor(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    psp.create_charge(txid=TXID, amount_cents=100, expires_in=60, payer=None, message=None, extra=[])

    charge = psp.cancel_charge(TXID)

    assert fake.state.requests[-1] == ("PATCH", f"/cob/{TXID}", {"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"})
    assert charge.status == "REMOVED_BY_RECEIVER"


def test_refund_puts_devolucao_and_reads_it_back(fake: FakeBacenServer) -> None:
    psp = _psp(fake)

    refund = psp.refund(e2eid=E2E, refund_id="abc123", amount_cents=1050, description="Pedido cancelado")
    again = psp.get_refund(E2E, "abc123")

    assert fake.state.requests[-2] == (
        "PUT",
        f"/pix/{E2E}/devolucao/abc123",
        {"valor": "10.50", "natureza": "ORIGINAL", "descricao": "Pedido cancelado"},
    )
    assert (refund.refund_id, refund.amount_cents, refund.status) == ("abc123", 1050, "PROCESSING")
    assert again == refund


def test_list_received_walks_every_page(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    for index in range(3):
        txid = f"{index}" * 30
        psp.create_charge(txid=txid, amount_cents=100 + index, expires_in=60, payer=None, message=None, extra=[])
        fake.pay(txid, e2eid=f"E9999999920260728150{index}" + "a" * 11)

    payments = psp.list_received(datetime(2026, 7, 28, tzinfo=UTC), datetime(2026, 7, 29, tzinfo=UTC))

    list_calls = [path for method, path, _ in fake.state.requests if path.startswith("/pix?")]
    assert [p.amount_cents for p in payments] == [100, 101, 102]
    assert len(list_calls) == 2
    assert "inicio=2026-07-28T00%3A00%3A00.000Z" in list_calls[0]


def test_register_webhook(fake: FakeBacenServer) -> None:
    _psp(fake).register_webhook("7d9f0335", "https://loja.example/payments/pix/webhook")

    assert fake.state.webhooks == {"7d9f0335": "https://loja.example/payments/pix/webhook"}


def test_not_found_maps_to_psp_not_found(fake: FakeBacenServer) -> None:
    with pytest.raises(PSPNotFound):
        _psp(fake).get_charge("nope" * 8)


def test_problem_body_maps_to_psp_rejected_with_the_api_pix_name(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    psp.create_charge(txid=TXID, amount_cents=100, expires_in=60, payer=None, message=None, extra=[])
    fake.pay(TXID, e2eid=E2E)

    with pytest.raises(PSPRejected) as excinfo:
        psp.cancel_charge(TXID)

    assert (excinfo.value.status_code, excinfo.value.name) == (400, "CobOperacaoInvalida")


def test_idempotent_calls_are_retried_on_5xx_then_succeed(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    psp.create_charge(txid=TXID, amount_cents=100, expires_in=60, payer=None, message=None, extra=[])
    fake.state.forced = [(503, None), (429, {"title": "slow down"})]

    assert psp.get_charge(TXID).txid == TXID
    assert [path for _, path, _ in fake.state.requests].count(f"/cob/{TXID}") == 4  # PUT + 3 GETs


def test_persistent_5xx_becomes_psp_unavailable_after_three_tries(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    fake.state.forced = [(502, None)] * 5

    with pytest.raises(PSPUnavailable):
        psp.get_charge(TXID)

    assert len(fake.state.forced) == 2


def test_patch_is_never_retried_blindly(fake: FakeBacenServer) -> None:
    psp = _psp(fake)
    fake.state.forced = [(503, None), (503, None)]

    with pytest.raises(PSPUnavailable):
        psp.cancel_charge(TXID)

    assert len(fake.state.forced) == 1


def test_timeout_becomes_psp_unavailable(fake: FakeBacenServer) -> None:
    psp = _psp(fake, timeout=0.2, retries=1)
    fake.state.sleep_seconds = 1.0

    with pytest.raises(PSPUnavailable) as excinfo:
        psp.get_charge(TXID)

    assert str(excinfo.value) == f"GET /cob/{TXID}: timeout"


def test_non_json_success_is_an_invalid_response(fake: FakeBacenServer) -> None:
    fake.state.forced = [(200, b"<html>maintenance</html>")]

    with pytest.raises(PSPInvalidResponse):
        _psp(fake).get_charge(TXID)


def test_unreachable_psp_is_unavailable() -> None:
    server = FakeBacenServer()
    url = server.base_url
    server.httpd.server_close()  # nothing listens there any more
    psp = BacenPixPSP(base_url=url, token_url=url + "/oauth/token", client_id="c", client_secret="s", pix_key="k")

    with pytest.raises(PSPUnavailable):
        psp.get_charge(TXID)


@pytest.mark.django_db
def test_charge_with_an_invalid_br_code_from_the_psp_is_refused_and_not_stored(
    fake: FakeBacenServer, settings: Any
) -> None:
    # given the Bacen adapter pointed at a PSP that returns a static (not dynamic) BR Code
    settings.BCP_PIX_SANDBOX = False
    settings.PIX_PSP_BASE_URL = fake.base_url
    settings.PIX_PSP_TOKEN_URL = fake.base_url + "/oauth/token"
    settings.PIX_PSP_CLIENT_ID = CLIENT_ID
    settings.PIX_PSP_CLIENT_SECRET = CLIENT_SECRET
    from tests.payments.test_brcode import V1

    fake.state.br_code_override = V1
    from payments.services import pix_charge_ensure

    # when the shop asks for a charge
    with pytest.raises(PSPInvalidResponse) as excinfo:
        pix_charge_ensure(reference="checkout_bad", amount=100)
    # then nothing is stored and the reason is named
    assert (
        str(excinfo.value)
        == "invalid pixCopiaECola: a cob charge must return a dynamic BR Code (010212 and 26.25 location)"
    )
    assert PixCharge.objects.count() == 0


@pytest.mark.django_db
def test_charge_through_the_bacen_adapter_is_stored(fake: FakeBacenServer, settings: Any) -> None:
    settings.BCP_PIX_SANDBOX = False
    settings.PIX_PSP_BASE_URL = fake.base_url
    settings.PIX_PSP_TOKEN_URL = fake.base_url + "/oauth/token"
    settings.PIX_PSP_CLIENT_ID = CLIENT_ID
    settings.PIX_PSP_CLIENT_SECRET = CLIENT_SECRET
    from payments.services import pix_charge_ensure

    charge = pix_charge_ensure(reference="checkout_bacen", amount=599900)

    assert charge.status == "active"
    assert charge.br_code == fake.state.cobs[charge.txid]["pixCopiaECola"]
    assert charge.expires_at == datetime(2026, 7, 28, 15, 30, tzinfo=UTC)


def test_a_dripping_psp_is_cut_at_the_total_deadline_retries_included(fake: FakeBacenServer) -> None:
    """Issue 31 §2: httpx's timeout is per read, so a PSP that sends one byte at a time never tripped it (10 s per
    byte × 3 attempts). Now one total deadline bounds the call, attempts included (PIX.md §4.2)."""
    # given a PSP that answers charge creations one byte every 0.2 s, and a 1-second deadline
    fake.state.cob_drip = 0.2
    psp = _psp(fake, timeout=1.0, retries=3)
    try:
        # when a charge is created
        with pytest.raises(PSPUnavailable) as excinfo:
            psp.create_charge(txid=TXID, amount_cents=1000, expires_in=600, payer=None, message=None, extra=[])
        # then the adapter gave up on a timeout while the PSP was still mid-answer
        assert str(excinfo.value) == f"PUT /cob/{TXID}: timeout"
        assert fake.state.drip_cut.wait(10)  # the fake saw the client hang up
        assert 0 < fake.state.drip_sent < fake.state.drip_total
        # and the deadline left no time for another attempt at the same drip
        assert [path for method, path, _ in fake.state.requests if method == "PUT"] == [f"/cob/{TXID}"]
    finally:
        fake.state.drip_stop.set()
