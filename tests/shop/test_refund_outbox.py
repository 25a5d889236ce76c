"""Refunds are durable: an outbox row in the adjustment's transaction, retried by the beat sweep, once.

The fault is a real database error: a Postgres trigger refuses the insert of the devolução row
during the first processing attempt, as an outage of the payments tables would.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from orders.models import Adjustment, OutboxMessage
from orders.services import order_refund
from orders.tasks import sweep_outbox
from payments.models import PixRefund
from tests.shop.test_completion_refunds import paid_order

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]  # the fault is a Postgres trigger


def refuse_refund_inserts() -> None:
    table = PixRefund._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION golive_refuse_refund() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'payments tables unavailable'; END $$"
        )
        cursor.execute(
            f'CREATE TRIGGER golive_refuse_refund BEFORE INSERT ON "{table}" '
            "FOR EACH ROW EXECUTE FUNCTION golive_refuse_refund()"
        )


def allow_refund_inserts() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f'DROP TRIGGER golive_refuse_refund ON "{PixRefund._meta.db_table}"')
        cursor.execute("DROP FUNCTION golive_refuse_refund()")


def age_outbox() -> None:
    OutboxMessage.objects.update(created_at=timezone.now() - timedelta(minutes=5))


def test_a_failed_first_attempt_is_completed_by_the_sweep_exactly_once(django_capture_on_commit_callbacks) -> None:
    order = paid_order(django_capture_on_commit_callbacks)
    refuse_refund_inserts()
    # when the merchant refunds and the first processing attempt hits a database error
    with django_capture_on_commit_callbacks(execute=True):
        adjustment = order_refund(order_id=order.public_id, amount=1000, reason="Cliente desistiu de um item")
    # then nothing reached payments, and the outbox row waits with the error recorded
    message = OutboxMessage.objects.get()
    assert (message.kind, message.key, message.status, message.attempts) == (
        "refund_requested",
        f"refund:{adjustment.public_id}",
        "pending",
        1,
    )
    assert message.last_error.startswith("ProgrammingError: payments tables unavailable")  # a DatabaseError
    assert PixRefund.objects.count() == 0
    assert Adjustment.objects.get(pk=adjustment.pk).status == "pending"
    # when the outage ends and beat runs the sweep
    allow_refund_inserts()
    age_outbox()
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_outbox() == 1
    # then the devolução was requested once, with the adjustment id as its refund id
    refund = PixRefund.objects.get()
    assert (refund.refund_id, refund.reference, refund.amount) == (adjustment.public_id, order.checkout_id, 1000)
    message.refresh_from_db()
    assert (message.status, message.attempts, message.last_error) == ("done", 2, "")
    # and further sweeps change nothing
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_outbox() == 0
    assert PixRefund.objects.count() == 1


def test_a_refund_is_processed_after_commit_without_the_sweep(django_capture_on_commit_callbacks) -> None:
    order = paid_order(django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        adjustment = order_refund(order_id=order.public_id, amount=500, reason="Brinde")
    assert OutboxMessage.objects.get().status == "done"
    assert PixRefund.objects.get().refund_id == adjustment.public_id


def test_the_sweep_leaves_young_rows_to_their_own_task(django_capture_on_commit_callbacks) -> None:
    order = paid_order(django_capture_on_commit_callbacks)
    # when the after-commit enqueue is lost (callbacks not run: the broker was down)
    with django_capture_on_commit_callbacks(execute=False):
        order_refund(order_id=order.public_id, amount=500, reason="Brinde")
    # then a sweep right away leaves the young row alone; once it is old enough, the sweep runs it
    assert sweep_outbox() == 0
    age_outbox()
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_outbox() == 1
    assert PixRefund.objects.count() == 1
