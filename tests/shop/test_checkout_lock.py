"""`shop.checkout.core.lock`, the one lock every checkout write takes, under concurrency on real Postgres.

Each test builds its interleaving step by step with two connections (threads), and each one fails on the
lock as it was before the reference lock (`payments.locks`):
- a Pix charge became active outside any checkout lock (as one issued after a PSP call does) while a
  writer held the checkout; a second writer, or the charge's settlement, then took that charge and waited
  for the checkout, and the first writer's revoke closed a deadlock;
- a writer that waited for the lock read the lines as they were when its statement began, not as the
  writer it waited for left them.
`retried_on_deadlock`, the net under the lock order, is tested on a deadlock made on purpose.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from payments.locks import pix_charge_lock
from payments.models import CardPayment, PixCharge
from payments.psp import PSPPayment
from payments.services import pix_charge_revoke_for_reference
from payments.settlement import pix_payment_settle
from shop.checkout.core import cancel, lock, lock_if_free, retried_on_deadlock
from shop.checkout.services import checkout_complete, checkout_create, checkout_update
from shop.checkout.types import CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import Checkout, CheckoutLine, Variant
from tests.shop.checkout_factories import full_input
from tests.shop.test_completion import ready_checkout

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
TXID = "T" * 30


def _active_charge(reference: str) -> PixCharge:
    now = timezone.now()
    return PixCharge.objects.create(
        txid=TXID, reference=reference, amount=8580, br_code="000201", psp_created_at=now,
        expires_at=now + timedelta(hours=1),
    )  # fmt: skip


def _waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        row = cursor.fetchone()
    return row is not None and row[0] >= 1


def _until_someone_waits() -> None:
    deadline = time.monotonic() + 10
    while not _waiting_for_a_lock() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _waiting_for_a_lock(), "the second connection never waited for a lock"


class Threads:
    """Bodies run on their own connections; each one's outcome is "done" or the exception it raised."""

    def __init__(self) -> None:
        self.outcomes: dict[str, Any] = {}
        self.threads: list[threading.Thread] = []

    def start(self, name: str, body: Callable[[], Any]) -> None:
        def target() -> None:
            try:
                self.outcomes[name] = ("done", body())
            except Exception as exc:  # the test asserts on what came out
                self.outcomes[name] = ("failed", exc)
            finally:
                connection.close()

        thread = threading.Thread(target=target)
        self.threads.append(thread)
        thread.start()

    def join(self) -> dict[str, Any]:
        for thread in self.threads:
            thread.join(30)
        return self.outcomes


def _against_a_holder_that_revokes(second: Callable[[str], Any]) -> tuple[dict[str, Any], str]:
    """A writer holds the checkout (no active charge yet); a charge becomes active; `second(reference)` starts
    and waits for a lock; the holder then revokes that charge. Returns both outcomes and the reference."""
    reference = ready_checkout().public_id
    has_checkout, go_on = threading.Event(), threading.Event()

    def holder() -> None:
        with transaction.atomic():
            lock(reference)
            has_checkout.set()
            assert go_on.wait(10)
            pix_charge_revoke_for_reference(reference=reference)  # the charge that became active meanwhile

    threads = Threads()
    threads.start("holder", holder)
    assert has_checkout.wait(10)
    _active_charge(reference)
    threads.start("second", lambda: second(reference))
    _until_someone_waits()
    go_on.set()
    return threads.join(), reference


def test_a_charge_activated_under_a_held_checkout_cannot_deadlock_two_writers() -> None:
    """No retry here: the second writer waits for the first and both finish (before: one of them died of
    `deadlock detected`, seen in CI as a 500 from tests/bcp_app/test_concurrent_writers.py)."""

    def second_writer(reference: str) -> str:
        with transaction.atomic():
            return lock(reference).status

    outcomes, _ = _against_a_holder_that_revokes(second_writer)
    assert outcomes == {"holder": ("done", None), "second": ("done", "ready_for_complete")}
    assert PixCharge.objects.get(txid=TXID).status == "revoked"


def test_a_payment_of_that_charge_waits_for_the_writer_and_is_refunded_as_late() -> None:
    """The charge's settlement (charge, then the checkout through charge_settled) meets the writer that
    revokes it: the settlement waits, then finds the charge revoked (PIX.md §3.2: refunded, no order)."""
    paid = PSPPayment(end_to_end_id="E" * 32, txid=TXID, amount_cents=8580, paid_at=timezone.now())
    outcomes, reference = _against_a_holder_that_revokes(lambda _: pix_payment_settle(payment=paid, source="webhook"))
    assert outcomes == {"holder": ("done", None), "second": ("done", "refunded_late")}
    assert Checkout.objects.get(public_id=reference).status == "ready_for_complete"


def test_a_writer_that_waited_reads_the_lines_the_writer_before_it_left() -> None:
    """`lock(lines=True)` reads the lines in the statement that locks the checkout; when it had to wait, the
    lines come from after the wait (before: as they were when its statement began, so an update or a
    complete worked on lines another writer had already changed)."""
    checkout = ready_checkout(quantity=2)
    line = CheckoutLine.objects.get(checkout=checkout)
    has_checkout, go_on = threading.Event(), threading.Event()
    threads = Threads()

    def first_writer() -> None:
        with transaction.atomic():
            locked = lock(checkout.public_id, lines=True)
            has_checkout.set()
            assert go_on.wait(10)
            CheckoutLine.objects.filter(pk=line.pk).update(quantity=3)
            CheckoutLine.objects.create(
                checkout=locked, public_id="li_added", position=1, variant_id=line.variant_id, sku=line.sku,
                title=line.title, unit_price=line.unit_price, quantity=1,
            )  # fmt: skip
            locked.save()  # every line change comes with its checkout's UPDATE

    def second_writer() -> list[tuple[str, int]]:
        with transaction.atomic():
            locked = lock(checkout.public_id, lines=True)
            return [(row.public_id, row.quantity) for row in locked.lines.all()]

    threads.start("first", first_writer)
    assert has_checkout.wait(10)
    threads.start("second", second_writer)
    _until_someone_waits()
    go_on.set()
    outcomes = threads.join()
    assert outcomes["first"] == ("done", None)
    assert outcomes["second"] == ("done", [(line.public_id, 3), ("li_added", 1)])


def test_a_sweep_skips_a_checkout_whose_charge_is_being_settled() -> None:
    """`lock_if_free` (the sweeps) never waits, and leaves for its next run a checkout whose charge a
    settlement has locked but whose checkout it has not reached yet (before: the sweep took the checkout and
    then waited for the charge, while the settlement waited for the checkout)."""
    reference = ready_checkout().public_id
    _active_charge(reference)
    has_it, go_on = threading.Event(), threading.Event()
    threads = Threads()

    def settlement_step_one() -> None:
        with transaction.atomic():
            assert pix_charge_lock(txid=TXID) is not None  # the statement pix_payment_settle begins with
            has_it.set()
            assert go_on.wait(10)

    threads.start("holder", settlement_step_one)
    assert has_it.wait(10)
    with transaction.atomic():
        assert lock_if_free(reference) is None
    go_on.set()
    threads.join()
    with transaction.atomic():
        free = lock_if_free(reference)
    assert free is not None and free.public_id == reference


def _opposite_order(retried: bool) -> dict[str, Any]:
    """Two writers lock two checkouts in opposite order: a deadlock no code path of ours makes, made here."""
    first = ready_checkout().public_id
    second = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1), option="pac")).checkout.public_id
    both_hold_one = threading.Barrier(2, timeout=10)
    runs: dict[str, int] = {"a": 0, "b": 0}

    def writer(name: str, one: str, other: str) -> Callable[[], int]:
        def body() -> int:
            with transaction.atomic():
                runs[name] += 1
                lock(one)
                if runs[name] == 1:
                    both_hold_one.wait()
                lock(other)
            return runs[name]

        return retried_on_deadlock(body) if retried else body

    threads = Threads()
    threads.start("a", writer("a", first, second))
    threads.start("b", writer("b", second, first))
    return threads.join()


def test_without_the_retry_a_deadlock_fails_one_writer() -> None:
    outcomes = _opposite_order(retried=False)
    failed = [outcome for state, outcome in outcomes.values() if state == "failed"]
    assert len(failed) == 1 and isinstance(failed[0], OperationalError) and "deadlock" in str(failed[0])


def test_the_deadlock_victim_runs_again_and_both_writers_finish() -> None:
    outcomes = _opposite_order(retried=True)
    assert sorted(outcomes.values()) == [("done", 1), ("done", 2)]  # the victim's second run went through


@pytest.mark.parametrize(
    ("quantity", "option"),
    [
        (2, None),  # the lines as stored, the status moves (ready → incomplete): one UPDATE, no transaction
        (3, "pac"),  # a line changes too: the checkout's UPDATE, then the line's, in one transaction
    ],
)
def test_an_update_read_without_the_lock_writes_nothing_over_a_writer_before_it(
    quantity: int, option: str | None
) -> None:
    """An update reads the checkout with no lock and writes it only while its row is still the version it read
    (issue 34: `_update_unlocked`). Here a writer holds the checkout and cancels it after the update has read it:
    the update's UPDATE waits for it, matches no row, and the update runs again under the lock, where it finds
    the checkout canceled (BCP-CHK-14: unchanged, `invalid_checkout_status`) — never the old state written over
    the cancel (as an UPDATE without the version check wrote: status and line back from a canceled checkout)."""
    checkout = ready_checkout(quantity=2)
    reference = checkout.public_id

    def updater() -> list[tuple[str, str]]:
        data = full_input(LineInput("SKU-CAFE-500G", quantity, line_id=line.public_id), option=option)
        result = checkout_update(checkout_id=reference, data=data)
        return [(message.code, message.severity) for message in result.messages if message.type == "error"]

    line = CheckoutLine.objects.get(checkout=checkout)
    outcomes = _canceled_while_waiting(reference, "updater", updater)  # its UPDATE waited for the canceler
    assert outcomes == {
        "canceler": ("done", None),
        "updater": ("done", [("invalid_checkout_status", "unrecoverable")]),
    }
    stored = Checkout.objects.get(public_id=reference)
    assert stored.status == "canceled"
    assert list(CheckoutLine.objects.filter(checkout=stored).values_list("quantity", flat=True)) == [2]
    assert list(stored.events.values_list("kind", flat=True).order_by("pk"))[-1] == "canceled"


def test_an_update_with_no_writer_before_it_takes_no_lock(django_assert_num_queries: Any) -> None:
    """The usual update of a checkout that holds nothing: one SELECT and one UPDATE (its event in it), no
    BEGIN/COMMIT and no lock (issue 34; before: BEGIN, the lock with the lines, the UPDATE, COMMIT)."""
    checkout = ready_checkout(quantity=2)
    line = CheckoutLine.objects.get(checkout=checkout)
    data = full_input(LineInput("SKU-CAFE-500G", 2, line_id=line.public_id), option=None)
    with django_assert_num_queries(2) as captured:
        result = checkout_update(checkout_id=checkout.public_id, data=data)
    assert result.checkout.status == "incomplete"
    assert "FOR UPDATE" not in captured.captured_queries[0]["sql"]
    stored = Checkout.objects.get(public_id=checkout.public_id)
    assert (stored.status, list(stored.events.values_list("kind", flat=True).order_by("pk"))[-1]) == (
        "incomplete",
        "status_changed",
    )


def test_a_card_complete_read_without_the_lock_takes_no_stock_over_a_writer_before_it() -> None:
    """Step 1 of a card complete reads the checkout with no lock and takes the units, moves the checkout and writes
    its event in one statement that first locks the row while it is still the version it read (issue 34:
    `_begin_unlocked`). Here a writer holds the checkout and cancels it after the complete has read it: that
    statement waits for it, then writes nothing (not the units either), and the complete runs again under the lock,
    where it finds the checkout canceled (BCP-CHK-14) — no units taken from a canceled checkout, no charge (as with
    a stock guard that did not wait for the row's version: two units gone with nothing holding them)."""
    card = InstrumentInput(
        id="instr_c", handler_id="gpay", type="card", credential={"type": "PAYMENT_GATEWAY", "token": "success_token"}
    )
    checkout = ready_checkout(quantity=2, payment=PaymentInput(instruments=(card,)))
    reference = checkout.public_id

    def completer() -> list[tuple[str, str]]:
        result = checkout_complete(checkout_id=reference, data=CompleteInput(payment=PaymentInput(instruments=(card,))))
        return [(message.code, message.severity) for message in result.messages if message.type == "error"]

    outcomes = _canceled_while_waiting(reference, "completer", completer)  # its statement waited for the canceler
    assert outcomes == {
        "canceler": ("done", None),
        "completer": ("done", [("invalid_checkout_status", "unrecoverable")]),
    }
    assert Checkout.objects.get(public_id=reference).status == "canceled"
    assert Variant.objects.get(sku="SKU-CAFE-500G").stock == 10
    assert not CardPayment.objects.filter(reference=reference).exists()


def _canceled_while_waiting(reference: str, name: str, step: Any) -> dict[str, Any]:
    """`step` (named `name`) run while another transaction holds checkout `reference` locked; once `step` waits on
    that lock (it read the checkout unlocked and now writes), the other cancels the checkout and commits. Returns
    both threads' outcomes."""
    has_checkout, go_on = threading.Event(), threading.Event()
    threads = Threads()

    def canceler() -> None:
        with transaction.atomic():
            locked = lock(reference)
            has_checkout.set()
            assert go_on.wait(10)
            cancel(locked, kind="canceled")

    threads.start("canceler", canceler)
    assert has_checkout.wait(10)
    threads.start(name, step)
    _until_someone_waits()
    go_on.set()
    return threads.join()
