"""Sandbox provider for development and tests: authorizes at once, locally, with a valid chave de acesso.

Idempotent by reference like a real provider: issuing the same `ref` twice returns the same note.
Its own short transactions stand for the provider's database, never for ours.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from fiscal import access_key
from fiscal.models import CANCEL_WINDOW, SandboxNote, SandboxSequence
from fiscal.providers.base import CorrectionResult, ProviderResult, WebhookEvent, WebhookRejected
from fiscal.providers.documents import cancel_event_xml, correction_event_xml, correction_pdf, danfe_pdf, nfe_xml

DEMO_CNPJ = "11222333000181"  # used when the store's CNPJ is empty or alphanumeric (the key holds digits)


class SandboxProvider:
    name = "sandbox"

    def _result(self, note: SandboxNote, *, with_files: bool) -> ProviderResult:
        if note.cancelled_at is not None:
            return ProviderResult(
                status="cancelled", access_key=note.access_key, number=note.number, series=note.series,
                protocol=note.protocol, sefaz_status="135", sefaz_reason="Evento registrado e vinculado a NF-e",
            )  # fmt: skip
        files: dict[str, bytes] = {}
        if with_files:
            kwargs = dict(
                invoice=note.invoice, access_key=note.access_key, number=note.number,
                series=note.series, protocol=note.protocol, at=note.issued_at,
            )  # fmt: skip
            files = {"xml": nfe_xml(**kwargs), "danfe": danfe_pdf(**kwargs)}  # type: ignore[arg-type]
        return ProviderResult(
            status="authorized", access_key=note.access_key, number=note.number, series=note.series,
            protocol=note.protocol, sefaz_status="100", sefaz_reason="Autorizado o uso da NF-e",
            issued_at=note.issued_at, **files,
        )  # fmt: skip

    def issue(self, *, ref: str, invoice: dict[str, Any]) -> ProviderResult:
        existing = SandboxNote.objects.filter(ref=ref).first()
        if existing is not None:
            return self._result(existing, with_files=True)
        series = int(invoice.get("series") or 1)
        issuer = invoice.get("issuer", {})
        cnpj = str(issuer.get("cnpj", ""))
        if not (cnpj.isdigit() and len(cnpj) == 14):
            cnpj = DEMO_CNPJ
        uf = str(issuer.get("state", "SP")).upper()
        now = timezone.now()
        try:
            with transaction.atomic():
                SandboxSequence.objects.get_or_create(series=series)
                SandboxSequence.objects.filter(series=series).update(last_number=F("last_number") + 1)
                number = SandboxSequence.objects.get(series=series).last_number
                key = access_key.build(
                    access_key.KeyParts(
                        uf=uf if uf in access_key.UF_CODES else "SP", year_month=f"{now:%y%m}", cnpj=cnpj,
                        series=series, number=number, numeric_code=secrets.randbelow(10**8),
                    )
                )  # fmt: skip
                protocol = ("1" if invoice.get("environment") == "producao" else "2") + f"{now:%y}" + key[-12:]
                note = SandboxNote.objects.create(
                    ref=ref, access_key=key, number=number, series=series, protocol=protocol[:15],
                    invoice=invoice, issued_at=now,
                )  # fmt: skip
        except IntegrityError:  # a concurrent issue of the same ref won
            note = SandboxNote.objects.get(ref=ref)
        return self._result(note, with_files=True)

    def status(self, *, ref: str) -> ProviderResult | None:
        note = SandboxNote.objects.filter(ref=ref).first()
        return None if note is None else self._result(note, with_files=True)

    def cancel(self, *, ref: str, justification: str) -> ProviderResult:
        note = SandboxNote.objects.get(ref=ref)
        if note.cancelled_at is None and timezone.now() - note.issued_at > CANCEL_WINDOW:
            # Like the SEFAZ: no cancel more than 24 h after the authorization (rejection 501); the note stays.
            return ProviderResult(
                status="authorized", access_key=note.access_key, number=note.number, series=note.series,
                protocol=note.protocol, sefaz_status="501",
                sefaz_reason="Rejeição: Prazo de cancelamento superior ao previsto na Legislação",
            )  # fmt: skip
        SandboxNote.objects.filter(ref=ref, cancelled_at__isnull=True).update(cancelled_at=timezone.now())
        note = SandboxNote.objects.get(ref=ref)
        result = self._result(note, with_files=False)
        result.xml = cancel_event_xml(
            access_key=note.access_key, protocol=note.protocol, justification=justification,
            at=note.cancelled_at or timezone.now(), production=note.invoice.get("environment") == "producao",
        )  # fmt: skip
        return result

    def correct(self, *, ref: str, text: str) -> CorrectionResult:
        with transaction.atomic():  # the provider's own numbering of the note's letters
            note = SandboxNote.objects.select_for_update().get(ref=ref)
            if note.cancelled_at is not None:
                return CorrectionResult(status="refused", sefaz_reason="Rejeição: NF-e cancelada")
            note.corrections = [*note.corrections, text]
            note.save(update_fields=["corrections"])
        return self._correction(note, len(note.corrections))

    def last_correction(self, *, ref: str) -> CorrectionResult | None:
        note = SandboxNote.objects.filter(ref=ref).first()
        return self._correction(note, len(note.corrections)) if note is not None and note.corrections else None

    @staticmethod
    def _correction(note: SandboxNote, number: int) -> CorrectionResult:
        files = dict(
            access_key=note.access_key, number=number, text=note.corrections[number - 1], at=timezone.now(),
            production=note.invoice.get("environment") == "producao",
        )  # fmt: skip
        return CorrectionResult(
            status="registered", number=number, sefaz_status="135", sefaz_reason="Evento registrado e vinculado a NF-e",
            xml=correction_event_xml(**files), pdf=correction_pdf(**files),  # type: ignore[arg-type]
        )  # fmt: skip

    def download(self, *, path: str) -> bytes:
        raise NotImplementedError("the sandbox returns its files inline")

    def parse_webhook(self, *, headers: dict[str, str], body: bytes) -> WebhookEvent:
        raise WebhookRejected("the sandbox provider sends no webhooks")

    def result_from_webhook(self, *, body: dict[str, Any]) -> ProviderResult:
        raise WebhookRejected("the sandbox provider sends no webhooks")
