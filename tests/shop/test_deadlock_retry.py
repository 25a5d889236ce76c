"""A deadlock victim runs its transaction again (shop.checkout.core.retried_on_deadlock; seen in CI by
tests/bcp_app/test_concurrent_writers.py as a 500).

The deadlock is the one concurrent Pix writers can meet, built here step by step on real Postgres: a
writer holds the checkout (its `lock` found no active charge), a Pix charge becomes active afterwards (as
one issued after a PSP call does, outside any checkout lock), a second writer's `lock` takes that charge
and waits for the checkout, and the first writer now revokes the charge. PostgreSQL aborts one of them;
the victim runs again and both end normally.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from payments.models import PixCharge
from payments.services import pix_charge_revoke_for_reference
from shop.checkout.core import lock, retried_on_deadlock
from tests.shop.test_completion import ready_checkout

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _active_charge(reference: str) -> PixCharge:
    now = timezone.now()
    return PixCharge.objects.create(
        txid="T" * 30, reference=reference, amount=8580, br_code="000201", psp_created_at=now,
        expires_at=now + timedelta(hours=1),
    )  # fmt: skip


def _waiting_for_a_lock(count: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        row = cursor.fetchone()
    return row is not None and row[0] >= count


def _run(retried: bool) -> tuple[dict[str, list[Any]], PixCharge]:
    reference = ready_checkout().public_id
    holder_has_checkout, charge_created, waiter_started = threading.Event(), threading.Event(), threading.Event()
    runs: dict[str, list[Any]] = {"holder": [], "waiter": []}

    def holder() -> None:
        with transaction.atomic():
            lock(reference)  # no active charge yet: only the checkout is locked
            first = not runs["holder"]
            runs["holder"].append("run")
            if first:
                holder_has_checkout.set()
                charge_created.wait(10)
                waiter_started.wait(10)
            pix_charge_revoke_for_reference(reference=reference)  # the charge this lock never took

    def waiter() -> None:
        with transaction.atomic():
            runs["waiter"].append("run")
            lock(reference)  # takes the active charge, then waits for the checkout

    def thread(name: str, body: Any) -> threading.Thread:
        func = retried_on_deadlock(body) if retried else body

        def target() -> None:
            try:
                func()
                runs[name].append("done")
            except OperationalError as exc:
                runs[name].append(exc)
            finally:
                connection.close()

        return threading.Thread(target=target)

    first, second = thread("holder", holder), thread("waiter", waiter)
    first.start()
    assert holder_has_checkout.wait(10)
    _active_charge(reference)
    charge_created.set()
    second.start()
    deadline = time.monotonic() + 10
    while not _waiting_for_a_lock(1) and time.monotonic() < deadline:  # the waiter blocks on the checkout
        time.sleep(0.02)
    waiter_started.set()
    first.join(30)
    second.join(30)
    return runs, PixCharge.objects.get(reference=reference)


def test_without_the_retry_the_deadlock_fails_one_writer() -> None:
    """The scenario is a real deadlock: without the retry one of the two writers fails with it."""
    runs, _ = _run(retried=False)
    failed = [name for name, steps in runs.items() if isinstance(steps[-1], OperationalError)]
    assert len(failed) == 1
    assert "deadlock" in str(runs[failed[0]][-1])


def test_the_deadlock_victim_runs_again_and_both_writers_finish() -> None:
    runs, charge = _run(retried=True)
    assert runs["holder"][-1] == "done" and runs["waiter"][-1] == "done"
    assert sorted(len(steps) for steps in runs.values()) == [2, 3]  # one of them ran twice, then finished
    assert charge.status == "revoked"  # the holder's revoke, in the first run or the second, went through
