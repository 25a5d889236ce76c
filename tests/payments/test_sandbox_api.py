"""`BacenPixPSP` against the sandbox's own Bacen-shaped API over real HTTP (live server)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from payments.psp import PSPNotFound, PSPRejected
from payments.psp.bacen import BacenPixPSP
from payments.sandbox import services as sandbox

TXID = "9d36b84fc70b478fb95c12729b90ca25"


def _adapter(live_server: Any, secret: str = "sandbox-secret") -> BacenPixPSP:  # noqa: S107
    base = f"{live_server.url}/_sandbox/psp/api"
    return BacenPixPSP(
        base_url=base, token_url=f"{base}/oauth/token", client_id="dev", client_secret=secret, pix_key="k", backoff=0.0
    )


@pytest.mark.django_db(transaction=True)
def test_bacen_adapter_speaks_to_the_sandbox_api(live_server: Any) -> None:
    psp = _adapter(live_server)

    created = psp.create_charge(txid=TXID, amount_cents=599900, expires_in=1800, payer=None, message="Pedido", extra=[])
    pix = sandbox.pay(txid=TXID, options=sandbox.PayOptions(deliver="none"))[0]
    read = psp.get_charge(TXID)
    refund = psp.refund(e2eid=pix.end_to_end_id, refund_id="r1", amount_cents=100, description="teste")
    listed = psp.list_received(timezone.now() - timedelta(hours=1), timezone.now() + timedelta(minutes=1))
    psp.register_webhook("k", "https://loja.example/payments/pix/webhook")

    assert (created.status, created.amount_cents, created.location.startswith("sandbox.bcp.local/qr/v2/")) == (
        "ACTIVE",
        599900,
        True,
    )
    assert read.status == "COMPLETED"
    assert [p.end_to_end_id for p in read.payments] == [pix.end_to_end_id]
    assert (refund.refund_id, refund.amount_cents, refund.status) == ("r1", 100, "RETURNED")
    assert [p.end_to_end_id for p in listed] == [pix.end_to_end_id]
    with pytest.raises(PSPRejected) as excinfo:
        psp.cancel_charge(TXID)
    assert excinfo.value.name == "CobOperacaoInvalida"
    with pytest.raises(PSPNotFound):
        psp.get_charge("0" * 32)


@pytest.mark.django_db(transaction=True)
def test_sandbox_api_refuses_a_wrong_client_secret(live_server: Any) -> None:
    with pytest.raises(PSPRejected) as excinfo:
        _adapter(live_server, secret="wrong").get_charge(TXID)

    assert excinfo.value.status_code == 401


@pytest.mark.django_db
def test_sandbox_api_needs_the_bearer_token(client: Client) -> None:
    response = client.get(f"/_sandbox/psp/api/cob/{TXID}")

    assert response.status_code == 401
    assert response.json()["title"] == "AcessoNegado"
