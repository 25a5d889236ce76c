"""Bacen mode end to end against the fake Bacen server: the callback is only a hint, `GET /cob` decides.

Also: the sandbox's HTTP delivery path (used when a real worker delivers) signs exactly as PIX.md §4.4.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.test import Client

from payments import webhook_auth
from payments.models import PixCharge, PixPayment, PixWebhookEvent
from payments.sandbox.tasks import deliver_sandbox_webhook
from payments.services import pix_charge_ensure
from tests.payments.fake_bacen import PROXY_VERIFIED, FakeBacenServer, use_fake_bacen

pytestmark = pytest.mark.django_db
E2E = "E99999999202607281504xixWhrEFcz1"


@pytest.fixture
def bacen(settings: Any) -> Iterator[FakeBacenServer]:
    server = FakeBacenServer().start()
    use_fake_bacen(settings, server)
    yield server
    server.stop()


def _deliver(client: Client, *items: dict[str, Any]) -> Any:
    return client.post(
        "/payments/pix/webhook/pix", data={"pix": list(items)}, content_type="application/json", headers=PROXY_VERIFIED
    )


def test_paid_charge_settles_from_the_psp_reread(
    client: Client, bacen: FakeBacenServer, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a charge issued at the PSP and paid there
    charge = pix_charge_ensure(reference="checkout_b", amount=599900)
    pix = bacen.pay(charge.txid, e2eid=E2E)
    # when the PSP calls back (its body carries no signature)
    with django_capture_on_commit_callbacks(execute=True):
        response = _deliver(client, pix)
    # then the payment was confirmed with GET /cob/{txid} and settled once
    assert response.status_code == 200
    assert ("GET", f"/cob/{charge.txid}", None) in bacen.state.requests
    assert PixCharge.objects.get().status == "paid"
    assert [(c["end_to_end_id"], c["amount"]) for c in settled.calls] == [(E2E, 599900)]


def test_forged_callback_settles_nothing(
    client: Client, bacen: FakeBacenServer, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given an active, unpaid charge
    charge = pix_charge_ensure(reference="checkout_b", amount=599900)
    forged = {"endToEndId": E2E, "txid": charge.txid, "valor": "5999.00", "horario": "2026-07-28T15:04:10.123Z"}
    # when someone posts a plausible callback
    with django_capture_on_commit_callbacks(execute=True):
        response = _deliver(client, forged)
    # then it is stored but the PSP does not know that Pix: nothing settles
    assert response.status_code == 200
    assert PixWebhookEvent.objects.get().outcome == "unconfirmed"
    assert PixCharge.objects.get().status == "active"
    assert settled.calls == []


def test_callback_values_are_ignored_in_favour_of_the_psp(
    client: Client, bacen: FakeBacenServer, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a real payment whose callback body was tampered with (amount 1.00)
    charge = pix_charge_ensure(reference="checkout_b", amount=599900)
    pix = bacen.pay(charge.txid, e2eid=E2E)
    # when the tampered callback arrives
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, dict(pix, valor="1.00"))
    # then the PSP's own value (5999.00) is what settles
    assert PixPayment.objects.get().amount == 599900
    assert PixPayment.objects.get().outcome == "settled"
    assert len(settled.calls) == 1


def test_psp_unreachable_during_confirmation_keeps_the_event_for_retry(
    client: Client, bacen: FakeBacenServer, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a paid charge and a PSP that fails every re-read
    charge = pix_charge_ensure(reference="checkout_b", amount=100)
    pix = bacen.pay(charge.txid, e2eid=E2E)
    bacen.state.forced = [(503, None)] * 200
    # when the callback arrives
    with django_capture_on_commit_callbacks(execute=True):
        response = _deliver(client, pix)
    # then the PSP still got its 200, and the event waits unprocessed for the retry/reconcile path
    event = PixWebhookEvent.objects.get()
    assert response.status_code == 200
    assert (event.processed_at, event.outcome, event.attempts) == (None, "", 1)
    assert settled.calls == []


class _Capture(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], bytes]] = []

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((dict(self.headers.items()), raw))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_sandbox_delivers_over_http_with_a_valid_signature(settings: Any) -> None:
    # given a webhook target that is not our own site (as when a real worker delivers)
    _Capture.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.PIX_SANDBOX_WEBHOOK_URL = f"http://127.0.0.1:{server.server_address[1]}/payments/pix/webhook/pix"
    body = json.dumps(
        {"pix": [{"endToEndId": E2E, "txid": "a" * 32, "valor": "1.00", "horario": "2026-07-28T15:04:10Z"}]}
    )
    try:
        # when the sandbox delivers
        status = deliver_sandbox_webhook.apply(args=[body]).get()
    finally:
        server.shutdown()
        server.server_close()
    # then the exact body went over HTTP with a signature our receiver accepts
    headers, raw = _Capture.received[0]
    assert status == 200
    assert raw == body.encode()
    assert headers["Content-Type"] == "application/json"
    assert webhook_auth.verify(headers["BCP-Sandbox-Signature"], raw, secrets=["sandbox-secret"]) > 0


def test_register_webhook_command_puts_our_url_at_the_psp(bacen: FakeBacenServer, settings: Any) -> None:
    from io import StringIO

    from django.core.management import call_command

    settings.BCP_PUBLIC_URL = "https://loja.example.com.br"
    out = StringIO()

    call_command("pix_register_webhook", stdout=out)

    assert bacen.state.webhooks == {settings.PIX_KEY: "https://loja.example.com.br/payments/pix/webhook"}
    assert (
        out.getvalue().strip()
        == f"webhook for key {settings.PIX_KEY}: https://loja.example.com.br/payments/pix/webhook"
    )


def test_refund_the_psp_never_accepts_ends_failed_after_retries(
    client: Client,
    bacen: FakeBacenServer,
    settled: Any,
    refunds_finished: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from payments.models import PixRefund
    from payments.services import refund_request

    # given a settled Pix and a PSP whose devolução endpoint stays down
    charge = pix_charge_ensure(reference="checkout_b", amount=5000)
    pix = bacen.pay(charge.txid, e2eid=E2E)
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, pix)
    bacen.state.forced = [(503, None)] * 100
    # when the order asks for a refund
    with django_capture_on_commit_callbacks(execute=True):
        refund = refund_request(reference="checkout_b", amount=5000, refund_id="adj_down", reason="Cancelado")
    # then it was tried 9 times (1 + 8 retries, 3 HTTP tries each) and ends failed, reported once
    refund = PixRefund.objects.get(pk=refund.pk)
    assert (refund.status, refund.attempts) == ("failed", 9)
    assert refund.last_error.startswith("PSP unavailable:")
    assert refunds_finished == [
        {"reference": "checkout_b", "refund_id": "adj_down", "status": "failed", "amount": 5000}
    ]
    assert PixCharge.objects.get().status == "paid"


def test_refund_accepted_as_processing_then_returned_by_webhook(
    client: Client,
    bacen: FakeBacenServer,
    settled: Any,
    refunds_finished: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from payments.services import refund_request

    # given a settled Pix and a refund the PSP accepted as EM_PROCESSAMENTO
    charge = pix_charge_ensure(reference="checkout_b", amount=5000)
    pix = bacen.pay(charge.txid, e2eid=E2E)
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, pix)
    with django_capture_on_commit_callbacks(execute=True):
        refund = refund_request(reference="checkout_b", amount=5000, refund_id="adj_ok", reason="Cancelado")
    refund.refresh_from_db()
    assert (refund.status, refund.psp_status) == ("pending", "PROCESSING")
    # when the PSP reports DEVOLVIDO in `pix[].devolucoes` (its GET /cob shows the same)
    returned = dict(bacen.state.refunds[(E2E, refund.psp_refund_id)], status="DEVOLVIDO")
    bacen.state.refunds[(E2E, refund.psp_refund_id)] = returned
    bacen.state.cobs[charge.txid]["pix"][0]["devolucoes"] = [returned]
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, dict(pix, devolucoes=[returned]))
    # then the refund completes, the charge is refunded and the order hears it once
    refund.refresh_from_db()
    assert refund.status == "completed"
    assert PixCharge.objects.get().status == "refunded"
    assert refunds_finished == [
        {"reference": "checkout_b", "refund_id": "adj_ok", "status": "completed", "amount": 5000}
    ]
