"""kernel.rows (issue 34): rows inserted together in one statement, and an update that writes only the columns
that changed since the row was read. Real Postgres; the statements are counted as Django counts them."""

from __future__ import annotations

from typing import Any

import pytest
from celery.app.task import Task
from django.apps import apps
from django.db import IntegrityError, connection, models, transaction
from django.db.models.signals import post_init
from django.test.utils import CaptureQueriesContext

from kernel.rows import Then, Update, insert_once, insert_together, new_row, unchanged, update_then_insert, update_where
from orders.models import Order, OrderLine
from shop.models import Checkout, CheckoutEvent, CheckoutLine
from tests.bcp_app.bcp_fixtures import FakePlatform, bcp_settings, fake_platform  # noqa: F401
from tests.bench.test_flow_profile import _flow, flow_client

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _line(checkout: Checkout, sku: str, position: int) -> CheckoutLine:
    return CheckoutLine(checkout=checkout, sku=sku, title=sku, position=position, quantity=position + 1)


def test_insert_together_writes_the_head_and_its_rows_in_one_statement() -> None:
    checkout = Checkout(buyer_email="ana@example.com.br")
    lines = [_line(checkout, "SKU-A", 0), _line(checkout, "SKU-B", 1)]
    created = CheckoutEvent(checkout=checkout, kind="created", from_status="", to_status="incomplete", detail={})
    with CaptureQueriesContext(connection) as queries:
        insert_together(checkout, lines, [created])
    assert len(queries) == 1
    assert checkout.pk is not None and not checkout._state.adding
    # every row has its pk, in the order given, and its foreign key to the head
    stored = list(CheckoutLine.objects.filter(checkout_id=checkout.pk).order_by("id").values_list("pk", "sku"))
    assert stored == [(lines[0].pk, "SKU-A"), (lines[1].pk, "SKU-B")]
    assert [line.checkout_id for line in lines] == [checkout.pk, checkout.pk]
    assert CheckoutEvent.objects.get(pk=created.pk).checkout_id == checkout.pk
    assert Checkout.objects.get(pk=checkout.pk).buyer_email == "ana@example.com.br"


def test_insert_together_writes_nothing_when_a_row_fails() -> None:
    checkout = Checkout()
    duplicate = _line(checkout, "SKU-A", 0)
    CheckoutLine.objects.create(checkout=Checkout.objects.create(), sku="X", quantity=1, public_id="li_same")
    duplicate.public_id = "li_same"  # unique: the whole statement fails, the head with it
    before = Checkout.objects.count()
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_together(checkout, [duplicate])
    assert Checkout.objects.count() == before


def test_changed_only_writes_the_columns_that_changed_since_the_read() -> None:
    Checkout.objects.create(buyer_email="ana@example.com.br", buyer_first_name="Ana")
    checkout = Checkout.objects.get(buyer_email="ana@example.com.br")
    checkout.status = "ready_for_complete"
    checkout.buyer_first_name = "Ana"  # same value: not written
    with CaptureQueriesContext(connection) as queries:
        assert update_where(checkout, checkout.written_fields(), changed_only=True)
    sql = queries[0]["sql"]
    assert '"status"' in sql and '"updated_at"' in sql
    assert '"buyer_first_name"' not in sql and '"buyer_email"' not in sql
    assert '"messages"' in sql  # a JSON column may have been edited in place: always written
    # a column changed behind the copy's back is not overwritten by a value the copy never changed
    Checkout.objects.filter(pk=checkout.pk).update(buyer_phone="+5511999990000")
    checkout.buyer_last_name = "Souza"
    assert update_where(checkout, checkout.written_fields(), changed_only=True)
    stored = Checkout.objects.get(pk=checkout.pk)
    assert (stored.status, stored.buyer_last_name, stored.buyer_phone) == (
        "ready_for_complete",
        "Souza",
        "+5511999990000",
    )
    # after a write the copy remembers what the row holds: writing it again writes no column of its own
    with CaptureQueriesContext(connection) as queries:
        assert update_where(checkout, ["status", "buyer_last_name"], changed_only=True)
    assert '"status"' not in queries[0]["sql"] and '"buyer_last_name"' not in queries[0]["sql"]


def test_update_then_insert_writes_the_rows_only_when_the_update_matched() -> None:
    waiting = Checkout.objects.create(status="complete_in_progress")
    head = Checkout(buyer_email="ana@example.com.br")  # stands for the order: a head with its rows
    lines = [_line(head, "SKU-A", 0)]
    waiting.status = "canceled"
    done = CheckoutEvent(checkout=waiting, kind="canceled", from_status="complete_in_progress", to_status="canceled")
    matched = Update(waiting, ("status",), where={"status": "complete_in_progress"}, event=done)
    with CaptureQueriesContext(connection) as queries:
        assert update_then_insert(matched, head, lines)
    assert len(queries) == 1
    assert Checkout.objects.get(pk=waiting.pk).status == "canceled"
    assert CheckoutEvent.objects.filter(checkout_id=waiting.pk, kind="canceled").count() == 1
    assert CheckoutLine.objects.get(pk=lines[0].pk).checkout_id == head.pk == lines[0].checkout_id
    # the row moved on: neither the update, its event, the head nor its rows are written
    other = Checkout(buyer_email="bia@example.com.br")
    moved = Update(waiting, ("status",), where={"status": "complete_in_progress"})
    before = (Checkout.objects.count(), CheckoutLine.objects.count(), CheckoutEvent.objects.count())
    assert not update_then_insert(moved, other, [_line(other, "SKU-B", 0)])
    assert (Checkout.objects.count(), CheckoutLine.objects.count(), CheckoutEvent.objects.count()) == before
    assert other.pk is None


def test_a_save_forgets_what_was_read() -> None:
    """Written by `save()` (or read again), the copy no longer knows what the row holds: the next `changed_only`
    write writes every column it is given, as a full save would."""
    Checkout.objects.create(buyer_email="ana@example.com.br", stock_reserved=False)
    checkout = Checkout.objects.get(buyer_email="ana@example.com.br")
    checkout.stock_reserved = True
    checkout.save()
    checkout.stock_reserved = False  # back to the value read: still a change for the row
    assert update_where(checkout, checkout.written_fields(), changed_only=True)
    assert Checkout.objects.get(pk=checkout.pk).stock_reserved is False


def test_insert_once_with_a_guard_writes_only_while_the_guarded_row_is_as_read() -> None:
    Checkout.objects.create(buyer_email="ana@example.com.br", status="incomplete")
    read = Checkout.objects.get(buyer_email="ana@example.com.br")
    line = _line(read, "SKU-A", 0)
    noted = CheckoutEvent(checkout=read, kind="noted", from_status="incomplete", to_status="incomplete", detail={})
    with CaptureQueriesContext(connection) as queries:
        assert insert_once(line, ("public_id",), event=noted, guard=unchanged(read, ("status", "updated_at")))
    assert len(queries) == 1 and "FOR UPDATE" in queries[0]["sql"]
    assert CheckoutLine.objects.get(pk=line.pk).sku == "SKU-A"
    assert CheckoutEvent.objects.filter(checkout_id=read.pk, kind="noted").count() == 1
    # the same key again: nothing written, the event neither
    again = _line(read, "SKU-B", 1)
    again.public_id = line.public_id
    guard = unchanged(read, ("status", "updated_at"))
    assert not insert_once(again, ("public_id",), event=CheckoutEvent(checkout=read, kind="noted"), guard=guard)
    # the row moved on since it was read: nothing written
    Checkout.objects.filter(pk=read.pk).update(status="ready_for_complete")
    moved = _line(read, "SKU-C", 2)
    guard = unchanged(read, ("status", "updated_at"))
    assert not insert_once(moved, ("public_id",), event=CheckoutEvent(checkout=read, kind="noted"), guard=guard)
    assert moved.pk is None
    assert CheckoutLine.objects.filter(checkout_id=read.pk).count() == 1
    assert CheckoutEvent.objects.filter(checkout_id=read.pk, kind="noted").count() == 1


def _fields(instance: models.Model) -> dict[str, Any]:
    # the random defaults (public ids, tokens) are drawn again for each instance: compared by type
    return {
        field.attname: type(value) if field.has_default() and callable(field.default) else value
        for field in instance._meta.concrete_fields
        for value in [getattr(instance, field.attname)]
    }


def test_new_row_builds_what_the_model_builds_for_every_model_of_the_project() -> None:
    """issue 34: `new_row(Model, **values)` (no walk of every field) is `Model(**values)`: defaults, callable
    defaults only for fields not given, a relation given as an instance set through its descriptor."""
    project = [m for m in apps.get_models() if m.__module__.split(".")[0] in {"shop", "orders", "payments", "bcp_app"}]
    assert len(project) > 20
    for model in project:
        assert _fields(new_row(model)) == _fields(model()), model
        assert new_row(model)._state.adding and new_row(model)._state.db is None
    order = Order(number=7, buyer_email="ana@example.com.br")
    built, expected = new_row(Order, number=7, buyer_email="ana@example.com.br"), order
    assert _fields(built) == _fields(expected)
    line = new_row(OrderLine, order=order, sku="SKU-A", title="Café", unit_price=4290)
    assert line.order is order and line.order_id is None and line.sku == "SKU-A" and line.unit_price == 4290
    assert _fields(line) == _fields(OrderLine(order=order, sku="SKU-A", title="Café", unit_price=4290))
    given = new_row(Checkout, public_id="checkout_given", messages=[{"code": "x"}])
    assert given.public_id == "checkout_given" and given.messages == [{"code": "x"}]
    assert new_row(Checkout).messages is not new_row(Checkout).messages  # a callable default is called per row
    with pytest.raises(TypeError):
        new_row(Order, no_such_field=1)  # Django's own refusal


def test_new_row_leaves_a_model_with_init_receivers_to_django() -> None:
    seen: list[object] = []

    def receiver(sender: type, instance: object, **_: Any) -> None:
        seen.append(instance)

    post_init.connect(receiver, sender=OrderLine, weak=False)
    try:
        line = new_row(OrderLine, sku="SKU-A")
        again = new_row(OrderLine, sku="SKU-B")
    finally:
        post_init.disconnect(receiver, sender=OrderLine)
    assert seen == [line, again]


def test_a_purchase_placed_through_new_row_stores_its_rows(
    bcp_settings: Any,  # noqa: F811
    fake_platform: FakePlatform,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rows a REST purchase builds with `new_row` (checkout, events, order and its rows, payment) are written
    and read back as the ORM reads them."""
    monkeypatch.setattr(Task, "apply_async", lambda *args, **kwargs: None)
    client = flow_client(fake_platform, stock=10)
    order_id = _flow(client)
    order = Order.objects.get(public_id=order_id)
    assert order.lines.get().sku == "SKU-BENCH" and order.expectations.count() == 1
    assert sorted(order.timeline.values_list("kind", flat=True)) == ["payment_confirmed", "placed"]


def test_insert_once_makes_its_rider_only_when_the_row_is_inserted() -> None:
    """issue 34: `Then` rides in the INSERT's own statement (a card payment's row draws the order number), made
    only when the row was inserted: a conflict writes neither and says so."""
    checkout = Checkout.objects.create()
    rider = "UPDATE shop_checkout SET buyer_email = %s WHERE id = %s AND EXISTS (SELECT 1 FROM written) RETURNING 7"
    then = Then(rider, ["ana@example.com.br", checkout.pk])
    with CaptureQueriesContext(connection) as queries:
        assert insert_once(_line(checkout, "SKU-A", 0), ("public_id",), then=then)
    assert len(queries) == 1 and then.value == 7
    assert Checkout.objects.get(pk=checkout.pk).buyer_email == "ana@example.com.br"
    again = _line(checkout, "SKU-B", 1)
    again.public_id = CheckoutLine.objects.get().public_id
    missed = Then(rider, ["bia@example.com.br", checkout.pk])
    assert not insert_once(again, ("public_id",), then=missed)
    assert missed.value is None
    assert Checkout.objects.get(pk=checkout.pk).buyer_email == "ana@example.com.br"


def test_a_checkout_read_is_what_djangos_from_db_makes() -> None:
    """issue 34: `RemembersLoaded.from_db` fills the instance's dict itself; the instance (values, state, what it
    remembers as read) is the one Django's own `from_db` makes, whole or with deferred columns."""
    Checkout.objects.create(buyer_email="ana@example.com.br", messages=[{"code": "x"}], total_amount=4290)
    for query in (Checkout.objects.all(), Checkout.objects.only("public_id", "messages", "total_amount")):
        read = query.get()
        names = [f.attname for f in Checkout._meta.concrete_fields if f.attname in read.__dict__]
        values = [read.__dict__[name] for name in names]
        expected = models.Model.from_db.__func__(Checkout, "default", names, values)  # type: ignore[attr-defined]
        assert {k: v for k, v in read.__dict__.items() if k not in ("_state", "_loaded")} == {
            k: v for k, v in expected.__dict__.items() if k != "_state"
        }
        assert (read._state.adding, read._state.db) == (False, "default")
        assert read.get_deferred_fields() == expected.get_deferred_fields()
        assert "messages" not in read._loaded and read._loaded["total_amount"] == 4290  # a JSON value is never kept
        assert set(read._loaded) == {name for name in names if name != "messages"} - {
            f.attname for f in Checkout._meta.concrete_fields if isinstance(read.__dict__.get(f.attname), dict | list)
        }


def test_a_checkout_read_with_init_receivers_goes_through_django() -> None:
    Checkout.objects.create(buyer_email="ana@example.com.br")
    seen: list[object] = []

    def receiver(sender: type, instance: object, **_: Any) -> None:
        seen.append(instance)

    post_init.connect(receiver, sender=Checkout, weak=False)
    try:
        read = Checkout.objects.get()
    finally:
        post_init.disconnect(receiver, sender=Checkout)
    assert seen == [read] and read._loaded["buyer_email"] == "ana@example.com.br"


@pytest.mark.django_db(transaction=True)
def test_the_kept_cursor_is_made_anew_for_another_connection_and_while_statements_are_captured() -> None:
    """The module's statements share one cursor per connection (issue 34: Django's `cursor()` made and wrapped a new
    one for each): one written while a test captures the statements goes through Django's logging cursor, and one
    written after the connection was closed goes through the new connection's."""
    checkout = Checkout.objects.create(buyer_email="ana@example.com.br")
    checkout.buyer_first_name = "Ana"
    assert update_where(checkout, ["buyer_first_name"])  # the cursor kept, not logging
    checkout.buyer_first_name = "Bia"
    with CaptureQueriesContext(connection) as queries:
        assert update_where(checkout, ["buyer_first_name"])
    assert [query["sql"].split()[0] for query in queries] == ["UPDATE"]

    connection.close()
    checkout.buyer_first_name = "Cris"
    assert update_where(checkout, ["buyer_first_name"])
    assert Checkout.objects.get(pk=checkout.pk).buyer_first_name == "Cris"
