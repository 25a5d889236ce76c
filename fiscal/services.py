"""Every write of the fiscal app. Requests run inside the caller's transaction (the outbox rule); the
job runner calls the provider between two short transactions, never inside one.

    document_request_issue  (caller's txn)  document + issue job, or "blocked" with the missing data
    document_request_cancel (caller's txn)  cancel job when authorized less than 24 h ago
    document_request_cancel_reissue (caller's txn)  cancel job that, once the provider cancels, issues the next note
    document_request_correction (caller's txn)  a carta de correção (CC-e) and its job
    document_request_return (caller's txn)  an NF-e de devolução (entrada) of returned goods and its job
    job_run                 (Celery)        lease the job → provider call → record the outcome
    webhook_store / webhook_process         inbox of provider notifications, applied once
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Model
from django.utils import timezone
from django.utils.translation import gettext

from fiscal.access_key import is_valid
from fiscal.models import (
    BLOCKED_PREFIX,
    CANCEL_WINDOW,
    CORRECTION_LIMIT,
    CORRECTION_MAX,
    CORRECTION_MIN,
    FiscalCorrection,
    FiscalDocument,
    FiscalJob,
    FiscalReturnNote,
    FiscalWebhook,
)
from fiscal.providers import CorrectionResult, FiscalProvider, ProviderResult, ProviderUnavailable, get_provider
from fiscal.returns import return_invoice
from fiscal.signals import document_changed
from kernel.rows import insert_once
from kernel.tasks import enqueue_on_commit

logger = logging.getLogger(__name__)
Status = FiscalDocument.Status


def _retry_delay(attempts: int) -> timedelta:
    return timedelta(seconds=min(30 * 2 ** max(attempts - 1, 0), 3600))


def _poll_delay(attempts: int) -> timedelta:
    return timedelta(seconds=min(20 * attempts, 600))


def _changed(document: FiscalDocument, event: str, message: str, rows: list[Model] | None = None, **data: Any) -> None:
    extra = {} if rows is None else {"rows": rows}
    document_changed.send(
        sender=FiscalDocument, order_ref=document.order_ref, event=event, message=message,
        data={"status": document.status, **data}, **extra,
    )  # fmt: skip


def _enqueue(job_id: int) -> None:
    enqueue_on_commit("fiscal.tasks.run_fiscal_job", job_id)  # broker down: the beat sweep runs the job


def document_request_issue(
    *,
    order_ref: str,
    order_number: int | None,
    invoice: dict[str, Any],
    problems: list[str],
    reissue: bool = False,
) -> FiscalDocument:
    """Inside the caller's transaction. Once per order (and per re-issue after a rejection).

    `problems` (missing fiscal data, in Portuguese, naming product and field) block the issue: the
    document is "rejected" with them as the reason, no provider call, and the order is untouched.
    """
    blocked_reason = _blocked_reason(problems)
    # The first request writes the document as it will stay (one INSERT); a replay or a re-issue finds it.
    # INSERT … ON CONFLICT DO NOTHING: the unique order_ref decides in one statement (no read and savepoint first).
    document = _first_document(order_ref, order_number, invoice, problems)
    created = insert_once(document, ("order_ref", "sequence"))
    if not created:
        document = _current_locked(order_ref)
        if document is None:  # the INSERT met its row: only a concurrent delete could get here
            raise FiscalDocument.DoesNotExist(order_ref)
        if document.status != Status.REJECTED or not reissue:
            return document  # already asked (a replay), in flight, authorized or cancelled: nothing to add
        if FiscalJob.objects.filter(document=document, action=FiscalJob.Action.ISSUE).exists():
            document.attempt += 1  # a new reference: the provider keeps the rejected one as it was
        document.provider_ref = f"{order_ref}-{document.attempt}"
        document.environment = invoice.get("environment") or document.environment
        document.status = Status.REJECTED if problems else Status.PENDING
        document.sefaz_status, document.sefaz_reason = "", blocked_reason
        document.ibs_cbs_totals = invoice.get("ibs_cbs_totals") or {}
        document.save()
    if problems:
        _changed(document, "blocked", _blocked_message(document), problems=problems)
        return document
    job_fields = {
        "document": document,
        "action": FiscalJob.Action.ISSUE,
        "payload": invoice,
        "next_run_at": timezone.now(),
    }
    key = f"{order_ref}:issue:{document.attempt}"
    if created:  # a new document has no job yet: no lookup first
        job, job_created = FiscalJob.objects.create(key=key, **job_fields), True
    else:
        job, job_created = FiscalJob.objects.get_or_create(key=key, defaults=job_fields)
    if job_created:
        _changed(document, "requested", "Emissão da NF-e solicitada.", attempt=document.attempt)
        _enqueue(job.pk)
    return document


def _current_locked(order_ref: str) -> FiscalDocument | None:
    """The order's current note (the last one: an earlier one was cancelled and reissued), row-locked; None when
    the order has none."""
    return FiscalDocument.objects.select_for_update().filter(order_ref=order_ref).order_by("-sequence").first()


def _blocked_reason(problems: list[str]) -> str:
    return (BLOCKED_PREFIX + "; ".join(problems))[:500] if problems else ""


def _blocked_message(document: FiscalDocument) -> str:
    return f"NF-e não emitida. {document.sefaz_reason}"


def _first_document(
    order_ref: str, order_number: int | None, invoice: dict[str, Any], problems: list[str]
) -> FiscalDocument:
    """The document a first request writes, as it will stay (blocked by `problems`, or pending its job)."""
    return FiscalDocument(
        order_ref=order_ref,
        order_number=order_number,
        environment=invoice.get("environment") or "homologacao",
        provider_ref=f"{order_ref}-1",
        status=Status.REJECTED if problems else Status.PENDING,
        sefaz_reason=_blocked_reason(problems),
        ibs_cbs_totals=invoice.get("ibs_cbs_totals") or {},
    )


def document_block_once(
    *,
    order_ref: str,
    order_number: int | None,
    invoice: dict[str, Any],
    problems: list[str],
    guard: tuple[str, list[Any]],
) -> FiscalDocument | None:
    """A first request that `problems` block, written as one statement with no transaction of its own: the document
    as `document_request_issue` writes it, and what the `document_changed` receivers record of it — they are asked
    for their rows (`rows=`, see fiscal/signals.py) instead of writing them —, only while the caller's `guard`
    (SQL: e.g. the order's row locked and unchanged) yields a row and the order has no document yet. None when
    nothing was written: the caller goes through `document_request_issue` (a replay, a changed order).
    Issue 34: the blocked request of a store without fiscal data was six statements, a transaction around them."""
    if not problems:
        raise ValueError("document_block_once: nothing blocks this request")
    document = _first_document(order_ref, order_number, invoice, problems)
    rows: list[Model] = []
    _changed(document, "blocked", _blocked_message(document), problems=problems, rows=rows)
    if len(rows) > 1:
        raise ValueError("document_block_once: one row per blocked document is written with it")
    if not insert_once(document, ("order_ref", "sequence"), event=rows[0] if rows else None, guard=guard):
        return None
    return document


def document_request_cancel(*, order_ref: str, justification: str) -> str:
    """Inside the caller's transaction: "requested", "window_closed", "not_issued" or "already"."""
    document = _current_locked(order_ref)
    if document is None or document.status in (Status.REJECTED, Status.PENDING):
        # Not issued: a pending issue job still runs; the sweep of the shop is not told (see the report).
        return "not_issued"
    if document.status == Status.CANCELLED:
        return "already"
    if document.status != Status.AUTHORIZED or document.issued_at is None:
        return "not_issued"
    cancels = list(document.jobs.filter(action=FiscalJob.Action.CANCEL))
    in_flight = [job for job in cancels if job.status != FiscalJob.Status.DONE]
    for job in in_flight:  # a cancel-and-reissue under way: the order is gone, so cancel without the new note
        if job.payload.get("reissue"):
            job.payload = {"justification": job.payload.get("justification", "")}
            job.save(update_fields=["payload"])  # the record step reads the job again under its lock
    if in_flight:
        return "already"
    if timezone.now() - document.issued_at > CANCEL_WINDOW:
        _changed(
            document, "cancel_window_closed",
            "NF-e autorizada há mais de 24 horas: não pode ser cancelada; registre uma NF-e de devolução.",
        )  # fmt: skip
        return "window_closed"
    text = (justification or "").strip()
    if len(text) < 15:  # SEFAZ asks 15 to 255 characters
        text = f"Pedido cancelado a pedido do cliente. {text}".strip()
    job, created = FiscalJob.objects.get_or_create(
        key=_cancel_key(order_ref, document, len(cancels)),
        defaults={"document": document, "action": FiscalJob.Action.CANCEL, "payload": {"justification": text[:255]},
                  "next_run_at": timezone.now()},
    )  # fmt: skip
    if created:
        _changed(document, "cancel_requested", "Cancelamento da NF-e solicitado.")
        _enqueue(job.pk)
    return "requested" if created else "already"


def _cancel_key(order_ref: str, document: FiscalDocument, earlier: int) -> str:
    """`earlier`: the note's cancels the provider refused (done, the note still authorized); each try its own key."""
    return f"{order_ref}:cancel:{document.attempt}" + (f"-{earlier + 1}" if earlier else "")


class CancelReissueRefused(Exception):
    """Why a cancel-and-reissue is not asked, in Portuguese for staff (nothing was written, nothing was sent)."""


JUSTIFICATION_MIN, JUSTIFICATION_MAX = 15, 255  # SEFAZ's xJust of the cancel event (Focus NFe checks the same)


def justification_clean(text: str) -> str:
    """The justification as the SEFAZ takes it: no line breaks, tabs or spaces at the ends (rejected otherwise).
    Raises CancelReissueRefused naming the field when it is not 15 to 255 characters."""
    return _one_line(
        text, JUSTIFICATION_MIN, JUSTIFICATION_MAX, CancelReissueRefused,
        gettext(
            "Justificativa do cancelamento: escreva de %(min)d a %(max)d caracteres (tem %(length)d), por exemplo "
            "“CPF do destinatário informado errado”."
        ),
    )  # fmt: skip


def _one_line(text: str, low: int, high: int, refusal: type[Exception], message: str) -> str:
    """`text` as the SEFAZ takes an event's free text: one line, no spaces at the ends (rejected otherwise), `low`
    to `high` characters; else `refusal` with `message` (formatted with min, max and length)."""
    cleaned = " ".join((text or "").split())
    if not low <= len(cleaned) <= high:
        raise refusal(message % {"min": low, "max": high, "length": len(cleaned)})
    return cleaned


def cancel_deadline(document: FiscalDocument) -> datetime | None:
    """Until when the SEFAZ cancels an authorized note (24 h after its authorization); None when not authorized."""
    if document.status != Status.AUTHORIZED or document.issued_at is None:
        return None
    return document.issued_at + CANCEL_WINDOW


def after_window_advice(access_key: str) -> str:
    """What staff do when the note can no longer be cancelled: no goods came back, so the devolução is the
    accountant's (the shop issues one only for a received return, `document_request_return`)."""
    return gettext(
        "Passadas 24 horas da autorização, a SEFAZ não cancela mais a NF-e, e a carta de correção não pode mudar o "
        "destinatário (nome, CPF/CNPJ, endereço), valores nem quantidades. Peça ao seu contador para emitir uma NF-e "
        "de entrada (devolução) referenciando a chave %(key)s e, em seguida, uma nova NF-e com os dados corretos. "
        "Por aqui a loja emite a NF-e de devolução só dos itens que voltaram (uma devolução recebida)."
    ) % {"key": access_key}


def document_request_cancel_reissue(
    *, order_ref: str, justification: str, invoice: dict[str, Any], problems: list[str]
) -> FiscalDocument:
    """Inside the caller's transaction (the order locked): ask the provider to cancel the order's authorized note
    and, once it is cancelled, to issue the next one from `invoice` (built now, with the corrected buyer).

    The new note is written by the job that records the cancellation (`_apply`), in that same transaction: a
    refused cancel issues nothing, a crash between the provider's answer and our record is re-polled, and a
    replayed job finds itself done. Raises CancelReissueRefused (in Portuguese) when it cannot be asked; returns
    the note whose cancel is asked (or already in flight: a double click adds nothing)."""
    text = justification_clean(justification)
    document = _current_locked(order_ref)
    if document is None or document.status != Status.AUTHORIZED:
        raise CancelReissueRefused(gettext("Este pedido não tem NF-e autorizada: não há nota a cancelar e reemitir."))
    cancels = list(document.jobs.filter(action=FiscalJob.Action.CANCEL).values_list("status", flat=True))
    if any(status != FiscalJob.Status.DONE for status in cancels):
        return document  # asked already (a double click): the job runs once
    deadline = cancel_deadline(document)
    if deadline is None or timezone.now() > deadline:
        raise CancelReissueRefused(after_window_advice(document.access_key))
    if problems:  # the old note is cancelled only when the new one can be issued
        raise CancelReissueRefused(
            gettext("A nova NF-e não poderia ser emitida; a atual foi mantida. Corrija antes: %(problems)s")
            % {"problems": "; ".join(problems)}
        )
    job = FiscalJob.objects.create(
        key=_cancel_key(order_ref, document, len(cancels)), document=document, action=FiscalJob.Action.CANCEL,
        next_run_at=timezone.now(), payload={"justification": text, "reissue": invoice},
    )  # fmt: skip
    _changed(
        document, "cancel_requested",
        f"Cancelamento da NF-e nº {document.number} solicitado para emitir outra com os dados corrigidos. "
        f"Justificativa: {text}",
        reissue=True,
    )  # fmt: skip
    _enqueue(job.pk)
    return document


class CorrectionRefused(Exception):
    """Why a carta de correção is not asked, in Portuguese for staff (nothing was written, nothing was sent)."""


def correction_clean(text: str) -> str:
    """The correction as the SEFAZ takes it (xCorrecao: one line, 15 to 1,000 characters). Raises CorrectionRefused
    naming the field."""
    return _one_line(
        text, CORRECTION_MIN, CORRECTION_MAX, CorrectionRefused,
        gettext(
            "Texto da carta de correção: escreva de %(min)d a %(max)d caracteres (tem %(length)d), por exemplo "
            "“Onde se lê Rua das Flores, 12, leia-se Rua das Flores, 120”."
        ),
    )  # fmt: skip


def document_request_correction(*, order_ref: str, text: str, actor: str = "") -> FiscalCorrection:
    """Inside the caller's transaction: ask a carta de correção of the order's authorized note. The SEFAZ keeps
    only the last letter, so `text` carries every correction still wanted (the admin starts from the last one).
    One letter at a time per note: the same text again while it is at the SEFAZ is a double click (that letter is
    returned, nothing added). Raises CorrectionRefused (in Portuguese) when it cannot be asked."""
    cleaned = correction_clean(text)
    document = _current_locked(order_ref)
    if document is None or document.status != Status.AUTHORIZED:
        raise CorrectionRefused(
            gettext("Este pedido não tem NF-e autorizada: a carta de correção só corrige uma nota autorizada.")
        )
    letters = list(document.corrections.order_by("sequence"))
    registered = [letter for letter in letters if letter.status == FiscalCorrection.Status.REGISTERED]
    pending = next((letter for letter in letters if letter.status == FiscalCorrection.Status.PENDING), None)
    if pending is not None:
        if pending.text == cleaned:
            return pending
        raise CorrectionRefused(
            gettext("A carta de correção anterior ainda está na SEFAZ: espere a resposta e envie a nova depois.")
        )
    if len(registered) >= CORRECTION_LIMIT:
        raise CorrectionRefused(
            gettext(
                "Esta NF-e já tem %(limit)d cartas de correção, o máximo da SEFAZ. Para corrigir mais, peça ao seu "
                "contador uma NF-e de devolução e emita uma nova nota."
            )
            % {"limit": CORRECTION_LIMIT}
        )
    if registered and registered[-1].text == cleaned:
        raise CorrectionRefused(gettext("Este texto é o da última carta registrada: não há nada novo a corrigir."))
    sequence = (letters[-1].sequence if letters else 0) + 1
    known = (registered[-1].number or 0) if registered else 0
    correction = FiscalCorrection.objects.create(
        document=document, sequence=sequence, text=cleaned, requested_by=(actor or "")[:150]
    )
    job = FiscalJob.objects.create(
        key=f"{order_ref}:correct:{document.attempt}-{sequence}", document=document,
        action=FiscalJob.Action.CORRECT, next_run_at=timezone.now(),
        # `known`: the SEFAZ's number of the last registered letter; a retry after a lost answer finds a higher one.
        payload={"correction": correction.pk, "text": cleaned, "known": known},
    )  # fmt: skip
    _changed(document, "correction_requested", f"Carta de correção enviada à SEFAZ: {cleaned}", sequence=sequence)
    _enqueue(job.pk)
    return correction


class ReturnNoteRefused(Exception):
    """Why an NF-e de devolução is not asked, in Portuguese for staff (nothing was written, nothing was sent)."""


_RETURN_LIVE = (FiscalReturnNote.Status.PENDING, FiscalReturnNote.Status.PROCESSING, FiscalReturnNote.Status.AUTHORIZED)


def document_request_return(
    *, order_ref: str, return_ref: str, quantities: dict[str, int], actor: str = ""
) -> FiscalReturnNote:
    """Inside the caller's transaction (the order locked): ask the NF-e de devolução of a received return —
    `quantities`: SKU → units that came back — referencing the order's authorized note, with the items at that
    note's values and taxes (fiscal/returns.py). Once per return: asked again while it is pending, in flight or
    authorized (a double click), the same note is returned; after a rejection it is asked again under the next
    attempt (a new reference at the provider). Raises ReturnNoteRefused (in Portuguese) when it cannot be asked."""
    document = _current_locked(order_ref)
    if document is None or document.status != Status.AUTHORIZED:
        raise ReturnNoteRefused(
            gettext("Este pedido não tem NF-e de venda autorizada: não há nota a referenciar na NF-e de devolução.")
        )
    note = FiscalReturnNote.objects.select_for_update().filter(return_ref=return_ref).first()
    if note is not None and note.status in _RETURN_LIVE:
        return note
    sale = (
        FiscalJob.objects.filter(
            document=document, action=FiscalJob.Action.ISSUE, key=f"{order_ref}:issue:{document.attempt}"
        )
        .values_list("payload", flat=True)
        .first()
    )
    if not sale:
        raise ReturnNoteRefused(
            gettext("Os dados da NF-e de venda não foram encontrados: peça a devolução ao contador.")
        )
    already: dict[str, int] = {}
    for taken in (
        document.return_notes.filter(status__in=_RETURN_LIVE)
        .exclude(return_ref=return_ref)
        .values_list("quantities", flat=True)
    ):
        for sku, units in taken.items():
            already[sku] = already.get(sku, 0) + int(units)
    invoice, problems = return_invoice(sale, access_key=document.access_key, quantities=quantities, already=already)
    if problems:
        raise ReturnNoteRefused(
            gettext("NF-e de devolução não emitida: %(problems)s.") % {"problems": "; ".join(problems)}
        )
    if note is None:
        note = FiscalReturnNote.objects.create(
            document=document, return_ref=return_ref, provider_ref=f"{return_ref}-1",
            quantities=quantities, total_amount=invoice["total_amount"],
            ibs_cbs_totals=invoice.get("ibs_cbs_totals") or {}, requested_by=(actor or "")[:150],
        )  # fmt: skip
    else:  # rejected: the provider keeps the rejected reference as it was
        note.attempt += 1
        note.provider_ref = f"{return_ref}-{note.attempt}"
        note.status = FiscalReturnNote.Status.PENDING
        note.sefaz_status, note.sefaz_reason = "", ""
        note.quantities, note.total_amount = quantities, invoice["total_amount"]
        note.ibs_cbs_totals = invoice.get("ibs_cbs_totals") or {}
        note.requested_by = (actor or "")[:150]
        note.save()
    job = FiscalJob.objects.create(
        key=f"{order_ref}:return:{return_ref}-{note.attempt}", document=document, action=FiscalJob.Action.RETURN,
        next_run_at=timezone.now(), payload={"return_note": note.pk, "invoice": invoice},
    )  # fmt: skip
    _changed(
        document, "return_note_requested",
        f"Emissão da NF-e de devolução solicitada (devolução {return_ref}), referenciando a chave "
        f"{document.access_key}.",
        return_id=return_ref, attempt=note.attempt,
    )  # fmt: skip
    _enqueue(job.pk)
    return note


def _issue_replacement(cancelled: FiscalDocument, invoice: dict[str, Any]) -> FiscalDocument:
    """Inside the record transaction of the cancel: the order's next note and its issue job, under a new reference
    (the attempt counter goes on, so the provider's refs and our job keys never repeat)."""
    attempt = cancelled.attempt + 1
    document = FiscalDocument.objects.create(
        order_ref=cancelled.order_ref, order_number=cancelled.order_number, sequence=cancelled.sequence + 1,
        attempt=attempt, provider_ref=f"{cancelled.order_ref}-{attempt}",
        environment=invoice.get("environment") or cancelled.environment,
        ibs_cbs_totals=invoice.get("ibs_cbs_totals") or {},
    )  # fmt: skip
    job = FiscalJob.objects.create(
        document=document, action=FiscalJob.Action.ISSUE, key=f"{cancelled.order_ref}:issue:{attempt}",
        payload=invoice, next_run_at=timezone.now(),
    )  # fmt: skip
    _changed(
        document, "requested",
        f"Emissão da nova NF-e solicitada com os dados corrigidos (substitui a nº {cancelled.number}, cancelada).",
        attempt=attempt, replaces=cancelled.access_key,
    )  # fmt: skip
    _enqueue(job.pk)
    return document


def _lease(job_id: int) -> tuple[FiscalJob, FiscalDocument, str] | None:
    """Short transaction: take the job and push its next run out, so a crash mid-call is retried later."""
    with transaction.atomic():
        job = (
            FiscalJob.objects.select_for_update(skip_locked=True)
            .select_related("document")
            .filter(pk=job_id, status__in=[FiscalJob.Status.PENDING, FiscalJob.Status.WAITING])
            .first()
        )
        if job is None:
            return None
        mode = "poll" if job.status == FiscalJob.Status.WAITING or job.attempts > 0 else "call"
        job.attempts += 1
        job.next_run_at = timezone.now() + _retry_delay(job.attempts)
        job.save(update_fields=["attempts", "next_run_at"])
        return job, job.document, mode


def _call(provider: FiscalProvider, job: FiscalJob, document: FiscalDocument, mode: str) -> ProviderResult:
    ref = document.provider_ref
    if job.action == FiscalJob.Action.ISSUE:
        # After a crash or a timeout the provider may already have the note: ask before sending again.
        result = provider.status(ref=ref) if mode == "poll" else None
        return result if result is not None else provider.issue(ref=ref, invoice=job.payload)
    if mode == "poll":
        current = provider.status(ref=ref)
        if current is not None and current.status == "cancelled":
            return current
    return provider.cancel(ref=ref, justification=str(job.payload.get("justification", "")))


def _file(provider: FiscalProvider, inline: bytes | None, path: str) -> bytes | None:
    """A file the provider answered with: inline (the sandbox), else fetched from the path it named (Focus NFe)."""
    if inline is not None:
        return inline
    return provider.download(path=path) if path else None


def _store_files(provider: FiscalProvider, document: FiscalDocument, result: ProviderResult) -> dict[str, str]:
    """Outside any transaction: fetch (when needed) and store the XML and the DANFE, or a cancellation's event
    XML; names to record."""
    if result.status == "cancelled" and document.status == Status.AUTHORIZED and document.access_key:
        event = _file(provider, result.xml, result.xml_path)
        if not event:
            return {}
        return {"cancel_xml": default_storage.save(f"fiscal/xml/{document.access_key}-can.xml", ContentFile(event))}
    if result.status != "authorized" or not result.access_key or document.status == Status.AUTHORIZED:
        return {}  # nothing to store, or a repeated answer about a note already stored
    return _store_note_files(provider, result)


def _store_note_files(provider: FiscalProvider, result: ProviderResult) -> dict[str, str]:
    """An authorized note's XML and DANFE (a sale's or a devolução's), under its access key; names to record."""
    xml = _file(provider, result.xml, result.xml_path)
    danfe = _file(provider, result.danfe, result.danfe_path)
    names: dict[str, str] = {}
    if xml:
        names["xml"] = default_storage.save(f"fiscal/xml/{result.access_key}-nfe.xml", ContentFile(xml))
    if danfe:
        names["danfe"] = default_storage.save(f"fiscal/danfe/{result.access_key}.pdf", ContentFile(danfe))
    return names


def _apply(document: FiscalDocument, job: FiscalJob | None, result: ProviderResult, files: dict[str, str]) -> str:
    """Inside the record transaction, with the document locked."""
    now = timezone.now()
    if result.status == "processing":
        if job is not None:
            job.status = FiscalJob.Status.WAITING
            job.next_run_at = now + _poll_delay(job.attempts)
            job.save(update_fields=["status", "next_run_at"])
        if document.status == Status.PENDING:
            document.status = Status.PROCESSING
            document.save(update_fields=["status", "updated_at"])
            _changed(document, "processing", "NF-e enviada; aguardando a SEFAZ.")
        return "processing"
    if job is not None:
        job.status = FiscalJob.Status.DONE
        job.finished_at = now
        job.last_error = ""
        job.save(update_fields=["status", "finished_at", "last_error"])
    if result.status == "authorized" and document.status in (Status.PENDING, Status.PROCESSING):
        if not is_valid(result.access_key):
            document.status = Status.REJECTED
            document.sefaz_reason = f"Chave de acesso inválida devolvida pelo emissor: {result.access_key!r}"[:500]
            document.save()
            _changed(document, "rejected", document.sefaz_reason)
            return "rejected"
        document.status = Status.AUTHORIZED
        document.access_key = result.access_key
        document.number, document.series = result.number, result.series
        document.protocol, document.sefaz_status, document.sefaz_reason = (
            result.protocol,
            result.sefaz_status,
            result.sefaz_reason,
        )
        document.issued_at = result.issued_at or now
        document.xml.name = files.get("xml", document.xml.name)
        document.danfe.name = files.get("danfe", document.danfe.name)
        document.save()
        _changed(
            document, "authorized", f"NF-e nº {document.number} série {document.series} autorizada.",
            access_key=document.access_key, protocol=document.protocol,
        )  # fmt: skip
        return "authorized"
    if (
        result.status == "authorized"
        and document.status == Status.AUTHORIZED
        and job is not None
        and job.action == "cancel"
    ):
        document.sefaz_status, document.sefaz_reason = result.sefaz_status, result.sefaz_reason
        document.save(update_fields=["sefaz_status", "sefaz_reason", "updated_at"])
        kept = " A NF-e continua autorizada; nenhuma nova nota foi emitida." if job.payload.get("reissue") else ""
        _changed(document, "cancel_refused", f"Cancelamento da NF-e recusado: {result.sefaz_reason}{kept}")
        return "cancel_refused"
    if result.status == "rejected" and document.status in (Status.PENDING, Status.PROCESSING):
        document.status = Status.REJECTED
        document.sefaz_status, document.sefaz_reason = result.sefaz_status, result.sefaz_reason
        document.save()
        _changed(
            document, "rejected", f"NF-e rejeitada pela SEFAZ ({result.sefaz_status}): {result.sefaz_reason}",
            sefaz_status=result.sefaz_status,
        )  # fmt: skip
        return "rejected"
    if result.status == "cancelled" and document.status == Status.AUTHORIZED:
        document.status = Status.CANCELLED
        document.cancelled_at = now
        document.sefaz_status, document.sefaz_reason = result.sefaz_status, result.sefaz_reason
        document.cancel_xml.name = files.get("cancel_xml", document.cancel_xml.name)
        document.save()
        _changed(document, "cancelled", f"NF-e nº {document.number} cancelada.")
        if job is not None and job.action == FiscalJob.Action.CANCEL and job.payload.get("reissue"):
            _issue_replacement(document, job.payload["reissue"])
        return "cancelled"
    return "unchanged"  # a late or repeated answer about a state already recorded


def _record(job_id: int, document_id: int, apply: Callable[[FiscalDocument, FiscalJob], str]) -> str:
    """One short transaction: the document and the job locked, the provider's answer applied by `apply`; "skipped"
    when the job is done already (a replayed task)."""
    with transaction.atomic():
        document = FiscalDocument.objects.select_for_update().get(pk=document_id)
        job = FiscalJob.objects.select_for_update().filter(pk=job_id).exclude(status=FiscalJob.Status.DONE).first()
        if job is None:
            return "skipped"
        return apply(document, job)


def job_run(*, job_id: int, provider: FiscalProvider | None = None) -> str:
    """Run one due job: the outcome recorded ("authorized", "processing", …), "retry" or "skipped"."""
    leased = _lease(job_id)
    if leased is None:
        return "skipped"
    job, document, mode = leased
    provider = provider or get_provider(document.environment)
    if job.action == FiscalJob.Action.CORRECT:
        return _run_correction(provider, job, document, mode)
    if job.action == FiscalJob.Action.RETURN:
        return _run_return_note(provider, job, document, mode)
    try:
        result = _call(provider, job, document, mode)
        files = _store_files(provider, document, result)
    except ProviderUnavailable as exc:
        return _retry_later(job, document, exc)
    return _record(job.pk, document.pk, lambda locked, open_job: _apply(locked, open_job, result, files))


def _retry_later(job: FiscalJob, document: FiscalDocument, exc: ProviderUnavailable) -> str:
    with transaction.atomic():
        FiscalJob.objects.filter(pk=job.pk).update(last_error=str(exc)[:500])
        locked = FiscalDocument.objects.select_for_update().get(pk=document.pk)
        _changed(
            locked,
            "retry",
            f"Emissor fiscal indisponível; nova tentativa automática. ({exc})",
            attempts=job.attempts,
        )
    return "retry"


def _run_correction(provider: FiscalProvider, job: FiscalJob, document: FiscalDocument, mode: str) -> str:
    """Outside any transaction: send the letter (or, after a lost answer, find it registered), store its files,
    then record the outcome in one short transaction."""
    try:
        result = _letter_answer(provider, job, document, mode)
        files = _store_correction_files(provider, document, result)
    except ProviderUnavailable as exc:
        return _retry_later(job, document, exc)
    return _record(job.pk, document.pk, lambda locked, open_job: _apply_correction(locked, open_job, result, files))


def _letter_answer(provider: FiscalProvider, job: FiscalJob, document: FiscalDocument, mode: str) -> CorrectionResult:
    if mode == "poll":  # the last try may have reached the SEFAZ: a letter numbered past the known one is ours
        last = provider.last_correction(ref=document.provider_ref)
        if last is not None and (last.number or 0) > int(job.payload.get("known") or 0):
            return last
    return provider.correct(ref=document.provider_ref, text=str(job.payload.get("text", "")))


def _store_correction_files(
    provider: FiscalProvider, document: FiscalDocument, result: CorrectionResult
) -> dict[str, str]:
    if result.status != "registered" or not result.number:
        return {}
    name = f"{document.access_key}-cce-{result.number:02d}"
    names: dict[str, str] = {}
    xml = _file(provider, result.xml, result.xml_path)
    pdf = _file(provider, result.pdf, result.pdf_path)
    if xml:
        names["xml"] = default_storage.save(f"fiscal/xml/{name}.xml", ContentFile(xml))
    if pdf:
        names["pdf"] = default_storage.save(f"fiscal/cce/{name}.pdf", ContentFile(pdf))
    return names


def _apply_correction(document: FiscalDocument, job: FiscalJob, result: CorrectionResult, files: dict[str, str]) -> str:
    """Inside the record transaction, the document and the job locked."""
    now = timezone.now()
    job.status, job.finished_at, job.last_error = FiscalJob.Status.DONE, now, ""
    job.save(update_fields=["status", "finished_at", "last_error"])
    correction = FiscalCorrection.objects.select_for_update().filter(pk=job.payload.get("correction")).first()
    if correction is None or correction.status != FiscalCorrection.Status.PENDING:
        return "unchanged"
    correction.sefaz_status, correction.sefaz_reason = result.sefaz_status, result.sefaz_reason
    if result.status == "registered":
        correction.status, correction.number, correction.registered_at = (
            FiscalCorrection.Status.REGISTERED, result.number, now,
        )  # fmt: skip
        correction.xml.name = files.get("xml", "")
        correction.pdf.name = files.get("pdf", "")
        correction.save()
        _changed(
            document, "corrected", f"Carta de correção nº {result.number} registrada pela SEFAZ: {correction.text}",
            number=result.number,
        )  # fmt: skip
        return "corrected"
    correction.status = FiscalCorrection.Status.REFUSED
    correction.save()
    code = f" ({result.sefaz_status})" if result.sefaz_status else ""
    _changed(
        document, "correction_refused",
        f"Carta de correção recusada pela SEFAZ{code}: {result.sefaz_reason} A NF-e continua como estava.",
    )  # fmt: skip
    return "correction_refused"


def _run_return_note(provider: FiscalProvider, job: FiscalJob, document: FiscalDocument, mode: str) -> str:
    """Outside any transaction: issue the NF-e de devolução — after a crash or a timeout, first ask the provider
    for its reference, so a note it already has is recorded, never sent twice —, store its files, then record the
    outcome in one short transaction."""
    note = FiscalReturnNote.objects.filter(pk=job.payload.get("return_note")).first()
    if note is None:
        return _record(job.pk, document.pk, lambda locked, open_job: _apply_return(locked, open_job, None, None, {}))
    try:
        result = provider.status(ref=note.provider_ref) if mode == "poll" else None
        if result is None:
            result = provider.issue(ref=note.provider_ref, invoice=job.payload["invoice"])
        files = _store_return_files(provider, note, result)
    except ProviderUnavailable as exc:
        return _retry_later(job, document, exc)
    return _record(
        job.pk, document.pk, lambda locked, open_job: _apply_return(locked, open_job, note.pk, result, files)
    )


def _store_return_files(provider: FiscalProvider, note: FiscalReturnNote, result: ProviderResult) -> dict[str, str]:
    if result.status != "authorized" or not result.access_key or note.status == FiscalReturnNote.Status.AUTHORIZED:
        return {}
    return _store_note_files(provider, result)


def _apply_return(
    document: FiscalDocument,
    job: FiscalJob | None,
    note_id: int | None,
    result: ProviderResult | None,
    files: dict[str, str],
) -> str:
    """Inside the record transaction, the sale's document (and the job) locked."""
    now = timezone.now()
    note = FiscalReturnNote.objects.select_for_update().filter(pk=note_id).first() if note_id else None
    if result is not None and result.status == "processing":
        if job is not None:
            job.status, job.next_run_at = FiscalJob.Status.WAITING, now + _poll_delay(job.attempts)
            job.save(update_fields=["status", "next_run_at"])
        if note is not None and note.status == FiscalReturnNote.Status.PENDING:
            note.status = FiscalReturnNote.Status.PROCESSING
            note.save(update_fields=["status"])
        return "processing"
    if job is not None:
        job.status, job.finished_at, job.last_error = FiscalJob.Status.DONE, now, ""
        job.save(update_fields=["status", "finished_at", "last_error"])
    open_states = (FiscalReturnNote.Status.PENDING, FiscalReturnNote.Status.PROCESSING)
    if note is None or result is None or note.status not in open_states:
        return "unchanged"  # a late or repeated answer about a note already recorded
    if result.status == "authorized" and is_valid(result.access_key):
        note.status, note.access_key = FiscalReturnNote.Status.AUTHORIZED, result.access_key
        note.number, note.series, note.protocol = result.number, result.series, result.protocol
        note.sefaz_status, note.sefaz_reason = result.sefaz_status, result.sefaz_reason
        note.issued_at = result.issued_at or now
        note.xml.name = files.get("xml", note.xml.name)
        note.danfe.name = files.get("danfe", note.danfe.name)
        note.save()
        _changed(
            document, "return_note_authorized",
            f"NF-e de devolução nº {note.number} série {note.series} autorizada (devolução {note.return_ref}), "
            f"chave {note.access_key}; referencia a NF-e de venda nº {document.number}, chave {document.access_key}.",
            return_id=note.return_ref, access_key=note.access_key,
        )  # fmt: skip
        return "return_authorized"
    note.status = FiscalReturnNote.Status.REJECTED
    if result.status == "authorized":  # an answer with a key that is not one
        note.sefaz_status, note.sefaz_reason = (
            "",
            f"Chave de acesso inválida devolvida pelo emissor: {result.access_key!r}",
        )
    else:
        note.sefaz_status, note.sefaz_reason = result.sefaz_status, result.sefaz_reason
    note.sefaz_reason = note.sefaz_reason[:500]
    note.save()
    code = f" ({note.sefaz_status})" if note.sefaz_status else ""
    _changed(
        document, "return_note_rejected",
        f"NF-e de devolução rejeitada pela SEFAZ{code}: {note.sefaz_reason} Corrija e emita de novo.",
        return_id=note.return_ref, sefaz_status=note.sefaz_status,
    )  # fmt: skip
    return "return_rejected"


def jobs_due(*, limit: int = 100) -> list[int]:
    return list(
        FiscalJob.objects.filter(
            status__in=[FiscalJob.Status.PENDING, FiscalJob.Status.WAITING], next_run_at__lte=timezone.now()
        )
        .order_by("next_run_at", "id")
        .values_list("pk", flat=True)[:limit]
    )


def webhook_store(*, provider: str, event_id: str, provider_ref: str, body: dict[str, Any]) -> FiscalWebhook | None:
    """The raw notification, once per provider event id; None for a duplicate delivery."""
    try:
        with transaction.atomic():
            row = FiscalWebhook.objects.create(
                provider=provider, event_id=event_id, provider_ref=provider_ref, body=body
            )
    except IntegrityError:
        return None

    enqueue_on_commit("fiscal.tasks.process_fiscal_webhook", row.pk)  # broker down: the sweep processes it
    return row


def webhook_process(*, webhook_id: int, provider: FiscalProvider | None = None) -> str:
    row = FiscalWebhook.objects.filter(pk=webhook_id, processed_at__isnull=True).first()
    if row is None:
        return "skipped"
    document = FiscalDocument.objects.filter(provider_ref=row.provider_ref).first()
    if document is None:
        note = FiscalReturnNote.objects.select_related("document").filter(provider_ref=row.provider_ref).first()
        if note is not None:
            return _webhook_return(row, note, provider or get_provider(note.document.environment))
    if document is None:
        FiscalWebhook.objects.filter(pk=row.pk).update(processed_at=timezone.now())
        return "unknown_ref"
    sale, issuer = document, provider or get_provider(document.environment)

    def apply(result: Any, files: Any) -> str:
        document = FiscalDocument.objects.select_for_update().get(pk=sale.pk)
        action = FiscalJob.Action.CANCEL if result.status == "cancelled" else FiscalJob.Action.ISSUE
        job = _open_job(FiscalJob.objects.filter(document=document, action=action))
        return _apply(document, job, result, files)

    return _webhook_applied(row, lambda result: _store_files(issuer, sale, result), apply, issuer)


def _webhook_return(row: FiscalWebhook, note: FiscalReturnNote, provider: FiscalProvider) -> str:
    """The provider's notification about an NF-e de devolução: applied like the poll's answer, once."""

    def apply(result: Any, files: Any) -> str:
        document = FiscalDocument.objects.select_for_update().get(pk=note.document_id)
        jobs = FiscalJob.objects.filter(document=document, action=FiscalJob.Action.RETURN, payload__return_note=note.pk)
        return _apply_return(document, _open_job(jobs), note.pk, result, files)

    return _webhook_applied(row, lambda result: _store_return_files(provider, note, result), apply, provider)


def _open_job(jobs: Any) -> FiscalJob | None:
    """The newest job of `jobs` not done, locked."""
    return jobs.select_for_update().exclude(status=FiscalJob.Status.DONE).order_by("-id").first()


def _webhook_applied(
    row: FiscalWebhook,
    store: Callable[[Any], Any],
    apply: Callable[[Any, Any], str],
    provider: FiscalProvider,
) -> str:
    """A provider notification's result read and its files stored outside any transaction, then applied (`apply`,
    with the rows it needs locked) and the notification marked processed in one transaction, once."""
    try:
        result = provider.result_from_webhook(body=row.body)
        files = store(result)  # outside the transaction
    except ProviderUnavailable:
        logger.warning("fiscal webhook %s could not be applied yet", row.pk, exc_info=True)
        return "retry"
    with transaction.atomic():
        locked_row = FiscalWebhook.objects.select_for_update().filter(pk=row.pk, processed_at__isnull=True).first()
        if locked_row is None:
            return "skipped"
        outcome = apply(result, files)
        locked_row.processed_at = timezone.now()
        locked_row.save(update_fields=["processed_at"])
    return outcome


def webhooks_unprocessed(*, older_than: timedelta, limit: int = 100) -> list[int]:
    cutoff = timezone.now() - older_than
    return list(
        FiscalWebhook.objects.filter(processed_at__isnull=True, received_at__lt=cutoff)
        .order_by("id")
        .values_list("pk", flat=True)[:limit]
    )
