"""When an order asks for an NF-e, and what the NF-e steps write on the order's timeline.

- Placement of a paid order, payment confirmed later (admin), shipped (`FISCAL_ISSUE_ON=shipped`), fully
  cancelled: `order_changed` arrives from the order's outbox row after commit (for a placement, in the one
  task per placed order, so the request path writes no NF-e rows); the job is written in its own
  transaction, `sweep_outbox` re-drives a row whose task never ran, and `sweep_missing_documents` (beat)
  covers a receiver that failed.
- `fiscal.signals.document_changed` (inside the fiscal transaction) → an order timeline event.
- A NF-e blocked by missing data (a product's NCM, the buyer's CPF, the store's CNPJ) is retried by itself once
  the data is there: saving a product, variant or the store settings in the admin, and correcting the buyer's
  CPF/CNPJ on the order (`buyer_updated` through the order's outbox), queue `fiscal_retry_blocked` after commit;
  `sweep_fiscal_requests` (beat) runs it too, so a lost enqueue only delays the retry.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from fiscal.models import CANCEL_WINDOW, FiscalCorrection, FiscalDocument, FiscalJob, FiscalReturnNote
from fiscal.selectors import blocked_order_refs
from fiscal.services import (
    CancelReissueRefused,
    CorrectionRefused,
    ReturnNoteRefused,
    document_block_once,
    document_request_cancel,
    document_request_cancel_reissue,
    document_request_correction,
    document_request_issue,
    document_request_return,
)
from kernel.compiled import compiled
from kernel.rows import unchanged
from kernel.tasks import enqueue_on_commit
from orders.errors import OrderNotFound
from orders.models import (
    Adjustment,
    AdjustmentStatus,
    AdjustmentType,
    Order,
    OrderStatus,
    PaymentStatus,
    ReturnRequest,
    ReturnStatus,
)
from orders.services import order_event_record, order_event_row
from shop.invoicing.invoice import build_invoice

logger = logging.getLogger(__name__)
# The order `on_order_changed` holds locked in its transaction while fiscal runs (and sends document_changed).
_LOCKED: ContextVar[Order | None] = ContextVar("invoicing_locked_order", default=None)
# The staff member whose re-issue the fiscal step runs for: its timeline event (written by on_document_changed,
# behind fiscal's signal, which knows no people) names them like every other staff action.
_ACTOR: ContextVar[str] = ContextVar("invoicing_actor", default="")
BUYER_VISIBLE_EVENTS = {"authorized", "cancelled"}
SWEEP_WINDOW = timedelta(days=2)


def fiscal_request_issue(
    *, order: Order, reissue: bool = False, built: tuple[dict[str, Any], list[str]] | None = None
) -> FiscalDocument:
    """Inside the caller's transaction: build the invoice now (current fiscal data) and ask for the NF-e.
    `built`: the invoice and problems `build_invoice(order)` just gave, not built again."""
    invoice, problems = built if built is not None else build_invoice(order)
    return document_request_issue(
        order_ref=order.public_id, order_number=order.number, invoice=invoice, problems=problems, reissue=reissue
    )


@transaction.atomic
def fiscal_reissue(*, order_id: str, actor: str = "") -> FiscalDocument:
    """Admin: issue again after a rejection (the merchant fixed the data). `actor`: the staff member's username,
    kept on the timeline event of the request. Raises OrderNotFound."""
    order = Order.objects.select_for_update().filter(public_id=order_id).first()
    if order is None:
        raise OrderNotFound("order_id")
    token = _ACTOR.set(actor[:150])
    try:
        return fiscal_request_issue(order=order, reissue=True)
    finally:
        _ACTOR.reset(token)


@transaction.atomic
def fiscal_cancel_and_reissue(*, order_id: str, justification: str, actor: str = "") -> FiscalDocument:
    """Admin: the buyer's CPF/CNPJ, name or address was wrong on an authorized NF-e. Within the SEFAZ's 24 hours,
    cancel it (with staff's `justification`) and issue the next note from the order as it is now (corrected);
    the provider calls run later, in the fiscal job (`fiscal.services.document_request_cancel_reissue`).
    Raises OrderNotFound, or CancelReissueRefused with the reason in Portuguese (nothing written)."""
    order = Order.objects.select_for_update().filter(public_id=order_id).first()
    if order is None:
        raise OrderNotFound("order_id")
    if order.status == OrderStatus.CANCELED:
        raise CancelReissueRefused(gettext("Pedido cancelado: a NF-e é cancelada com ele, não reemitida."))
    invoice, problems = build_invoice(order)
    tokens = (_LOCKED.set(order), _ACTOR.set(actor[:150]))  # the timeline events need no second lock
    try:
        return document_request_cancel_reissue(
            order_ref=order.public_id, justification=justification, invoice=invoice, problems=problems
        )
    finally:
        _ACTOR.reset(tokens[1])
        _LOCKED.reset(tokens[0])


@transaction.atomic
def fiscal_correct(*, order_id: str, text: str, actor: str = "") -> FiscalCorrection:
    """Admin: a carta de correção (CC-e) of the order's authorized NF-e — what a cancel-and-reissue cannot reach any
    more (after 24 h) and the SEFAZ lets a letter fix: a product's description, the carrier's data, the volumes, the
    additional information. The provider call runs later, in the fiscal job. Raises OrderNotFound, or
    CorrectionRefused with the reason in Portuguese (nothing written)."""
    order = Order.objects.select_for_update().filter(public_id=order_id).first()
    if order is None:
        raise OrderNotFound("order_id")
    if order.status == OrderStatus.CANCELED:
        raise CorrectionRefused(gettext("Pedido cancelado: a NF-e é cancelada com ele, não corrigida."))
    tokens = (_LOCKED.set(order), _ACTOR.set(actor[:150]))  # the timeline events need no second lock
    try:
        return document_request_correction(order_ref=order.public_id, text=text, actor=actor)
    finally:
        _ACTOR.reset(tokens[1])
        _LOCKED.reset(tokens[0])


# A return whose items came back (received, and then refunded or not): its goods can enter by an NF-e de devolução.
RETURN_RECEIVED = (
    ReturnStatus.RECEIVED,
    ReturnStatus.REFUND_PENDING,
    ReturnStatus.REFUNDED,
    ReturnStatus.REFUND_FAILED,
)


@dataclass(frozen=True)
class ReceivedReturn:
    """Goods that came back to the shop: a buyer's or agent's return request once received (`ret_…`), or a return
    staff recorded themselves with "Registrar devolução" (its return adjustment, `adj_…`). `ref` is what the NF-e de
    devolução is kept under; `line_items`: [{"id": "li_…", "quantity": n ≥ 1}]."""

    ref: str
    line_items: list[dict[str, Any]]


def received_returns(order: Order) -> list[ReceivedReturn]:
    """The order's returns whose goods came back, the first first (two queries): the received requests, then the
    returns staff recorded without one (a request's own return adjustment is the request's, not listed twice)."""
    requests = list(ReturnRequest.objects.filter(order=order, status__in=RETURN_RECEIVED).order_by("created_at", "id"))
    taken = {request.return_adjustment_id for request in requests}
    recorded = (
        Adjustment.objects.filter(order=order, type=AdjustmentType.RETURN, status=AdjustmentStatus.COMPLETED)
        .exclude(public_id__in=taken)
        .order_by("occurred_at", "id")
    )
    returns = [ReceivedReturn(request.public_id, list(request.line_items)) for request in requests]
    for adjustment in recorded:
        items = [
            {"id": item["id"], "quantity": abs(int(item["quantity"]))}
            for item in adjustment.line_items or ()
            if int(item.get("quantity") or 0)
        ]
        if items:  # a parcel back with the carrier (returned to sender) names no items: nothing entered
            returns.append(ReceivedReturn(adjustment.public_id, items))
    return returns


def _request_return_note(order: Order, received: ReceivedReturn, *, actor: str) -> FiscalReturnNote:
    """With the order locked and `_LOCKED`/`_ACTOR` set: ask the note of `received` (SKU → units)."""
    skus = dict(order.lines.values_list("public_id", "sku"))
    quantities: dict[str, int] = {}
    for item in received.line_items:
        sku = skus.get(str(item.get("id")))
        if sku:
            quantities[sku] = quantities.get(sku, 0) + int(item.get("quantity") or 0)
    return document_request_return(
        order_ref=order.public_id, return_ref=received.ref, quantities=quantities, actor=actor
    )


@transaction.atomic
def fiscal_issue_return_note(*, order_id: str, return_id: str, actor: str = "") -> FiscalReturnNote:
    """Admin: the NF-e de devolução (entrada) of a received return of the order — a buyer's request (`ret_…`) or a
    return staff recorded (`adj_…`) — referencing its authorized NF-e with the units that came back
    (`fiscal.services.document_request_return`); the provider call runs later, in the fiscal job. Once per return
    (a double click returns the same note; a rejected one is asked again). Raises OrderNotFound, or
    ReturnNoteRefused with the reason in Portuguese (nothing written)."""
    order = Order.objects.select_for_update().filter(public_id=order_id).first()
    if order is None:
        raise OrderNotFound("order_id")
    received = next((r for r in received_returns(order) if r.ref == return_id), None)
    if received is None:
        if ReturnRequest.objects.filter(order=order, public_id=return_id).exists():
            raise ReturnNoteRefused(
                gettext(
                    "A NF-e de devolução registra a entrada dos itens: marque antes a devolução como recebida (“Itens "
                    "recebidos”)."
                )
            )
        raise ReturnNoteRefused(gettext("Devolução não encontrada neste pedido."))
    tokens = (_LOCKED.set(order), _ACTOR.set(actor[:150]))  # the timeline events need no second lock
    try:
        return _request_return_note(order, received, actor=actor)
    finally:
        _ACTOR.reset(tokens[1])
        _LOCKED.reset(tokens[0])


def fiscal_retry_blocked(*, order_refs: list[str] | None = None, limit: int = 200) -> int:
    """Re-issue the blocked NF-e (of `order_refs`, or every blocked one) whose data is now complete; the number
    re-issued. One short transaction per order; a note still missing data stays blocked and silent (its reason
    and timeline already say what is missing), so running this often writes nothing."""
    if settings.FISCAL_ISSUE_ON == "off":
        return 0
    count = 0
    for order_ref in blocked_order_refs(order_refs=order_refs, limit=limit):
        with transaction.atomic():
            order = Order.objects.select_for_update().filter(public_id=order_ref).first()
            if order is None or order.status == OrderStatus.CANCELED:
                continue
            invoice, problems = build_invoice(order)
            if problems:
                continue
            document = document_request_issue(
                order_ref=order.public_id, order_number=order.number, invoice=invoice, problems=[], reissue=True
            )
            count += int(document.status == FiscalDocument.Status.PENDING)
    return count


def fiscal_retry_blocked_soon(*, order_ref: str = "") -> None:
    """After the current transaction commits, retry the blocked NF-e (of one order, or all): fiscal data changed."""
    enqueue_on_commit("shop.tasks.retry_blocked_fiscal", order_ref)


def _cancel(order: Order) -> str:
    return document_request_cancel(
        order_ref=order.public_id, justification=f"Pedido #{order.number} cancelado antes da entrega."
    )


def _lock(order_id: str, read: Order | None) -> Order | None:
    """Row-lock the order for its NF-e step. `read`: the order as the outbox task read it after commit (lines
    prefetched for a placement). When the locked row still has that status, payment status and `updated_at`
    (every service that changes an order's lines, buyer or totals saves the order), the read is current and is
    used as it is; otherwise the order is read again under the lock."""
    queryset = Order.objects.select_for_update().filter(public_id=order_id)
    if read is None or read.public_id != order_id:
        return queryset.first()
    # The lock and the three columns, compiled once per process (issue 34: every placed order runs it).
    lock = compiled(
        "invoicing.lock_order",
        lambda ref: (
            Order.objects.select_for_update()
            .filter(public_id=ref)
            .only("status", "payment_status", "updated_at")
            .order_by()[:1]
        ),
    )
    rows = lock.rows(order_id)
    if not rows:
        return None
    current = rows[0]
    if (current.status, current.payment_status, current.updated_at) == (
        read.status,
        read.payment_status,
        read.updated_at,
    ):
        return read
    return queryset.first()


def on_order_changed(
    sender: Any, *, order_id: str, event: str, order: Order | None = None, events: Sequence[str] = (), **_: Any
) -> None:
    """Receiver of `orders.signals.order_changed` (sent after commit); `order`: as the outbox task read it;
    `events`: every change of one transaction (a cancel that asked for its refund), of which the fiscal one counts."""
    wanted = {"paid": {"placed", "payment_confirmed"}, "shipped": {"shipped"}}.get(settings.FISCAL_ISSUE_ON, set())
    if events:  # several changes in one transaction: the one the NF-e acts on
        acted_on = ("canceled", "returned", *sorted(wanted), "buyer_updated")
        event = next((name for name in acted_on if name in events), event)
    if event == "buyer_updated":  # the merchant corrected the buyer's CPF/CNPJ: a blocked NF-e may go now
        fiscal_retry_blocked(order_refs=[order_id])
        return
    if event not in wanted and event not in ("canceled", "returned"):
        return
    try:
        built = None
        read = order if order is not None and order.public_id == order_id else None
        if (
            read is not None and read.payment_status == PaymentStatus.PAID
            and event in _PAID_EVENTS and settings.FISCAL_ISSUE_ON == "paid"
        ):  # fmt: skip
            # The NF-e of the task's read (if that read is still current): data that blocks it is written at once.
            built = build_invoice(read)
            if built[1] and _blocked_at_once(read, *built):
                return
        with transaction.atomic():
            locked = _lock(order_id, order)
            if locked is None:
                return
            token = _LOCKED.set(locked)  # the timeline event of this step needs no second lock (on_document_changed)
            try:
                if event == "canceled":
                    if locked.status == OrderStatus.CANCELED:
                        _cancel(locked)
                elif event == "returned":
                    _note_return(locked)
                elif locked.payment_status == PaymentStatus.PAID or settings.FISCAL_ISSUE_ON == "shipped":
                    # the invoice built from the task's read serves while the lock found that read current
                    fiscal_request_issue(order=locked, built=built if locked is order else None)
            finally:
                _LOCKED.reset(token)
    except Exception:  # never break the sender's other receivers; the beat sweep asks again
        logger.exception("fiscal request for %s after %s failed", order_id, event)


_PAID_EVENTS = frozenset({"placed", "payment_confirmed"})
# What every change of an order's lines, buyer or totals moves (`_lock` compares the same three).
_LOCK_COLUMNS = ("status", "payment_status", "updated_at")


def _blocked_at_once(read: Order, invoice: dict[str, Any], problems: list[str]) -> bool:
    """An NF-e that the current data block (a store without fiscal data, a product without NCM, …), asked for from
    the task's read of the order: the document and its timeline line written in one statement that also locks the
    order's row and checks that the read is still current (`_lock`'s three columns), with no transaction around
    it — two statements in all (the variants, this) instead of six (issue 34). False when nothing was written
    (the order changed since the read, or has a document already): the usual locked path decides."""
    token = _LOCKED.set(read)  # the order the statement locks: the timeline row is made for it
    try:
        document = document_block_once(
            order_ref=read.public_id, order_number=read.number, invoice=invoice, problems=problems,
            guard=unchanged(read, _LOCK_COLUMNS),
        )  # fmt: skip
    finally:
        _LOCKED.reset(token)
    return document is not None


def _note_return(order: Order) -> None:
    """Goods came back after an authorized NF-e: their NF-e de devolução (entrada) is due. A shop that issues its
    notes itself (`FISCAL_ISSUE_ON` not off) asks it now, for each received return without one, as it asked the
    sale's: the note only records what staff confirmed came back, at the sale's values, so nothing waits on a
    person, and the accountant's month has every entrada. What cannot be asked (the sale's data missing, more units
    than the note sold) and a shop issuing by hand get a staff line saying the note is due; the NF-e box keeps the
    button."""
    document = FiscalDocument.objects.filter(order_ref=order.public_id, status=FiscalDocument.Status.AUTHORIZED).first()
    if document is None:
        return
    due = f"Devolução registrada: emita a NF-e de devolução referenciando a chave {document.access_key}."
    if settings.FISCAL_ISSUE_ON == "off":
        order_event_record(
            order_id=order.public_id, kind="fiscal_return_note", message=due,
            data={"access_key": document.access_key}, locked=order,
        )  # fmt: skip
        return
    asked = set(document.return_notes.values_list("return_ref", flat=True))
    for received in received_returns(order):
        if received.ref in asked:
            continue  # issued, in flight, or rejected (staff decide on "Emitir novamente")
        try:
            with transaction.atomic():  # a refusal leaves nothing half-written beside the other returns' notes
                _request_return_note(order, received, actor="")
        except ReturnNoteRefused as refused:
            order_event_record(
                order_id=order.public_id, kind="fiscal_return_note", message=f"{due} {refused}",
                data={"access_key": document.access_key, "return_id": received.ref}, locked=order,
            )  # fmt: skip


def on_document_changed(
    sender: Any, *, order_ref: str, event: str, message: str, data: dict, rows: list[Any] | None = None, **_: Any
) -> None:
    """Receiver of `fiscal.signals.document_changed`: inside the fiscal transaction, so the timeline event
    commits with the fiscal change. `rows`: the document is written later in one statement with the event, which
    is handed over instead (a blocked request, `_blocked_at_once`: a plain internal event of the order it locks)."""
    if rows is not None:
        order = _LOCKED.get()
        if order is None or order.public_id != order_ref or event in BUYER_VISIBLE_EVENTS:
            raise ValueError(f"fiscal event {event} of {order_ref} cannot be written with its document")
        rows.append(order_event_row(order=order, kind=f"fiscal_{event}", message=message, internal=True, data=data))
        return
    try:
        order_event_record(
            order_id=order_ref, kind=f"fiscal_{event}", message=message,
            internal=event not in BUYER_VISIBLE_EVENTS, data=data,
            # Order webhooks carry fiscal_documents when negotiated: an authorized devolução note and a registered
            # carta de correção (the note's `corrections`) are news there too.
            notify=event in BUYER_VISIBLE_EVENTS or event in ("return_note_authorized", "corrected"),
            # The buyer gets the DANFE link once per authorized note (the e-mail outbox row is unique).
            email="invoice" if event == "authorized" else "",
            email_ref=f"nfe:{data.get('access_key', '')}" if event == "authorized" else "",
            locked=_LOCKED.get(),  # set while on_order_changed holds the order's lock; else locked here
            actor=_ACTOR.get(),  # set while a staff member's re-issue runs
        )  # fmt: skip
    except OrderNotFound:
        logger.warning("fiscal document for unknown order %s", order_ref)
        return
    if event == "authorized":
        # Cancelled while the NF-e was being issued: cancel the note now that it exists.
        order = Order.objects.filter(public_id=order_ref).only("status", "number", "public_id").first()
        if order is not None and order.status == OrderStatus.CANCELED:
            transaction.on_commit(lambda: _cancel_after_commit(order_ref))


def _cancel_after_commit(order_ref: str) -> None:
    with transaction.atomic():
        order = Order.objects.select_for_update().filter(public_id=order_ref).first()
        if order is not None:
            _cancel(order)


def sweep_missing_documents(*, limit: int = 200) -> int:
    """Beat: paid (or shipped) recent orders without a fiscal document — a receiver that never ran."""
    if settings.FISCAL_ISSUE_ON == "off":
        return 0
    orders = Order.objects.filter(placed_at__gte=timezone.now() - SWEEP_WINDOW).exclude(
        public_id__in=FiscalDocument.objects.values("order_ref")
    )
    if settings.FISCAL_ISSUE_ON == "paid":
        orders = orders.filter(payment_status=PaymentStatus.PAID).exclude(status=OrderStatus.CANCELED)
    else:
        orders = orders.filter(status__in=[OrderStatus.SHIPPED, OrderStatus.DELIVERED])
    count = 0
    for order_id in orders.order_by("id").values_list("public_id", flat=True)[:limit]:
        with transaction.atomic():
            order = Order.objects.select_for_update().get(public_id=order_id)
            fiscal_request_issue(order=order)
            count += 1
    return count


def sweep_missing_cancellations(*, limit: int = 200) -> int:
    """Beat: cancelled orders whose NF-e is authorized, still inside the legal window, and has no cancel job:
    the `order_changed` receiver failed (it logs and moves on), or the note was authorized after the order
    was cancelled and the after-commit cancel was lost. Asking again is idempotent (one job per key)."""
    refs = (
        FiscalDocument.objects.filter(
            status=FiscalDocument.Status.AUTHORIZED, issued_at__gte=timezone.now() - CANCEL_WINDOW
        )
        .exclude(jobs__action=FiscalJob.Action.CANCEL)
        .values("order_ref")
    )
    orders = Order.objects.filter(status=OrderStatus.CANCELED, public_id__in=refs).order_by("id")
    count = 0
    for order_id in orders.values_list("public_id", flat=True)[:limit]:
        with transaction.atomic():
            order = Order.objects.select_for_update().get(public_id=order_id)
            if _cancel(order) == "requested":
                count += 1
    return count
