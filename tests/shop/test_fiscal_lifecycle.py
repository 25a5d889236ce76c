"""NF-e lifecycle from the shop's side (issue 18): the job row is written by the placed order's outbox task, the sandbox
authorizes it outside any transaction, every step lands on the order timeline, bad data blocks with a
clear message and leaves the order alone, a full cancellation within 24 h cancels the note."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest
from django.utils import timezone

from fiscal.models import FiscalDocument, FiscalJob
from fiscal.services import job_run
from orders.models import Order, OrderEvent, OutboxMessage
from orders.selectors import order_for_side_effects
from orders.services import order_buyer_tax_id_set, order_cancel
from orders.services.dispatch import outbox_process
from shop.checkout.services import checkout_complete, checkout_create
from shop.checkout.types import CompleteInput, LineInput, PaymentInput
from shop.invoicing.lifecycle import fiscal_reissue, on_order_changed, sweep_missing_documents
from shop.models import Product, StoreSettings
from tests.shop.checkout_factories import BUYER, full_input, make_shipping, make_variant
from tests.shop.test_completion import CARD_OK

pytestmark = pytest.mark.django_db


@pytest.fixture
def fiscal_store(settings) -> None:
    settings.FISCAL_ISSUE_ON = "paid"
    settings.FISCAL_PROVIDER = "sandbox"
    # A Simples Nacional store before its IBS/CBS date, whatever today's date (tests/shop/test_ibs_cbs.py has those).
    settings.FISCAL_IBSCBS_SIMPLES_FROM = date(2999, 1, 1)
    StoreSettings.objects.create(cnpj="11.222.333/0001-81", state_registration="110042490114", state="SP")


def paid_order(*, ncm: str = "09012100", tax_id: str = "52998224725") -> Order:
    make_variant(price=4290, stock=10, title="Café Especial 500 g", ncm=ncm)
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 2), option="pac"), buyer=replace(BUYER, tax_id=tax_id))
    checkout = checkout_create(data=data).checkout
    result = checkout_complete(
        checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(CARD_OK,)))
    )
    assert result.checkout.status == "completed", result.messages
    order = Order.objects.get(checkout_id=checkout.public_id)
    run_placed_outbox(order)
    return order


def run_placed_outbox(order: Order) -> None:
    """What the worker does after the placement commits: the order's outbox row (e-mail, NF-e request). The
    NF-e job's own task is left to the test (its after-commit enqueue does not run inside the test)."""
    message = OutboxMessage.objects.get(payload__order_id=order.public_id, payload__event="placed")
    assert outbox_process(message_id=message.pk) == "done"


def kinds(order: Order) -> list[str]:
    return list(OrderEvent.objects.filter(order=order, kind__startswith="fiscal_").values_list("kind", flat=True))


def test_paid_order_gets_an_authorized_nfe_with_no_staff_action(fiscal_store) -> None:
    order = paid_order()
    job = FiscalJob.objects.get()  # written by the placement itself
    assert (job.key, job.status) == (f"{order.public_id}:issue:1", "pending")
    assert job.payload["items"] == [
        {"sku": "SKU-CAFE-500G", "description": "Café Especial 500 g", "ncm": "09012100", "cfop": "5102",
         "origin": "0", "unit": "UN", "quantity": 2, "unit_price": 4290, "total": 8580,
         "icms_cst": "102", "pis_cst": "07", "cofins_cst": "07", "shipping_amount": 1890, "discount_amount": 0,
         "other_amount": 0}
    ]  # fmt: skip
    assert job.payload["recipient"]["tax_id"] == "52998224725"
    assert job.payload["issuer"]["cnpj"] == "11222333000181"

    assert job_run(job_id=job.pk) == "authorized"
    document = FiscalDocument.objects.get(order_ref=order.public_id)
    assert document.status == "authorized" and len(document.access_key) == 44
    assert kinds(order) == ["fiscal_requested", "fiscal_authorized"]
    authorized = OrderEvent.objects.get(order=order, kind="fiscal_authorized")
    assert authorized.internal is False  # the buyer sees it on the permalink timeline
    assert authorized.message == f"NF-e nº {document.number} série 1 autorizada."
    assert order.status == "placed" and Order.objects.get(pk=order.pk).status == "placed"


def test_missing_ncm_blocks_with_the_product_named_and_the_order_untouched(fiscal_store) -> None:
    order = paid_order(ncm="")
    document = FiscalDocument.objects.get(order_ref=order.public_id)
    assert document.status == "rejected"
    assert document.sefaz_reason == (
        "Dados fiscais incompletos: produto “Café Especial 500 g” (SKU SKU-CAFE-500G): NCM não informado"
    )
    assert FiscalJob.objects.count() == 0
    assert kinds(order) == ["fiscal_blocked"]
    assert (order.status, order.payment_status) == ("placed", "paid")

    Product.objects.update(ncm="0901.21.00")  # the merchant fixes the product, then re-issues
    document = fiscal_reissue(order_id=order.public_id)
    assert document.status == "pending"
    assert job_run(job_id=FiscalJob.objects.get().pk) == "authorized"


def test_full_cancellation_within_24h_cancels_the_nfe(fiscal_store, django_capture_on_commit_callbacks) -> None:
    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    # After commit: order_changed → the shop writes the cancel job → its task runs (eager in tests).
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order_id=order.public_id, reason="cliente desistiu", actor="staff")
    cancel = FiscalJob.objects.get(action="cancel")
    assert cancel.payload == {"justification": f"Pedido #{order.number} cancelado antes da entrega."}
    assert cancel.status == "done"
    assert job_run(job_id=cancel.pk) == "skipped"  # a duplicate task run changes nothing
    assert FiscalDocument.objects.get().status == "cancelled"
    assert kinds(order) == ["fiscal_requested", "fiscal_authorized", "fiscal_cancel_requested", "fiscal_cancelled"]
    # the cancellation e-mail does not hand the buyer the DANFE of a note being cancelled (QA walk)
    from django.core import mail

    canceled = next(m for m in reversed(mail.outbox) if m.subject.endswith("cancelado"))
    assert "DANFE" not in canceled.body and "DANFE" not in canceled.alternatives[0][0]


def test_the_sweep_requests_what_a_lost_receiver_never_did(fiscal_store, settings) -> None:
    settings.FISCAL_ISSUE_ON = "off"
    order = paid_order()
    assert FiscalDocument.objects.count() == 0
    settings.FISCAL_ISSUE_ON = "paid"
    assert sweep_missing_documents() == 1
    assert sweep_missing_documents() == 0
    assert FiscalJob.objects.get().key == f"{order.public_id}:issue:1"


def test_a_placement_replay_adds_no_second_job(fiscal_store) -> None:
    order = paid_order()
    message = OutboxMessage.objects.get(payload__order_id=order.public_id, payload__event="placed")
    OutboxMessage.objects.filter(pk=message.pk).update(status=OutboxMessage.Status.PENDING)  # "done" was lost
    assert outbox_process(message_id=message.pk) == "done"
    assert FiscalJob.objects.count() == 1


def test_a_lost_placement_task_is_re_driven_by_the_outbox_sweep(fiscal_store) -> None:
    from orders.tasks import sweep_outbox

    make_variant(price=4290, stock=10, title="Café Especial 500 g", ncm="09012100")
    make_shipping()
    checkout = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1), option="pac")).checkout
    checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(CARD_OK,))))
    assert FiscalDocument.objects.count() == 0  # the placement's after-commit task never ran
    OutboxMessage.objects.update(created_at=timezone.now() - timedelta(minutes=5))
    assert sweep_outbox.delay().get() == 1
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert FiscalDocument.objects.filter(order_ref=order.public_id).count() == 1


@pytest.mark.parametrize("issue_on", ["paid", "off"])
def test_a_return_after_authorization_asks_or_notes_the_devolucao(
    fiscal_store, django_capture_on_commit_callbacks, settings, issue_on: str
) -> None:
    """A shop issuing its notes asks the NF-e de devolução of the goods that came back on the record itself (kept
    under the return adjustment); one issuing by hand (`off`) gets the staff line saying it is due."""
    from fiscal.models import FiscalReturnNote
    from orders.models import Adjustment
    from orders.services import order_mark_delivered, order_return, order_ship
    from orders.types import LineQuantity

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    key = FiscalDocument.objects.get().access_key
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    line = order.lines.get()
    settings.FISCAL_ISSUE_ON = issue_on
    with django_capture_on_commit_callbacks(execute=True):
        order_return(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)], reason="tamanho errado")
    if issue_on == "off":
        note = OrderEvent.objects.get(order=order, kind="fiscal_return_note")
        assert note.message == f"Devolução registrada: emita a NF-e de devolução referenciando a chave {key}."
        assert note.internal is True
        assert not FiscalReturnNote.objects.exists()
    else:
        recorded = Adjustment.objects.get(order=order, type="return")
        asked = FiscalReturnNote.objects.get()
        assert (asked.return_ref, asked.quantities) == (recorded.public_id, {"SKU-CAFE-500G": 1})
        assert not OrderEvent.objects.filter(order=order, kind="fiscal_return_note").exists()
    assert FiscalDocument.objects.get().status == "authorized"  # a return never cancels the note


def test_every_fiscal_timeline_kind_reads_in_portuguese_for_staff() -> None:
    """The order timeline shows `fiscal_<event>` events: each has its staff label ("NF-e bloqueada"), not the
    words of its kind ("fiscal blocked"). The events are read from fiscal.services' `_changed(…)` calls, so a new
    one without a label fails here."""
    import re
    from pathlib import Path

    import fiscal.services
    from orders.labels import timeline_kind_label

    source = Path(fiscal.services.__file__).read_text()
    events = set(re.findall(r'_changed\(\s*\w+,\s*"(\w+)"', source))
    assert {"blocked", "requested", "authorized", "rejected", "retry", "cancelled"} <= events
    kinds = {f"fiscal_{event}" for event in events} | {"fiscal_return_note"}
    unlabelled = {kind for kind in kinds if timeline_kind_label(kind) == kind.replace("_", " ")}
    assert unlabelled == set()
    assert timeline_kind_label("fiscal_blocked") == "NF-e bloqueada"


def test_the_nfe_is_built_from_the_order_as_locked_when_it_changed_after_the_tasks_read(fiscal_store) -> None:
    """Issue 34: the order's outbox task reads the order once and hands that read to the NF-e receiver, which
    uses it only when its lock finds the row unchanged; here staff corrected the buyer's CPF in between, so the
    invoice carries the corrected one (read again under the lock)."""
    make_variant(price=4290, stock=10, title="Café Especial 500 g", ncm="09012100")
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 1), option="pac"), buyer=replace(BUYER, tax_id="52998224725"))
    checkout = checkout_create(data=data).checkout
    checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(CARD_OK,))))
    order = Order.objects.get(checkout_id=checkout.public_id)
    read = order_for_side_effects(order.public_id)  # what the task read
    order_buyer_tax_id_set(order_id=order.public_id, tax_id="111.444.777-35")

    on_order_changed(Order, order_id=order.public_id, event="placed", order=read)

    job = FiscalJob.objects.get(document__order_ref=order.public_id)
    assert job.payload["recipient"]["tax_id"] == "11144477735"
    assert read is not None and read.buyer_tax_id == "52998224725"  # the shared read is left as it was


def test_the_nfe_uses_the_tasks_read_when_the_order_is_unchanged(fiscal_store, django_assert_num_queries) -> None:
    make_variant(price=4290, stock=10, title="Café Especial 500 g", ncm="09012100")
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 2), option="pac"), buyer=replace(BUYER, tax_id="52998224725"))
    checkout = checkout_create(data=data).checkout
    checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(CARD_OK,))))
    read = order_for_side_effects(Order.objects.get(checkout_id=checkout.public_id).public_id)
    assert read is not None

    # savepoint, lock (3 columns), store, variants, document insert (ON CONFLICT: no read, no savepoint), job insert,
    # timeline insert (no savepoint; the event's order lock is the one already held), release
    with django_assert_num_queries(8) as captured:
        on_order_changed(Order, order_id=read.public_id, event="placed", order=read)

    assert sum('FROM "orders_order"' in q["sql"] for q in captured.captured_queries) == 1
    assert sum('FROM "orders_orderline"' in q["sql"] for q in captured.captured_queries) == 0  # lines prefetched
    assert FiscalJob.objects.get(document__order_ref=read.public_id).payload["items"][0]["quantity"] == 2
    assert kinds(read) == ["fiscal_requested"]


def _placed_and_read(*, ncm: str, tax_id: str) -> Order:
    make_variant(price=4290, stock=10, title="Café Especial 500 g", ncm=ncm)
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 2), option="pac"), buyer=replace(BUYER, tax_id=tax_id))
    checkout = checkout_create(data=data).checkout
    checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(CARD_OK,))))
    read = order_for_side_effects(Order.objects.get(checkout_id=checkout.public_id).public_id)
    assert read is not None
    return read


def test_a_blocked_nfe_is_written_in_one_statement_from_the_tasks_read(fiscal_store, django_assert_num_queries) -> None:
    """Issue 34: data that blocks the NF-e (here the product's NCM) needs no transaction: the document and its
    timeline line go in one statement that locks the order's row and checks the task's read is still current."""
    read = _placed_and_read(ncm="", tax_id="52998224725")

    # store, variants, then the document with its timeline line (no savepoint, no separate lock)
    with django_assert_num_queries(3) as captured:
        on_order_changed(Order, order_id=read.public_id, event="placed", order=read)

    written = captured.captured_queries[-1]["sql"]
    assert "FOR UPDATE" in written and '"fiscal_fiscaldocument"' in written and '"orders_orderevent"' in written
    document = FiscalDocument.objects.get(order_ref=read.public_id)
    assert (document.status, document.provider_ref, document.order_number) == (
        "rejected",
        f"{read.public_id}-1",
        read.number,
    )
    assert document.sefaz_reason == (
        "Dados fiscais incompletos: produto “Café Especial 500 g” (SKU SKU-CAFE-500G): NCM não informado"
    )
    event = OrderEvent.objects.get(order=read, kind="fiscal_blocked")
    assert event.message == f"NF-e não emitida. {document.sefaz_reason}"
    assert event.internal and event.data == {
        "status": "rejected",
        "problems": [document.sefaz_reason.split(": ", 1)[1]],
    }
    assert FiscalJob.objects.count() == 0

    on_order_changed(Order, order_id=read.public_id, event="placed", order=read)  # the outbox row run again

    assert FiscalDocument.objects.filter(order_ref=read.public_id).count() == 1
    assert kinds(read) == ["fiscal_blocked"]


def test_a_blocked_nfe_follows_a_change_made_after_the_tasks_read(fiscal_store) -> None:
    """The task read the order without the buyer's CPF; staff filled it in before the NF-e receiver ran: the
    one-statement write finds the row changed and writes nothing, and the locked path reads the order again."""
    read = _placed_and_read(ncm="", tax_id="")
    order_buyer_tax_id_set(order_id=read.public_id, tax_id="111.444.777-35")

    on_order_changed(Order, order_id=read.public_id, event="placed", order=read)

    document = FiscalDocument.objects.get(order_ref=read.public_id)
    assert document.sefaz_reason == (
        "Dados fiscais incompletos: produto “Café Especial 500 g” (SKU SKU-CAFE-500G): NCM não informado"
    )  # no "CPF/CNPJ do comprador não informado": the corrected order was read
    assert kinds(read) == ["fiscal_blocked"]
    assert read.buyer_tax_id == ""  # the shared read is left as it was


def test_staff_cancel_and_reissue_the_nfe_with_the_corrected_cpf_within_24h(
    fiscal_store,
    django_capture_on_commit_callbacks,
    django_assert_max_num_queries,
) -> None:
    """The buyer's CPF was wrong on the authorized NF-e (a carta de correção cannot change the destinatário): staff
    correct it on the order, then cancel the note and issue a new one from the order as it is now. Both notes stay;
    the timeline has both steps; the buyer's e-mail links the new DANFE."""
    from django.core import mail

    from fiscal.models import SandboxNote
    from shop.invoicing.lifecycle import fiscal_cancel_and_reissue

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    first = FiscalDocument.objects.get()
    order_buyer_tax_id_set(order_id=order.public_id, tax_id="390.533.447-05", actor="ana")
    # One short transaction and no provider call: lock the order, its lines and variants for the invoice, lock the
    # note, read its cancels, write the job and the timeline event (plus the test's savepoint and its release).
    with django_assert_max_num_queries(9):
        asked = fiscal_cancel_and_reissue(
            order_id=order.public_id, justification="CPF do destinatário informado errado", actor="ana"
        )
    assert asked.pk == first.pk and asked.status == "authorized"  # nothing sent yet: the job calls the provider

    assert job_run(job_id=FiscalJob.objects.get(action="cancel").pk) == "cancelled"
    second = FiscalDocument.objects.exclude(pk=first.pk).get()
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert job_run(job_id=FiscalJob.objects.get(document=second).pk) == "authorized"
    second.refresh_from_db()
    first.refresh_from_db()
    assert (first.status, second.status, second.number) == ("cancelled", "authorized", first.number + 1)
    assert SandboxNote.objects.get(ref=second.provider_ref).invoice["recipient"]["tax_id"] == "39053344705"
    assert kinds(order)[-4:] == ["fiscal_cancel_requested", "fiscal_cancelled", "fiscal_requested", "fiscal_authorized"]
    requested = OrderEvent.objects.get(order=order, kind="fiscal_cancel_requested")
    assert requested.actor == "ana"
    assert requested.message == (
        f"Cancelamento da NF-e nº {first.number} solicitado para emitir outra com os dados corrigidos. "
        "Justificativa: CPF do destinatário informado errado"
    )
    invoice_mail = [m for m in mail.outbox if "Nota fiscal do pedido" in m.subject]
    assert len(invoice_mail) == 1
    assert f"/fiscal/d/{second.download_token}/danfe" in invoice_mail[0].body
    assert first.download_token not in invoice_mail[0].body
