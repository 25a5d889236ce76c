"""The sandbox PSP's responses in the Bacen API Pix shapes (cob/cobv, pix items, devoluções).

Rendering only: `services` changes the sandbox rows, these functions say how the PSP presents them.
"""

from __future__ import annotations

from typing import Any

from payments.due import DueTerms
from payments.money import cents_to_decimal
from payments.psp.base import due_terms_from_bacen, format_datetime
from payments.sandbox.models import SandboxCob, SandboxPix, SandboxRefund


def _calendario(cob: SandboxCob) -> dict[str, Any]:
    if cob.kind == "cobv":
        return {
            "criacao": format_datetime(cob.criacao),
            "dataDeVencimento": cob.vencimento.isoformat(),  # type: ignore[union-attr]
            "validadeAposVencimento": cob.validade_apos_vencimento,
        }
    return {"criacao": format_datetime(cob.criacao), "expiracao": cob.expiracao}


def _valor(cob: SandboxCob) -> dict[str, Any]:
    if cob.kind == "cobv":
        return {"original": cents_to_decimal(cob.amount), **cob.regras}
    return {"original": cents_to_decimal(cob.amount), "modalidadeAlteracao": 0}


def due_terms(cob: SandboxCob) -> DueTerms:
    return due_terms_from_bacen(_calendario(cob), _valor(cob))


def cob_body(cob: SandboxCob) -> dict[str, Any]:
    body: dict[str, Any] = {
        "calendario": _calendario(cob),
        "txid": cob.txid,
        "revisao": cob.revisao,
        "location": cob.location,
        "status": cob.status,
        "valor": _valor(cob),
        "chave": cob.chave,
        "pixCopiaECola": cob.br_code,
    }
    if cob.devedor:
        body["devedor"] = cob.devedor
    if cob.solicitacao_pagador:
        body["solicitacaoPagador"] = cob.solicitacao_pagador
    if cob.info_adicionais:
        body["infoAdicionais"] = cob.info_adicionais
    pix = [pix_item(item) for item in cob.pix.order_by("horario", "id")]
    if pix:
        body["pix"] = pix
    return body


def refund_body(refund: SandboxRefund) -> dict[str, Any]:
    horario = {"solicitacao": format_datetime(refund.solicitacao)}
    if refund.liquidacao:
        horario["liquidacao"] = format_datetime(refund.liquidacao)
    body: dict[str, Any] = {
        "id": refund.refund_id,
        "rtrId": refund.rtr_id,
        "valor": cents_to_decimal(refund.amount),
        "natureza": refund.natureza,
        "horario": horario,
        "status": refund.status,
    }
    if refund.descricao:
        body["descricao"] = refund.descricao
    if refund.motivo:
        body["motivo"] = refund.motivo
    return body


def pix_item(pix: SandboxPix, *, with_refunds: bool = True) -> dict[str, Any]:
    item: dict[str, Any] = {
        "endToEndId": pix.end_to_end_id,
        "txid": pix.txid,
        "valor": cents_to_decimal(pix.amount),
        "horario": format_datetime(pix.horario),
    }
    if pix.info_pagador:
        item["infoPagador"] = pix.info_pagador
    refunds = list(pix.refunds.order_by("solicitacao", "id")) if with_refunds else []
    if refunds:
        item["devolucoes"] = [refund_body(refund) for refund in refunds]
    return item
