"""Sandbox PSP, Pix Automático: `/rec`, `/solicrec` and `/cobr/{txid}` played in-process over `SandboxRecord`.

Shapes from Bacen's API Pix OpenAPI 2.9.0 (github.com/bacen/pix-api `openapi.yaml`: `RecGerada`,
`SolicRecCompleta`, `CobRGerada`, `RecEncerramento`, `recWebhookNotification1`), the same the fake Bacen of the
tests serves. `authorize` and `payer_cancel` play the payer's bank app and notify our `/rec` webhook through the
sandbox delivery task (signed like every sandbox delivery), after commit.
"""

from __future__ import annotations

import json
import secrets
import string
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils import timezone

from kernel.tasks import enqueue_on_commit
from payments.merchant import pix_merchant
from payments.money import decimal_to_cents
from payments.sandbox.models import SandboxPix, SandboxRecord
from payments.sandbox.services import ISPB, SandboxError

_ALNUM = string.ascii_letters + string.digits
_ENDED = ("CANCELADA", "REJEITADA", "EXPIRADA")


def _now() -> str:
    return timezone.now().isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _id(prefix: str) -> str:
    # 2 letters + ISPB (8) + yyyyMMdd + 11 random alphanumerics = 29 (RecId / SolicRecId formation rules).
    return f"{prefix}{ISPB}{timezone.now():%Y%m%d}{''.join(secrets.choice(_ALNUM) for _ in range(11))}"


def _get(kind: str, key: str, *, lock: bool = False) -> SandboxRecord:
    queryset = SandboxRecord.objects.select_for_update() if lock else SandboxRecord.objects
    record = queryset.filter(kind=kind, key=key).first()
    if record is None:
        name = {"rec": "RecNaoEncontrado", "solicrec": "SolicRecNaoEncontrada", "cobr": "CobRNaoEncontrada"}[kind]
        raise SandboxError(404, name, f"{kind} {key} not found")
    return record


def rec_post(*, body: dict[str, Any]) -> dict[str, Any]:
    vinculo = body.get("vinculo") or {}
    if not vinculo.get("contrato") or not (vinculo.get("devedor") or {}).get("nome"):
        raise SandboxError(400, "RecPayloadInvalido", "vinculo.contrato e vinculo.devedor.nome são obrigatórios")
    id_rec = _id("RR" if body.get("politicaRetentativa") == "PERMITE_3R_7D" else "RN")
    rec = {
        "idRec": id_rec,
        **{key: body[key] for key in ("vinculo", "calendario", "valor", "politicaRetentativa") if key in body},
        "recebedor": {"nome": pix_merchant()[0]},
        "status": "CRIADA",
        "loc": {"criacao": _now(), "location": f"sandbox.local/qr/v2/rec/{id_rec.lower()}", "idRec": id_rec},
        "atualizacao": [{"status": "CRIADA", "data": _now()}],
    }
    SandboxRecord.objects.create(kind="rec", key=id_rec, body=rec)
    return rec


def rec_get(id_rec: str) -> dict[str, Any]:
    return _get("rec", id_rec).body


def _notify(rec: dict[str, Any]) -> None:
    item = {key: rec[key] for key in ("idRec", "status", "atualizacao", "encerramento") if key in rec}
    # Signed and POSTed to `{webhookUrl}/rec` by the sandbox delivery task, after the PSP side committed.
    enqueue_on_commit("payments.sandbox.deliver_webhook", json.dumps({"recs": [item]}), "rec")


@transaction.atomic
def _rec_end(id_rec: str, *, requester: str, code: str, notify: bool) -> dict[str, Any]:
    record = _get("rec", id_rec, lock=True)
    if record.body["status"] in _ENDED:
        raise SandboxError(400, "RecOperacaoInvalida", f"recorrência {record.body['status']}")
    record.body["status"] = "CANCELADA"
    record.body["encerramento"] = {
        "cancelamento": {"solicitante": requester, "codigo": code, "descricao": "cancelada no sandbox"}
    }
    record.body["atualizacao"].append({"status": "CANCELADA", "data": _now()})
    record.save(update_fields=["body"])
    if notify:
        _notify(record.body)
    return record.body


def rec_cancel(id_rec: str) -> dict[str, Any]:
    """`PATCH /rec/{idRec}` `status: CANCELADA` by the receiver (us): answered, not notified."""
    return _rec_end(id_rec, requester="USUARIO_RECEBEDOR", code="SLCR", notify=False)


def payer_cancel(id_rec: str) -> dict[str, Any]:
    """The payer cancels in the bank app: the PSP notifies the receiver's `/rec` webhook."""
    return _rec_end(id_rec, requester="USUARIO_PAGADOR", code="ACCL", notify=True)


@transaction.atomic
def authorize(id_rec: str) -> dict[str, Any]:
    """The payer authorizes in the bank app ("Autorizar no sandbox"): CRIADA → APROVADA, notified."""
    record = _get("rec", id_rec, lock=True)
    if record.body["status"] != "CRIADA":
        raise SandboxError(400, "RecOperacaoInvalida", f"recorrência {record.body['status']}")
    record.body["status"] = "APROVADA"
    record.body["atualizacao"].append({"status": "APROVADA", "data": _now()})
    record.save(update_fields=["body"])
    _notify(record.body)
    return record.body


def solicrec_post(*, body: dict[str, Any]) -> dict[str, Any]:
    rec = rec_get(str(body.get("idRec", "")))
    if rec["status"] != "CRIADA" or not (body.get("destinatario") or {}).get("ispbParticipante"):
        raise SandboxError(400, "SolicRecOperacaoInvalida", "recorrência não está CRIADA ou falta destinatario")
    id_solic = _id("SC")
    solic = {
        "idSolicRec": id_solic,
        "idRec": rec["idRec"],
        "calendario": body.get("calendario") or {},
        "status": "CRIADA",
        "destinatario": body["destinatario"],
        "atualizacao": [{"status": "CRIADA", "data": _now()}],
        "recPayload": {key: rec[key] for key in ("idRec", "vinculo", "calendario", "valor") if key in rec},
    }
    SandboxRecord.objects.create(kind="solicrec", key=id_solic, body=solic)
    return solic


def solicrec_get(id_solic: str) -> dict[str, Any]:
    return _get("solicrec", id_solic).body


@transaction.atomic
def cobr_put(*, txid: str, body: dict[str, Any]) -> dict[str, Any]:
    rec = rec_get(str(body.get("idRec", "")))
    if rec["status"] != "APROVADA":
        raise SandboxError(400, "CobROperacaoInvalida", "recorrência inexistente ou não aprovada")
    existing = SandboxRecord.objects.select_for_update().filter(kind="cobr", key=txid).first()
    if existing is not None:  # a replay of the same PUT answers the same charge
        if existing.body["valor"] != body.get("valor"):
            raise SandboxError(400, "CobROperacaoInvalida", "txid já usado com outro valor")
        return existing.body
    problem = _value_problem(rec.get("valor") or {}, body.get("valor") or {})
    if problem:
        raise SandboxError(400, "CobRValorInvalido", problem)
    cobr = {
        "idRec": rec["idRec"],
        "txid": txid,
        "calendario": {"criacao": timezone.now().date().isoformat(), **(body.get("calendario") or {})},
        "valor": body.get("valor"),
        "status": "CRIADA",
        "politicaRetentativa": rec.get("politicaRetentativa", "NAO_PERMITE"),
        "ajusteDiaUtil": bool(body.get("ajusteDiaUtil")),
        "atualizacao": [{"status": "CRIADA", "data": _now()}],
        **({"infoAdicional": body["infoAdicional"]} if "infoAdicional" in body else {}),
    }
    SandboxRecord.objects.create(kind="cobr", key=txid, body=cobr)
    return cobr


def _value_problem(rec_valor: dict[str, Any], cobr_valor: dict[str, Any]) -> str:
    """As the PSPs apply Bacen's rule: a fixed recurrence (`valorRec`) is charged exactly that value; a variable
    one at least its `valorMinimoRecebedor` (the payer's own limit is checked by the payer's PSP, not here)."""
    try:
        original = Decimal(str(cobr_valor.get("original")))
    except InvalidOperation:
        return "valor.original inválido"
    if "valorRec" in rec_valor and original != Decimal(str(rec_valor["valorRec"])):
        return "valor.original difere do valor fixo da recorrência (valorRec)"
    if "valorMinimoRecebedor" in rec_valor and original < Decimal(str(rec_valor["valorMinimoRecebedor"])):
        return "valor.original abaixo do valor mínimo da recorrência (valorMinimoRecebedor)"
    return ""


def cobr_get(txid: str) -> dict[str, Any]:
    return _get("cobr", txid).body


@transaction.atomic
def cobr_cancel(txid: str) -> dict[str, Any]:
    record = _get("cobr", txid, lock=True)
    if record.body["status"] not in ("CRIADA", "ATIVA"):
        raise SandboxError(400, "CobROperacaoInvalida", f"cobrança {record.body['status']}")
    record.body["status"] = "CANCELADA"
    record.body["atualizacao"].append({"status": "CANCELADA", "data": _now()})
    record.save(update_fields=["body"])
    return record.body


def _notify_cobr(cobr: dict[str, Any]) -> None:
    item = {key: cobr[key] for key in ("idRec", "txid", "status", "atualizacao", "tentativas") if key in cobr}
    enqueue_on_commit("payments.sandbox.deliver_webhook", json.dumps({"cobsr": [item]}), "cobr")


def _e2e() -> str:
    return f"E{ISPB}{timezone.now():%Y%m%d%H%M}{''.join(secrets.choice(_ALNUM) for _ in range(11))}"


@transaction.atomic
def cobr_settle(txid: str, *, paid: bool) -> dict[str, Any]:
    """The due date in the sandbox: the scheduled (or retried) attempt is paid → CONCLUIDA, or refused (no funds)
    → the attempt REJEITADA; under NAO_PERMITE, or after the third retry, the charge ends EXPIRADA. Notified."""
    record = _get("cobr", txid, lock=True)
    cobr = record.body
    if cobr["status"] not in ("CRIADA", "ATIVA"):
        raise SandboxError(400, "CobROperacaoInvalida", f"cobrança {cobr['status']}")
    attempts = cobr.setdefault("tentativas", [])
    if not attempts or attempts[-1]["status"] in ("REJEITADA", "EXPIRADA", "CANCELADA"):
        if attempts:
            raise SandboxError(400, "CobROperacaoInvalida", "nenhuma tentativa agendada; peça uma retentativa")
        due = cobr["calendario"].get("dataDeVencimento", timezone.localdate().isoformat())
        attempts.append({"dataLiquidacao": due, "tipo": "AGND", "status": "AGENDADA", "endToEndId": _e2e()})
    attempt = attempts[-1]
    attempt["status"] = "PAGA" if paid else "REJEITADA"
    if paid:
        cobr["status"] = "CONCLUIDA"
        # A Pix the sandbox PSP received, as any paid cob: a devolução of it (`PUT /pix/{e2eid}/devolucao/{id}`)
        # finds it.
        SandboxPix.objects.get_or_create(
            end_to_end_id=attempt["endToEndId"],
            defaults={"txid": txid, "amount": decimal_to_cents(cobr["valor"]["original"]), "horario": timezone.now()},
        )
    elif cobr.get("politicaRetentativa") != "PERMITE_3R_7D" or len(attempts) > 3:
        cobr["status"] = "EXPIRADA"
    else:
        cobr["status"] = "ATIVA"
    cobr["atualizacao"].append({"status": cobr["status"], "data": _now()})
    record.save(update_fields=["body"])
    _notify_cobr(cobr)
    return cobr


@transaction.atomic
def cobr_retry(txid: str, settlement_date: date) -> dict[str, Any]:
    """`POST /cobr/{txid}/retentativa/{data}`: refused as the API refuses it (policy, a pending attempt, a past
    date, beyond 3 retries or 7 days after the due date)."""
    record = _get("cobr", txid, lock=True)
    cobr = record.body
    attempts = cobr.setdefault("tentativas", [])
    due = date.fromisoformat(cobr["calendario"]["dataDeVencimento"])
    if cobr.get("politicaRetentativa") != "PERMITE_3R_7D":
        raise SandboxError(400, "CobROperacaoInvalida", "A política configurada na recorrência não permite retentativa")
    if cobr["status"] != "ATIVA" or (attempts and attempts[-1]["status"] in ("SOLICITADA", "AGENDADA")):
        raise SandboxError(400, "CobROperacaoInvalida", "Existe uma tentativa não finalizada")
    if settlement_date <= timezone.localdate() or settlement_date > due + timedelta(days=7) or len(attempts) > 3:
        raise SandboxError(400, "CobROperacaoInvalida", "data fora da janela de retentativa")
    attempts.append({"dataLiquidacao": settlement_date.isoformat(), "tipo": "RIFL", "status": "SOLICITADA",
                     "endToEndId": _e2e()})  # fmt: skip
    record.save(update_fields=["body"])
    return cobr
