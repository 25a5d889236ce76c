"""Sandbox charge -> pay -> signed webhook -> inbox -> task -> one charge_settled (whole path, eager)."""

from __future__ import annotations

from typing import Any

import pytest

from payments.models import PixCharge, PixPayment, PixWebhookEvent
from payments.sandbox import services as sandbox
from payments.services import pix_charge_ensure

pytestmark = pytest.mark.django_db


def test_sandbox_payment_settles_through_the_webhook(settled: Any, django_capture_on_commit_callbacks: Any) -> None:
    # given an active charge of R$ 59,99 for a checkout
    charge = pix_charge_ensure(reference="checkout_abc", amount=5999)
    # when the sandbox PSP is paid and delivers its webhook
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.pay(txid=charge.txid, options=sandbox.PayOptions())
    # then the charge is paid once and the shop heard about it once
    charge.refresh_from_db()
    payment = PixPayment.objects.get()
    assert charge.status == "paid"
    assert charge.paid_amount == 5999
    assert charge.end_to_end_id == payment.end_to_end_id
    assert payment.outcome == "settled"
    assert PixWebhookEvent.objects.get().outcome == "settled"
    assert [call["txid"] for call in settled.calls] == [charge.txid]
    assert settled.calls[0]["reference"] == "checkout_abc"
    assert settled.calls[0]["amount"] == 5999
    assert PixCharge.objects.count() == 1
