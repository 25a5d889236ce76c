"""Concurrency (real Postgres, real commits): the webhook task and the reconcile task settling the same
charge at the same moment send exactly one `charge_settled`."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from payments.models import PixCharge, PixPayment, PixWebhookEvent
from payments.sandbox import services as sandbox
from payments.sandbox.bodies import pix_item
from payments.services import pix_charge_ensure
from payments.tasks import process_pix_webhook, reconcile_pix_charges


def _run_together(*functions: Any) -> list[Any]:
    barrier = threading.Barrier(len(functions))
    results: list[Any] = [None] * len(functions)

    def worker(index: int, function: Any) -> None:
        try:
            barrier.wait()
            results[index] = function()
        except Exception as exc:  # surfaced by the assertion below
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i, f)) for i, f in enumerate(functions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_webhook_task_and_reconcile_task_settle_once(settled: Any) -> None:
    # given the receiver holds the charge lock a little while, so the loser really waits on the row
    settled.hold_seconds = 0.2
    for round_number in range(3):
        # given a paid charge (PSP side) with its webhook stored in the inbox but not yet processed
        reference = f"checkout_race_{round_number}"
        charge = pix_charge_ensure(reference=reference, amount=4990)
        pix = sandbox.pay(txid=charge.txid, options=sandbox.PayOptions(deliver="none"))[0]
        PixCharge.objects.filter(pk=charge.pk).update(created_at=timezone.now() - timedelta(minutes=1))
        item = pix_item(pix)
        event = PixWebhookEvent.objects.create(
            end_to_end_id=pix.end_to_end_id, txid=charge.txid, payload=item, raw_body=b"{}", body_sha256="0" * 64
        )
        # when the webhook task and the reconcile beat run at the same moment
        # (`.result` with throw=True, not `.get()`: eager apply_async in one thread flips Celery's
        # process-global "join would block" flag, which makes a concurrent `.get()` raise)
        results = _run_together(
            lambda event_id=event.pk: process_pix_webhook.apply(args=[event_id], throw=True).result,
            lambda: reconcile_pix_charges.apply(throw=True).result,
        )
        # then exactly one of them settled it, and the shop heard once
        assert not [r for r in results if isinstance(r, Exception)], results
        assert sorted(map(str, results)) == sorted(["settled", "0"]) or sorted(map(str, results)) == sorted(
            ["duplicate", "1"]
        )
        assert [call["reference"] for call in settled.calls].count(reference) == 1
        assert PixPayment.objects.filter(txid=charge.txid).count() == 1
        assert PixCharge.objects.get(pk=charge.pk).status == "paid"
