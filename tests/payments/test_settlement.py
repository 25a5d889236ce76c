"""Settlement idempotency (PIX.md §3.2, BCP-PAY-07): duplicates, out of order, late, wrong amount, rejection,
lost webhooks.

Every scenario ends with exactly one `charge_settled` or exactly one recorded refund, never two.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from payments.models import PaymentEvent, PixCharge, PixPayment, PixRefund, PixWebhookEvent, SandboxCob
from payments.sandbox import services as sandbox
from payments.services import pix_charge_ensure, pix_charge_revoke_for_reference
from payments.settlement import pix_charges_expire_due, pix_charges_reconcile
from tests.payments.helpers import body, item, post_signed

pytestmark = pytest.mark.django_db
CONTROL = {"BCP-Sandbox-Secret": "sandbox-secret"}


def _pay(client: Client, txid: str, query: str = "", **json_body: Any) -> Any:
    return client.post(
        f"/_sandbox/psp/cob/{txid}/pay{query}", data=json_body, content_type="application/json", headers=CONTROL
    )


def test_same_payment_delivered_ten_times_settles_once(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a paid charge whose webhook went out once
    charge = pix_charge_ensure(reference="checkout_ten", amount=12345)
    with django_capture_on_commit_callbacks(execute=True):
        paid = _pay(client, charge.txid).json()
    e2e = paid["pix"][0]["endToEndId"]
    # when the PSP redelivers the same notification nine more times
    for _ in range(9):
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/_sandbox/psp/webhooks/redeliver",
                data={"e2eid": e2e},
                content_type="application/json",
                headers=CONTROL,
            )
        assert response.status_code == 200
    # then one inbox row, one payment, one signal
    assert PixWebhookEvent.objects.filter(end_to_end_id=e2e).count() == 1
    assert PixPayment.objects.get().outcome == "settled"
    assert len(settled.calls) == 1
    assert settled.calls[0]["end_to_end_id"] == e2e
    assert PixRefund.objects.count() == 0


def test_twice_delivery_flag_settles_once(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    charge = pix_charge_ensure(reference="checkout_twice", amount=1000)

    with django_capture_on_commit_callbacks(execute=True):
        assert _pay(client, charge.txid, "?deliver=twice").status_code == 200

    assert len(settled.calls) == 1
    assert PixWebhookEvent.objects.count() == 1


def test_out_of_order_batch_settles_each_charge_once(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given two checkouts with active charges
    first = pix_charge_ensure(reference="checkout_first", amount=1000)
    second = pix_charge_ensure(reference="checkout_second", amount=2000)
    # when the PSP delivers both Pix in one callback, the batched partner first
    with django_capture_on_commit_callbacks(execute=True):
        response = _pay(client, second.txid, f"?batch_with={first.txid}")
    # then each charge is settled once, in the order received
    assert [pix["txid"] for pix in response.json()["pix"]] == [first.txid, second.txid]
    assert [call["reference"] for call in settled.calls] == ["checkout_first", "checkout_second"]
    assert set(PixCharge.objects.values_list("status", flat=True)) == {"paid"}


def test_late_payment_on_revoked_charge_is_refunded_once_without_signal(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a charge revoked locally (checkout canceled) whose PATCH has not reached the PSP yet
    charge = pix_charge_ensure(reference="checkout_late", amount=5000)
    pix_charge_revoke_for_reference(reference="checkout_late")  # on_commit PATCH not run: the QR is still payable
    # when the buyer pays it anyway and the PSP delivers twice
    with django_capture_on_commit_callbacks(execute=True):
        _pay(client, charge.txid, "?deliver=twice")
    # then nothing is settled and exactly one full refund is recorded and completed
    payment = PixPayment.objects.get()
    refund = PixRefund.objects.get()
    assert settled.calls == []
    assert payment.outcome == "refunded_late"
    assert (refund.kind, refund.amount, refund.status) == ("automatic", 5000, "completed")
    assert refund.reason == "Pagamento recebido após expiração"
    assert PixCharge.objects.get().status == "revoked"


def test_wrong_amount_is_refunded_once_and_the_charge_is_revoked(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    charge = pix_charge_ensure(reference="checkout_wrong", amount=5000)

    with django_capture_on_commit_callbacks(execute=True):
        _pay(client, charge.txid, "?wrong_amount=1&deliver=twice")

    charge.refresh_from_db()
    refund = PixRefund.objects.get()
    assert settled.calls == []
    assert PixPayment.objects.get().outcome == "refunded_amount_mismatch"
    assert (refund.amount, refund.status) == (5001, "completed")
    assert (charge.status, charge.status_reason) == ("revoked", "amount_mismatch")
    assert PaymentEvent.objects.filter(kind="charge_revoked", detail__reason="amount_mismatch").count() == 1
    # the checkout can get a fresh charge for the same total
    assert pix_charge_ensure(reference="checkout_wrong", amount=5000).txid != charge.txid


def test_rejected_by_the_shop_is_refunded_once(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given the shop answers "rejected" (checkout expired meanwhile)
    settled.answer = "rejected"
    charge = pix_charge_ensure(reference="checkout_rejected", amount=700)
    # when the payment arrives twice
    with django_capture_on_commit_callbacks(execute=True):
        _pay(client, charge.txid, "?deliver=twice")
    # then the signal was sent once, and one refund took the money back; the charge ends refunded
    charge.refresh_from_db()
    assert len(settled.calls) == 1
    assert PixPayment.objects.get().outcome == "refunded_rejected"
    assert PixRefund.objects.get().status == "completed"
    assert charge.status == "refunded"


def test_lost_webhook_is_settled_by_reconcile_once(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a payment whose webhook was lost
    charge = pix_charge_ensure(reference="checkout_lost", amount=990)
    with django_capture_on_commit_callbacks(execute=True):
        e2e = _pay(client, charge.txid, "?deliver=none").json()["pix"][0]["endToEndId"]
    assert settled.calls == []
    # when the reconcile beat runs twice and the webhook finally shows up
    with django_capture_on_commit_callbacks(execute=True):
        first = pix_charges_reconcile(min_age_seconds=0)
        second = pix_charges_reconcile(min_age_seconds=0)
        sandbox.redeliver(e2eid=e2e)
    # then exactly one settlement happened
    assert (first, second) == (1, 0)
    assert len(settled.calls) == 1
    assert PixPayment.objects.get().source == "poll"
    assert PixWebhookEvent.objects.get().outcome == "duplicate"


def test_refund_outcome_delivered_before_the_payment_notice(
    client: Client, settings: Any, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a wrong-amount payment whose plain notice the PSP holds back (refund_first)
    settings.PIX_SANDBOX_REFUND_AUTOSETTLE = False
    charge = pix_charge_ensure(reference="checkout_rf", amount=3000)
    with django_capture_on_commit_callbacks(execute=True):
        e2e = _pay(client, charge.txid, "?wrong_amount=1&refund_first=1").json()["pix"][0]["endToEndId"]
        pix_charges_reconcile(min_age_seconds=0)  # we learn of it by polling and refund it
    refund = PixRefund.objects.get()
    assert refund.status == "pending"
    # when the PSP settles the devolução: refund notice first, then the held payment notice
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/_sandbox/psp/pix/{e2e}/devolucao/{refund.psp_refund_id}/settle",
            data={"status": "DEVOLVIDO"},
            content_type="application/json",
            headers=CONTROL,
        )
    # then the refund is completed once and the late payment notice changes nothing
    refund.refresh_from_db()
    events = list(PixWebhookEvent.objects.order_by("id").values_list("refund_state", "outcome"))
    assert response.status_code == 200
    assert refund.status == "completed"
    assert events == [(f"{refund.psp_refund_id}:RETURNED", "duplicate"), ("", "duplicate")]
    assert PixRefund.objects.count() == 1
    assert settled.calls == []


def test_unknown_refund_and_payment_in_one_notice_creates_the_payment_first(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a paid charge the PSP reports only in a notice that already carries a devolução
    charge = pix_charge_ensure(reference="checkout_ooo", amount=4200)
    with django_capture_on_commit_callbacks(execute=True):
        pix = _pay(client, charge.txid, "?deliver=none").json()["pix"][0]
    with_refund = dict(
        pix,
        devolucoes=[
            {
                "id": "psporiginated1",
                "rtrId": "D" + "9" * 31,
                "valor": "1.00",
                "horario": {"solicitacao": "2026-07-28T15:05:00Z"},
                "status": "EM_PROCESSAMENTO",
            }
        ],
    )
    # when that notice arrives
    with django_capture_on_commit_callbacks(execute=True):
        response = post_signed(client, body(with_refund))
    # then the payment is settled from that entry (the unknown refund id is only logged)
    assert response.status_code == 200
    assert PixPayment.objects.get().outcome == "settled"
    assert len(settled.calls) == 1


def test_notice_the_psp_cannot_confirm_settles_nothing(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given an active charge and a correctly signed notice of a Pix the PSP never received
    charge = pix_charge_ensure(reference="checkout_forged", amount=5000)
    forged = item(e2e="E99999999202607281504AAAAAAAAAAA", txid=charge.txid, valor="50.00")
    # when it is delivered
    with django_capture_on_commit_callbacks(execute=True):
        post_signed(client, body(forged))
    # then fetch-to-confirm (GET /cob) finds no such Pix: nothing settles
    charge.refresh_from_db()
    assert PixWebhookEvent.objects.get().outcome == "unconfirmed"
    assert charge.status == "active"
    assert settled.calls == []
    assert PixPayment.objects.count() == 0


def test_second_different_pix_for_a_paid_charge_is_refunded() -> None:
    # given a charge already paid by one Pix
    from payments.psp.base import PSPPayment
    from payments.settlement import pix_payment_settle

    charge = pix_charge_ensure(reference="checkout_dup", amount=100)
    now = timezone.now()
    first = PSPPayment(end_to_end_id="E" + "1" * 31, txid=charge.txid, amount_cents=100, paid_at=now)
    extra = PSPPayment(end_to_end_id="E" + "2" * 31, txid=charge.txid, amount_cents=100, paid_at=now)
    # when another Pix with a different e2eid is confirmed for it
    outcomes = [
        pix_payment_settle(payment=first, source="webhook"),
        pix_payment_settle(payment=extra, source="webhook"),
    ]
    # then the extra one is refunded
    assert outcomes == ["settled", "refunded_duplicate"]
    assert PixRefund.objects.get().end_to_end_id == "E" + "2" * 31


def test_expired_locally_but_paid_on_time_still_settles(settled: Any) -> None:
    from payments.psp.base import PSPPayment
    from payments.settlement import pix_payment_settle

    charge = pix_charge_ensure(reference="checkout_ontime", amount=100)
    PixCharge.objects.filter(pk=charge.pk).update(status="expired")
    on_time = PSPPayment(end_to_end_id="E" + "3" * 31, txid=charge.txid, amount_cents=100, paid_at=charge.expires_at)
    late = PSPPayment(
        end_to_end_id="E" + "4" * 31,
        txid=charge.txid,
        amount_cents=100,
        paid_at=charge.expires_at + timedelta(seconds=1),
    )

    assert pix_payment_settle(payment=on_time, source="poll") == "settled"
    assert pix_payment_settle(payment=late, source="poll") == "refunded_duplicate"
    assert len(settled.calls) == 1


def test_expire_task_revokes_at_the_psp_then_expires(client: Client, django_capture_on_commit_callbacks: Any) -> None:
    # given a charge whose sandbox clock moved past expiry + grace
    charge = pix_charge_ensure(reference="checkout_exp", amount=100)
    PixCharge.objects.filter(pk=charge.pk).update(expires_at=timezone.now() - timedelta(seconds=121))
    # when the expiry beat runs twice
    counts = [pix_charges_expire_due(), pix_charges_expire_due()]
    # then it is expired once, and the PSP charge can no longer be paid
    charge.refresh_from_db()
    assert counts == [1, 0]
    assert (charge.status, charge.psp_removed) == ("expired", True)
    assert SandboxCob.objects.get(txid=charge.txid).status == "REMOVIDA_PELO_USUARIO_RECEBEDOR"
    assert _pay(client, charge.txid).status_code == 409


def test_expire_task_settles_a_last_moment_payment_instead(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a charge paid 3 minutes ago, before its expiry 2.5 minutes ago, whose webhook was lost
    charge = pix_charge_ensure(reference="checkout_lastmoment", amount=100)
    paid_at = (timezone.now() - timedelta(seconds=180)).isoformat()
    with django_capture_on_commit_callbacks(execute=True):
        assert _pay(client, charge.txid, "?deliver=none", at=paid_at).status_code == 200
    PixCharge.objects.filter(pk=charge.pk).update(expires_at=timezone.now() - timedelta(seconds=150))
    # when the expiry beat takes its last look at the PSP

    expired = pix_charges_expire_due()
    # then it settles instead of expiring
    assert expired == 0
    assert PixCharge.objects.get().status == "paid"
    assert len(settled.calls) == 1


def test_lost_webhook_of_a_revoked_charge_is_found_by_the_received_list(
    settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from payments.settlement import pix_received_reconcile
    from payments.tasks import reconcile_received_pix

    # given a revoked charge paid anyway (the PATCH had not reached the PSP) and a lost webhook
    charge = pix_charge_ensure(reference="checkout_hidden", amount=777)
    pix_charge_revoke_for_reference(reference="checkout_hidden")
    sandbox.pay(txid=charge.txid, options=sandbox.PayOptions(deliver="none"))
    # when the per-charge poll runs (it only looks at active charges) and then the hourly list of received Pix
    with django_capture_on_commit_callbacks(execute=True):
        polled = pix_charges_reconcile(min_age_seconds=0)
        found = reconcile_received_pix.apply().get()
        again = pix_received_reconcile(start=timezone.now() - timedelta(hours=3), end=timezone.now())
    # then the Pix is found once and refunded, never settled
    assert (polled, found, again) == (0, 1, 0)
    assert PixPayment.objects.get().outcome == "refunded_late"
    assert PixRefund.objects.get().status == "completed"
    assert settled.calls == []
