"""Sandbox PSP behaviour: Bacen-shaped charges, payments with fault injection, devoluções, webhooks.

Everything here plays the PSP's side; our own side only ever sees it through `SandboxPixPSP`
(the PixPSP interface) and through signed webhook deliveries, exactly like a real PSP.
"""

from __future__ import annotations

import json
import secrets
import string
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from kernel.tasks import enqueue_on_commit
from payments.brcode import build_dynamic, merchant_text
from payments.due import amount_due, local_date
from payments.merchant import pix_merchant
from payments.money import decimal_to_cents
from payments.psp.base import due_terms_from_bacen
from payments.sandbox.bodies import due_terms, pix_item
from payments.sandbox.models import SandboxCob, SandboxPix, SandboxRefund

ISPB = "99999999"
_ALNUM = string.ascii_letters + string.digits
DELIVERY_MODES = {"none", "once", "twice"}


class SandboxError(Exception):
    """A PSP-side refusal; `name` follows the API Pix problem names, `status` the HTTP status."""

    def __init__(self, status: int, name: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.name = name
        self.detail = detail

    def problem(self) -> dict[str, Any]:
        return {
            "type": f"https://pix.bcb.gov.br/api/v2/error/{self.name}",
            "title": self.name,
            "status": self.status,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class PayOptions:
    amount: int | None = None
    at: datetime | None = None
    payer_message: str = ""
    deliver: str = "once"
    delay_s: int = 0
    wrong_amount: bool = False
    batch_with: str = ""
    refund_first: bool = False


def _e2e(prefix: str, at: datetime) -> str:
    # "E"/"D" + 8-digit ISPB + yyyyMMddHHmm + 11 random alnum = 32 chars (PIX.md §4.3).
    return f"{prefix}{ISPB}{at.strftime('%Y%m%d%H%M')}{''.join(secrets.choice(_ALNUM) for _ in range(11))}"


def _cob(txid: str, *, lock: bool = False, kind: str | None = None) -> SandboxCob:
    """The charge; with `kind`, only of that kind (`GET /cob/{txid}` of a cobv is a 404, as at a real PSP)."""
    queryset = SandboxCob.objects.select_for_update() if lock else SandboxCob.objects
    try:
        return queryset.get(txid=txid, **({"kind": kind} if kind else {}))
    except SandboxCob.DoesNotExist:
        name = "CobVNaoEncontrada" if kind == "cobv" else "CobNaoEncontrado"
        raise SandboxError(404, name, f"{kind or 'cob'} {txid} not found") from None


@transaction.atomic
def cob_put(*, txid: str, body: dict[str, Any]) -> SandboxCob:
    """`PUT /cob/{txid}`: create, or update while ATIVA (re-PUT of a finished charge is refused)."""
    try:
        amount = decimal_to_cents(body["valor"]["original"])
        expiracao = int(body.get("calendario", {}).get("expiracao", 86400))
    except (KeyError, TypeError, ValueError) as exc:
        raise SandboxError(400, "CobPayloadInvalido", f"invalid cob body: {exc}") from exc
    if amount <= 0 or expiracao <= 0:
        raise SandboxError(400, "CobPayloadInvalido", "valor.original and calendario.expiracao must be positive")
    fields = {
        "amount": amount,
        "expiracao": expiracao,
        "chave": str(body.get("chave", settings.PIX_KEY))[:77],
        "solicitacao_pagador": str(body.get("solicitacaoPagador", ""))[:140],
        "devedor": body.get("devedor") or {},
        "info_adicionais": body.get("infoAdicionais") or [],
    }
    return _put(txid, fields)


def _put(txid: str, fields: dict[str, Any]) -> SandboxCob:
    existing = SandboxCob.objects.select_for_update().filter(txid=txid).first()
    if existing is not None and existing.status != SandboxCob.Status.ATIVA:
        raise SandboxError(409, "CobOperacaoInvalida", f"cob {txid} is {existing.status}")
    if existing is not None and existing.kind != fields.get("kind", "cob"):
        raise SandboxError(409, "CobOperacaoInvalida", f"txid {txid} is a {existing.kind}")
    if existing is not None:
        for name, value in fields.items():
            setattr(existing, name, value)
        existing.revisao += 1
        existing.save()
        return existing
    location = f"sandbox.bcp.local/qr/v2/{'cobv/' if fields.get('kind') == 'cobv' else ''}{uuid.uuid4().hex}"
    merchant_name, merchant_city = pix_merchant()
    br_code = build_dynamic(
        location=location,
        merchant_name=merchant_text(merchant_name, 25),
        merchant_city=merchant_text(merchant_city, 15),
    )
    return SandboxCob.objects.create(txid=txid, criacao=timezone.now(), location=location, br_code=br_code, **fields)


@transaction.atomic
def cobv_put(*, txid: str, body: dict[str, Any]) -> SandboxCob:
    """`PUT /cobv/{txid}` (Bacen `CobVPayload`): a due date, `devedor` with CPF or CNPJ, fine/interest/discount."""
    devedor = body.get("devedor")
    if not isinstance(devedor, dict) or not devedor.get("nome") or not (devedor.get("cpf") or devedor.get("cnpj")):
        raise SandboxError(400, "CobVPayloadInvalido", "devedor with nome and cpf or cnpj is required for a cobv")
    valor = body.get("valor")
    try:
        amount = decimal_to_cents(valor["original"])  # type: ignore[index]
        terms = due_terms_from_bacen(body.get("calendario") or {}, valor)  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError) as exc:
        raise SandboxError(400, "CobVPayloadInvalido", f"invalid cobv body: {exc}") from exc
    if amount <= 0:
        raise SandboxError(400, "CobVPayloadInvalido", "valor.original must be positive")
    fields = {
        "kind": "cobv",
        "amount": amount,
        "expiracao": 0,
        "vencimento": terms.due_date,
        "validade_apos_vencimento": terms.validity_days,
        "regras": {k: v for k, v in valor.items() if k in ("multa", "juros", "desconto")},  # type: ignore[union-attr]
        "chave": str(body.get("chave", settings.PIX_KEY))[:77],
        "solicitacao_pagador": str(body.get("solicitacaoPagador", ""))[:140],
        "devedor": devedor,
        "info_adicionais": body.get("infoAdicionais") or [],
    }
    return _put(txid, fields)


@transaction.atomic
def cob_patch_removed(*, txid: str, kind: str | None = None) -> SandboxCob:
    cob = _cob(txid, lock=True, kind=kind)
    if cob.status == SandboxCob.Status.CONCLUIDA:
        raise SandboxError(409, "CobOperacaoInvalida", f"cob {txid} is CONCLUIDA")
    if cob.status == SandboxCob.Status.ATIVA:
        cob.status = SandboxCob.Status.REMOVIDA_PELO_USUARIO_RECEBEDOR
        cob.revisao += 1
        cob.save(update_fields=["status", "revisao"])
    return cob


def get_cob(txid: str, kind: str | None = None) -> SandboxCob:
    return _cob(txid, kind=kind)


def _pay_one(cob: SandboxCob, options: PayOptions, *, now: datetime) -> SandboxPix:
    if cob.status != SandboxCob.Status.ATIVA:
        raise SandboxError(409, "CobOperacaoInvalida", f"cob {cob.txid} is {cob.status}, it cannot be paid")
    at = options.at or now
    owed = cob.amount
    if cob.kind == "cobv":
        # The payer's app computes the value of the day from the published terms (fine, interest, discount).
        terms = due_terms(cob)
        if at >= terms.expires_at:
            raise SandboxError(409, "CobExpirada", f"cobv {cob.txid} is past its validity, the payer app refuses it")
        owed = amount_due(cob.amount, terms, local_date(at)).total
    elif at > cob.criacao + timedelta(seconds=cob.expiracao):
        raise SandboxError(409, "CobExpirada", f"cob {cob.txid} expired, the payer app refuses it")
    amount = options.amount if options.amount is not None else owed
    if options.wrong_amount:
        amount += 1
    if amount <= 0:
        raise SandboxError(400, "PixPayloadInvalido", "amount must be positive")
    pix = SandboxPix.objects.create(
        end_to_end_id=_e2e("E", at),
        cob=cob,
        txid=cob.txid,
        amount=amount,
        horario=at,
        info_pagador=options.payer_message[:140],
        hold_notice=options.refund_first,
    )
    cob.status = SandboxCob.Status.CONCLUIDA
    cob.save(update_fields=["status"])
    return pix


@transaction.atomic
def pay(*, txid: str, options: PayOptions) -> list[SandboxPix]:
    """`POST /_sandbox/psp/cob/{txid}/pay`: create the Pix, mark CONCLUIDA, schedule the webhook(s)."""
    if options.deliver not in DELIVERY_MODES:
        raise SandboxError(400, "ParametroInvalido", f"deliver must be one of {sorted(DELIVERY_MODES)}")
    if not 0 <= options.delay_s <= 3600:
        raise SandboxError(400, "ParametroInvalido", "delay_s must be between 0 and 3600")
    now = timezone.now()
    txids = sorted({txid, options.batch_with} - {""})
    cobs = {cob.txid: cob for cob in SandboxCob.objects.select_for_update().filter(txid__in=txids).order_by("id")}
    for wanted in txids:
        if wanted not in cobs:
            raise SandboxError(404, "CobNaoEncontrado", f"cob {wanted} not found")
    main = _pay_one(cobs[txid], options, now=now)
    paid = [main]
    if options.batch_with:
        # The batched partner is paid normally (its own amount), then delivered in the same callback, first.
        paid.insert(0, _pay_one(cobs[options.batch_with], PayOptions(at=options.at), now=now))
    if not options.refund_first and options.deliver != "none":
        items = [pix_item(pix) for pix in paid]
        for _ in range(2 if options.deliver == "twice" else 1):
            schedule_delivery(items, delay_s=options.delay_s)
    return paid


@transaction.atomic
def expire(*, txid: str) -> SandboxCob:
    """Move the sandbox clock of this charge past expiry (plus our grace), so it is due everywhere."""
    cob = _cob(txid, lock=True)
    grace = int(getattr(settings, "PIX_EXPIRY_GRACE_SECONDS", 120))
    if cob.kind == "cobv":
        # Due so long ago that its validity ended yesterday (well past our grace).
        today = local_date(timezone.now())
        cob.vencimento = today - timedelta(days=cob.validade_apos_vencimento + 2)
        cob.criacao = min(cob.criacao, timezone.now() - timedelta(days=cob.validade_apos_vencimento + 3))
        cob.save(update_fields=["vencimento", "criacao"])
        return cob
    cob.criacao = timezone.now() - timedelta(seconds=cob.expiracao + grace + 1)
    cob.save(update_fields=["criacao"])
    return cob


def redeliver(*, e2eid: str) -> SandboxPix:
    try:
        pix = SandboxPix.objects.get(end_to_end_id=e2eid)
    except SandboxPix.DoesNotExist:
        raise SandboxError(404, "PixNaoEncontrado", f"pix {e2eid} not found") from None
    schedule_delivery([pix_item(pix)])
    return pix


@transaction.atomic
def refund_put(*, e2eid: str, refund_id: str, body: dict[str, Any]) -> SandboxRefund:
    """`PUT /pix/{e2eid}/devolucao/{id}`: idempotent on (e2eid, id); the sum cannot exceed the Pix value."""
    pix = SandboxPix.objects.select_for_update().filter(end_to_end_id=e2eid).first()
    if pix is None:
        raise SandboxError(404, "PixNaoEncontrado", f"pix {e2eid} not found")
    existing = pix.refunds.filter(refund_id=refund_id).first()
    if existing is not None:
        return existing
    try:
        amount = decimal_to_cents(body.get("valor"))
    except ValueError as exc:
        raise SandboxError(400, "DevolucaoPayloadInvalido", str(exc)) from exc
    refunded = sum(r.amount for r in pix.refunds.exclude(status=SandboxRefund.Status.NAO_REALIZADO))
    if amount <= 0 or refunded + amount > pix.amount:
        raise SandboxError(409, "DevolucaoOperacaoInvalida", "refunds would exceed the Pix value")
    now = timezone.now()
    refund = SandboxRefund.objects.create(
        pix=pix,
        refund_id=refund_id,
        rtr_id=_e2e("D", now),
        amount=amount,
        natureza=str(body.get("natureza", "ORIGINAL")),
        descricao=str(body.get("descricao", ""))[:140],
        solicitacao=now,
    )
    if getattr(settings, "PIX_SANDBOX_REFUND_AUTOSETTLE", True):
        return refund_settle(e2eid=e2eid, refund_id=refund_id, status=SandboxRefund.Status.DEVOLVIDO)
    return refund


def get_refund(*, e2eid: str, refund_id: str) -> SandboxRefund:
    refund = SandboxRefund.objects.filter(pix__end_to_end_id=e2eid, refund_id=refund_id).first()
    if refund is None:
        raise SandboxError(404, "DevolucaoNaoEncontrada", f"devolucao {refund_id} of {e2eid} not found")
    return refund


@transaction.atomic
def refund_settle(*, e2eid: str, refund_id: str, status: str) -> SandboxRefund:
    """Finish a devolução (DEVOLVIDO | NAO_REALIZADO) and notify; releases a held payment notice after it."""
    if status not in {SandboxRefund.Status.DEVOLVIDO, SandboxRefund.Status.NAO_REALIZADO}:
        raise SandboxError(400, "ParametroInvalido", "status must be DEVOLVIDO or NAO_REALIZADO")
    refund = (
        SandboxRefund.objects.select_for_update()
        .select_related("pix")
        .filter(pix__end_to_end_id=e2eid, refund_id=refund_id)
        .first()
    )
    if refund is None:
        raise SandboxError(404, "DevolucaoNaoEncontrada", f"devolucao {refund_id} of {e2eid} not found")
    if refund.status != SandboxRefund.Status.EM_PROCESSAMENTO:
        return refund  # final states never change
    refund.status = status
    refund.liquidacao = timezone.now() if status == SandboxRefund.Status.DEVOLVIDO else None
    refund.motivo = "" if status == SandboxRefund.Status.DEVOLVIDO else "Devolução recusada pelo sandbox"
    refund.save(update_fields=["status", "liquidacao", "motivo"])
    pix = refund.pix
    schedule_delivery([pix_item(pix)])
    if pix.hold_notice:
        # refund_first fault: the plain payment notice arrives only after the refund outcome.
        pix.hold_notice = False
        pix.save(update_fields=["hold_notice"])
        schedule_delivery([pix_item(pix, with_refunds=False)])
    return refund


def list_received(*, start: datetime, end: datetime) -> list[dict[str, Any]]:
    return [pix_item(pix) for pix in SandboxPix.objects.filter(horario__gte=start, horario__lt=end).order_by("horario")]


def schedule_delivery(items: list[dict[str, Any]], *, delay_s: int = 0) -> None:
    """Queue one signed POST of `{"pix": items}` to our webhook URL after this transaction commits."""
    body = json.dumps({"pix": items}, separators=(",", ":"), ensure_ascii=False)
    enqueue_on_commit("payments.sandbox.deliver_webhook", body, countdown=delay_s or None)
