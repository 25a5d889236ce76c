"""The NF-e boxes on the order pages (`ORDERS_ADMIN_PANELS`, `ORDERS_PERMALINK_PANELS`) and the admin's
re-issue, cancel-and-reissue, carta de correção and NF-e de devolução actions behind their buttons."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from fiscal.ibscbs import totals_brl
from fiscal.models import (
    CORRECTION_LIMIT,
    CORRECTION_MAX,
    FiscalCorrection,
    FiscalDocument,
    FiscalJob,
    FiscalReturnNote,
)
from fiscal.selectors import (
    cancel_in_flight,
    correction_file_path,
    corrections_of_document,
    document_for_order,
    documents_of_order,
    file_path,
    return_note_file_path,
    return_notes_of_order,
)
from fiscal.services import (
    JUSTIFICATION_MAX,
    CancelReissueRefused,
    CorrectionRefused,
    ReturnNoteRefused,
    after_window_advice,
    cancel_deadline,
)
from orders.errors import OrderNotFound
from orders.models import Order, OrderStatus
from orders.selectors import order_change_pending
from shop.invoicing.lifecycle import (
    fiscal_cancel_and_reissue,
    fiscal_correct,
    fiscal_issue_return_note,
    fiscal_reissue,
    received_returns,
)

REISSUABLE = {None, FiscalDocument.Status.REJECTED}
# Issuing or re-issuing an NF-e, from the order page's button or the NF-e list's bulk action.
ISSUE_PERMISSION = "fiscal.issue_fiscaldocument"


def _cancel_reissue_context(request: HttpRequest, order: Order, document: FiscalDocument | None) -> dict[str, Any]:
    """What the panel offers for an authorized note: "Cancelar e reemitir" within the SEFAZ's 24 hours (to whom
    may issue notes), the cancel under way, or — after the window — what the accountant does instead."""
    deadline = cancel_deadline(document) if document is not None else None
    if document is None or deadline is None or order.status == OrderStatus.CANCELED:
        return {}
    if cancel_in_flight(document):
        return {"cancel_in_flight": True}
    if timezone.now() > deadline:
        return {"after_window_advice": after_window_advice(document.access_key)}
    return {
        "can_cancel_reissue": request.user.has_perm(ISSUE_PERMISSION),
        "cancel_deadline": timezone.localtime(deadline),
        "cancel_reissue_url": reverse("shop_fiscal_cancel_reissue", args=[order.public_id]),
        "justification_max": JUSTIFICATION_MAX,
    }


def _corrections_context(request: HttpRequest, order: Order, document: FiscalDocument | None) -> dict[str, Any]:
    """The note's cartas de correção with their files and, for an authorized note of a live order, the box that asks
    the next one (to whom may issue notes), started from the last registered letter's text: the SEFAZ keeps only
    the last letter, so it must repeat every correction still wanted."""
    if document is None or document.status not in (FiscalDocument.Status.AUTHORIZED, FiscalDocument.Status.CANCELLED):
        return {}
    letters = corrections_of_document(document)
    registered = [letter for letter in letters if letter.status == FiscalCorrection.Status.REGISTERED]
    pending = any(letter.status == FiscalCorrection.Status.PENDING for letter in letters)
    correctable = document.status == FiscalDocument.Status.AUTHORIZED and order.status != OrderStatus.CANCELED
    return {
        "corrections": [
            {
                "letter": letter,
                "pdf_url": correction_file_path(document, letter, "pdf"),
                "xml_url": correction_file_path(document, letter, "xml"),
            }
            for letter in letters
        ],
        "correction_pending": pending,
        "correction_limit_reached": correctable and len(registered) >= CORRECTION_LIMIT,
        "can_correct": correctable
        and not pending
        and len(registered) < CORRECTION_LIMIT
        and request.user.has_perm(ISSUE_PERMISSION),
        "correction_text": registered[-1].text if registered else "",
        "correction_url": reverse("shop_fiscal_correction", args=[order.public_id]),
        "correction_max": CORRECTION_MAX,
        "correction_limit": CORRECTION_LIMIT,
    }


def _return_notes_context(request: HttpRequest, order: Order, document: FiscalDocument | None) -> dict[str, Any]:
    """The order's received returns — a buyer's request or a return staff recorded — with their NF-e de devolução
    (status, number, chave, DANFE and XML); a return whose goods have no note yet reads as due, and, while the sale's
    note is authorized, the button that issues it (or issues a rejected one again) is there for whom may issue
    notes. A return recorded a moment ago, whose note the shop asks by itself once the order's change task runs
    (`shop.invoicing.lifecycle._note_return`), reads as being issued, with no button, while that task waits (a
    fourth query, only then). Three queries for an order with an NF-e; none without one."""
    if document is None:
        return {}  # a devolução references the sale's note: nothing to list or issue yet
    notes = {note.return_ref: note for note in return_notes_of_order(order.public_id)}
    returns = received_returns(order)
    if not returns and not notes:
        return {}
    titles = dict(order.lines.values_list("public_id", "title"))
    issuable = (
        document is not None
        and document.status == FiscalDocument.Status.AUTHORIZED
        and request.user.has_perm(ISSUE_PERMISSION)
    )
    # Staff opened the order right after "Registrar devolução" (the worker not there yet): the note will be asked.
    asking = (
        document.status == FiscalDocument.Status.AUTHORIZED
        and settings.FISCAL_ISSUE_ON != "off"
        and any(ret.ref not in notes for ret in returns)
        and order_change_pending(order.public_id, "returned")
    )
    entries = []
    for ret in returns:
        note = notes.get(ret.ref)
        being_asked = note is None and asking
        entries.append(
            {
                "return_id": ret.ref,
                "recorded_by_staff": not ret.ref.startswith("ret_"),
                "items": ", ".join(
                    f"{int(item.get('quantity') or 0)} × {titles.get(str(item.get('id')), item.get('id'))}"
                    for item in ret.line_items
                ),
                "note": note,
                "being_asked": being_asked,
                "danfe_url": return_note_file_path(note.document, note, "danfe") if note else "",
                "xml_url": return_note_file_path(note.document, note, "xml") if note else "",
                "can_issue": issuable
                and not being_asked
                and (note is None or note.status == FiscalReturnNote.Status.REJECTED),
            }
        )
    return {
        "return_notes": entries,
        "return_notes_due": sum(1 for entry in entries if entry["note"] is None and not entry["being_asked"]),
        "return_note_url": reverse("shop_fiscal_return_note", args=[order.public_id]),
    }


def _file_urls(document: FiscalDocument) -> dict[str, str]:
    """The note's DANFE, XML and cancellation XML download URLs ("" while it has none)."""
    return {
        "danfe_url": file_path(document, "danfe"),
        "xml_url": file_path(document, "xml"),
        "cancel_xml_url": file_path(document, "cancelamento"),
    }


def admin_panel(request: HttpRequest, order: Order) -> str:
    documents = documents_of_order(order.public_id)
    document = documents[0] if documents else None
    job = (
        FiscalJob.objects.filter(document=document).exclude(last_error="").order_by("-id").first() if document else None
    )
    status = document.status if document else None
    return render_to_string(
        "shop/fiscal/admin_panel.html",
        {
            "document": document,
            # cancelled and reissued: listed, with their files, for the accountant
            "earlier": [{"document": earlier, **_file_urls(earlier)} for earlier in documents[1:]],
            **_cancel_reissue_context(request, order, document),
            **_corrections_context(request, order, document),
            **_return_notes_context(request, order, document),
            **(_file_urls(document) if document else {}),
            "last_error": job.last_error if job and job.status != FiscalJob.Status.DONE else "",
            "ibs_cbs": totals_brl(document.ibs_cbs_totals) if document else None,
            "can_issue": status in REISSUABLE and request.user.has_perm(ISSUE_PERMISSION),
            "reissue_url": reverse("shop_fiscal_reissue", args=[order.public_id]),
        },
    )


def permalink_panel(request: HttpRequest, order: Order) -> str:
    document = document_for_order(order.public_id)
    if document is None or document.status == FiscalDocument.Status.REJECTED:
        return ""  # a rejection is the merchant's to fix; the buyer sees nothing broken
    key = document.access_key
    # The NF-e de devolução of goods the buyer sent back, once authorized: theirs to keep beside the sale's note.
    issued = document.status == FiscalDocument.Status.AUTHORIZED  # a cancelled sale has nothing to send back
    returned = [
        {
            "note": note,
            "access_key_display": " ".join(note.access_key[i : i + 4] for i in range(0, len(note.access_key), 4)),
            "danfe_url": return_note_file_path(note.document, note, "danfe"),
            "xml_url": return_note_file_path(note.document, note, "xml"),
        }
        for note in (return_notes_of_order(order.public_id) if issued else ())
        if note.status == FiscalReturnNote.Status.AUTHORIZED
    ]
    registered = [
        letter for letter in corrections_of_document(document) if letter.status == FiscalCorrection.Status.REGISTERED
    ]
    return render_to_string(
        "shop/fiscal/permalink_panel.html",
        {
            "document": document,
            # The last letter is the one in force (it repeats the ones before it).
            "correction_pdf_url": correction_file_path(document, registered[-1], "pdf") if registered else "",
            "access_key_display": " ".join(key[i : i + 4] for i in range(0, len(key), 4)),
            "danfe_url": file_path(document, "danfe"),
            "xml_url": file_path(document, "xml"),
            "return_notes": returned,
        },
        request=request,
    )


@staff_member_required
@require_POST
def reissue_view(request: HttpRequest, order_id: str) -> HttpResponse:
    if not request.user.has_perm(ISSUE_PERMISSION):
        raise PermissionDenied  # the shop's "Sem permissão … nada foi alterado" page (templates/403.html)
    back = HttpResponseRedirect(reverse("admin:orders_order_changelist"))
    try:
        document = fiscal_reissue(order_id=order_id, actor=request.user.get_username())
    except OrderNotFound:
        messages.error(request, _("Pedido não encontrado."))
        return back
    order = Order.objects.get(public_id=order_id)
    if document.status == FiscalDocument.Status.REJECTED:
        messages.error(request, _("NF-e não emitida. %(reason)s") % {"reason": document.sefaz_reason})
    else:
        messages.success(request, _("Emissão da NF-e solicitada."))
    return HttpResponseRedirect(reverse("admin:orders_order_change", args=[order.pk]))


def _nfe_action(request: HttpRequest, order_id: str, run: Callable[[], str], refused: type[Exception]) -> HttpResponse:
    """An NF-e button of the order page (posted with the order's form): for who may issue notes only; `run` asks the
    provider's job and says what was asked, or its refusal (`refused`, in Portuguese) is said; back to the order."""
    if not request.user.has_perm(ISSUE_PERMISSION):
        raise PermissionDenied  # the shop's "Sem permissão … nada foi alterado" page (templates/403.html)
    order = Order.objects.filter(public_id=order_id).only("pk").first()
    if order is None:
        messages.error(request, _("Pedido não encontrado."))
        return HttpResponseRedirect(reverse("admin:orders_order_changelist"))
    try:
        messages.success(request, run())
    except refused as exc:
        messages.error(request, str(exc))
    except OrderNotFound:
        messages.error(request, _("Pedido não encontrado."))
    return HttpResponseRedirect(reverse("admin:orders_order_change", args=[order.pk]))


@staff_member_required
@require_POST
def cancel_reissue_view(request: HttpRequest, order_id: str) -> HttpResponse:
    """The order page's "Cancelar e reemitir": the justification comes from the panel's field."""

    def run() -> str:
        document = fiscal_cancel_and_reissue(
            order_id=order_id, justification=request.POST.get("nfe_justificativa", ""),
            actor=request.user.get_username(),
        )  # fmt: skip
        return _(
            "Cancelamento da NF-e nº %(number)s solicitado. A nova NF-e, com os dados atuais do pedido, é emitida "
            "assim que o cancelamento for confirmado; as duas ficam listadas aqui."
        ) % {"number": document.number}

    return _nfe_action(request, order_id, run, CancelReissueRefused)


@staff_member_required
@require_POST
def correction_view(request: HttpRequest, order_id: str) -> HttpResponse:
    """The order page's "Enviar carta de correção": the text comes from the panel's field."""

    def run() -> str:
        text = request.POST.get("nfe_correcao", "")
        fiscal_correct(order_id=order_id, text=text, actor=request.user.get_username())
        return _(
            "Carta de correção enviada à SEFAZ. A resposta aparece no quadro da NF-e e na linha do tempo do pedido em "
            "instantes."
        )

    return _nfe_action(request, order_id, run, CorrectionRefused)


@staff_member_required
@require_POST
def return_note_view(request: HttpRequest, order_id: str) -> HttpResponse:
    """The order page's "Emitir NF-e de devolução" of a received return (its id is the button's value)."""

    def run() -> str:
        note = fiscal_issue_return_note(
            order_id=order_id, return_id=request.POST.get("nfe_devolucao", ""), actor=request.user.get_username()
        )
        if note.status == FiscalReturnNote.Status.AUTHORIZED:
            return _("NF-e de devolução nº %(number)s já autorizada para esta devolução.") % {"number": note.number}
        return _(
            "Emissão da NF-e de devolução solicitada. A resposta da SEFAZ aparece no quadro da NF-e e na linha do "
            "tempo do pedido em instantes."
        )

    return _nfe_action(request, order_id, run, ReturnNoteRefused)
