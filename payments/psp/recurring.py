"""Pix Automático at the PSP boundary: the Bacen API Pix recurring resources as value objects and JSON shapes.

Followed: Bacen's API Pix OpenAPI, release 2.9.0 (github.com/bacen/pix-api `openapi.yaml`), paths `/rec`,
`/rec/{idRec}`, `/solicrec`, `/solicrec/{idSolicRec}`, `/cobr/{txid}`, `/webhookrec` (callback `{webhookUrl}/rec`
carrying `{"recs": [RecNotification]}`) and the schemas `RecSolicitada`, `RecCompleta`, `RecStatus`
(CRIADA|APROVADA|REJEITADA|EXPIRADA|CANCELADA), `RecEncerramento` (rejeicao / cancelamento with `solicitante`
PSP_PAGADOR|USUARIO_PAGADOR|PSP_RECEBEDOR|USUARIO_RECEBEDOR), `SolicRecSolicitada`, `SolicRecStatus`,
`CobRSolicitada`, `CobRStatus` and `CobRTentativas`; their examples (`recBody1`, `recResponse1`, `solicRecBody1`,
`cobRBody1`, `recWebhookNotification1`, `cobRWebhookNotification1`) are the wire shape matched here. Cycle charges:
`PUT /cobr/{txid}` (`CobRSolicitada`), their notices at `{webhookUrl}/cobr` (registered with `PUT /webhookcobr`,
body `{"cobsr": [CobRNotification]}`), and `POST /cobr/{txid}/retentativa/{data}` (a retry of a failed attempt,
allowed only under `politicaRetentativa` PERMITE_3R_7D).

Rules of Pix Automático followed (Regulamento Pix, Resolução BCB nº 402/2024, and the Manual de Regras do Pix
Automático): the receiver sends each charge (instrução de pagamento) between 10 and 2 days before its due date;
with PERMITE_3R_7D a failed attempt may be retried up to 3 times within the 7 days after the due date, at most
one attempt a day; the payer may cancel the authorization in the bank app at any time (notified by `/rec`).

The rest of the app speaks centavos, dates and English statuses; decimal strings exist only here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol

from payments.money import cents_to_decimal, decimal_to_cents
from payments.psp.base import PixPayer, parse_datetime

REC_STATUSES = {
    "CRIADA": "CREATED",
    "APROVADA": "APPROVED",
    "REJEITADA": "REJECTED",
    "EXPIRADA": "EXPIRED",
    "CANCELADA": "CANCELLED",
}
SOLICREC_STATUSES = {
    "CRIADA": "CREATED",
    "ENVIADA": "SENT",
    "RECEBIDA": "RECEIVED",
    "REJEITADA": "REJECTED",
    "ACEITA": "ACCEPTED",
    "EXPIRADA": "EXPIRED",
    "CANCELADA": "CANCELLED",
}
COBR_STATUSES = {
    "CRIADA": "CREATED",
    "ATIVA": "ACTIVE",
    "CONCLUIDA": "COMPLETED",
    "EXPIRADA": "EXPIRED",
    "REJEITADA": "REJECTED",
    "CANCELADA": "CANCELLED",
}
# Our cycle names → `calendario.periodicidade`.
PERIODICITIES = {
    "weekly": "SEMANAL",
    "monthly": "MENSAL",
    "quarterly": "TRIMESTRAL",
    "semiannual": "SEMESTRAL",
    "annual": "ANUAL",
}
# `politicaRetentativa`: no retry after the due date, or up to 3 retries within 7 days.
RETRY_POLICIES = ("NAO_PERMITE", "PERMITE_3R_7D")
# How far ahead of the due date a cycle's charge goes to the PSP (Pix Automático: from 10 to 2 days before).
CHARGE_LEAD_DAYS_MAX = 10
CHARGE_LEAD_DAYS_MIN = 2
# PERMITE_3R_7D: up to 3 retries, within 7 days after the due date, one a day.
MAX_RETRIES = 3
RETRY_WINDOW_DAYS = 7
ID_REC = re.compile(r"^[a-zA-Z0-9]{29}$")
TXID = re.compile(r"^[a-zA-Z0-9]{26,35}$")


@dataclass(frozen=True)
class PayerAccount:
    """`destinatario` of a solicitação (Jornada 1): the payer's account at their PSP, where the request goes."""

    tax_id: str  # CPF (11) or CNPJ (14)
    ispb: str  # 8 characters
    branch: str = ""  # agencia
    account: str = ""  # conta


@dataclass(frozen=True)
class Cancellation:
    requester: str  # PSP_PAGADOR | USUARIO_PAGADOR | PSP_RECEBEDOR | USUARIO_RECEBEDOR
    code: str  # e.g. ACCL, SLCR
    description: str = ""

    @property
    def by_payer(self) -> bool:
        return self.requester in ("USUARIO_PAGADOR", "PSP_PAGADOR")


@dataclass(frozen=True)
class PSPRecurrence:
    id_rec: str
    status: str  # CREATED | APPROVED | REJECTED | EXPIRED | CANCELLED
    amount_cents: int | None  # None: variable amount (no `valorRec`)
    periodicity: str  # weekly | monthly | …
    start: date | None
    end: date | None
    contract: str
    retry_policy: str
    location: str = ""
    br_code: str = ""  # dadosQR.pixCopiaECola, when the PSP shows one
    cancellation: Cancellation | None = None
    rejection_code: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class PSPAuthorizationRequest:
    """A solicitação de confirmação (`solicrec`): the request sent to the payer's PSP to authorize `id_rec`."""

    id_solic_rec: str
    id_rec: str
    status: str  # CREATED | SENT | RECEIVED | REJECTED | ACCEPTED | EXPIRED | CANCELLED
    expires_at: datetime | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class PSPRecurringAttempt:
    settlement_date: date
    kind: str  # AGND (scheduled) | NTAG (retry, same day) | RIFL (retry after the due date)
    status: str  # SOLICITADA | AGENDADA | PAGA | CANCELADA | REJEITADA | EXPIRADA
    end_to_end_id: str


@dataclass(frozen=True)
class PSPRecurringCharge:
    txid: str
    id_rec: str
    status: str  # CREATED | ACTIVE | COMPLETED | EXPIRED | REJECTED | CANCELLED
    amount_cents: int
    due_date: date
    attempts: tuple[PSPRecurringAttempt, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class RecurrenceNotice:
    """One `recs[]` item of a `/rec` webhook: what changed, to be confirmed with `GET /rec/{idRec}`."""

    id_rec: str
    status: str  # CREATED | APPROVED | …
    cancellation: Cancellation | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class RecurringChargeNotice:
    """One `cobsr[]` item of a `/cobr` webhook: a hint, confirmed with `GET /cobr/{txid}`."""

    txid: str
    id_rec: str
    status: str  # CREATED | ACTIVE | COMPLETED | …
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def charge_outcome(charge: PSPRecurringCharge) -> str:
    """What a confirmed charge means for its cycle: "paid" (CONCLUIDA, a PAGA attempt), "failed" (ended unpaid:
    EXPIRADA / REJEITADA / CANCELADA), "attempt_failed" (still ATIVA, its last attempt refused: a retry may
    follow) or "pending"."""
    if charge.status == "COMPLETED":
        return "paid"
    if charge.status in ("EXPIRED", "REJECTED", "CANCELLED"):
        return "failed"
    if charge.attempts and charge.attempts[-1].status in ("REJEITADA", "EXPIRADA", "CANCELADA"):
        return "attempt_failed"
    return "pending"


def paid_end_to_end_id(charge: PSPRecurringCharge) -> str:
    return next((a.end_to_end_id for a in reversed(charge.attempts) if a.status == "PAGA"), "")


def _notice_items(body: Any, key: str) -> list[tuple[int, dict[str, Any]]]:
    """The objects of a webhook body's `{key: [...]}` array, with their index; ValueError naming what is wrong."""
    if not isinstance(body, dict) or not isinstance(body.get(key), list) or not body[key]:
        raise ValueError(f"body must be an object with a non-empty '{key}' array")
    for index, item in enumerate(body[key]):
        if not isinstance(item, dict):
            raise ValueError(f"{key}[{index}] is not an object")
    return list(enumerate(body[key]))


def parse_recurring_charge_notification(body: Any) -> list[RecurringChargeNotice]:
    """A `/cobr` webhook body `{"cobsr": [...]}` → notices. Raises ValueError naming what is wrong."""
    notices = []
    for index, item in _notice_items(body, "cobsr"):
        txid = item.get("txid")
        if not isinstance(txid, str) or not TXID.match(txid):
            raise ValueError(f"cobsr[{index}].txid is not 26-35 alphanumerics")
        status = COBR_STATUSES.get(str(item.get("status")))
        if status is None:
            raise ValueError(f"cobsr[{index}].status {item.get('status')!r} is unknown")
        notices.append(RecurringChargeNotice(txid=txid, id_rec=str(item.get("idRec", "")), status=status, raw=item))
    return notices


def _debtor(payer: PixPayer) -> dict[str, str]:
    digits = "".join(ch for ch in payer.tax_id if ch.isalnum())
    key = "cpf" if len(digits) == 11 else "cnpj"
    return {key: digits, "nome": payer.name[:140]}


def rec_request_body(
    *,
    contract: str,
    debtor: PixPayer,
    description: str,
    periodicity: str,
    start: date,
    end: date | None,
    amount_cents: int | None,
    retry_policy: str,
    minimum_cents: int | None = None,
) -> dict[str, Any]:
    """`POST /rec` body (`RecSolicitada`). A fixed amount goes as `valor.valorRec`; a variable one (no
    `valorRec`) may name `valor.valorMinimoRecebedor`, the least the payer's limit may be; `objeto` is at most 35."""
    if amount_cents is not None and minimum_cents is not None:
        raise ValueError("a recurrence has a fixed amount or a minimum, not both")
    if periodicity not in PERIODICITIES:
        raise ValueError(f"unknown periodicity {periodicity!r}")
    if retry_policy not in RETRY_POLICIES:
        raise ValueError(f"unknown retry policy {retry_policy!r}")
    calendar: dict[str, str] = {"dataInicial": start.isoformat(), "periodicidade": PERIODICITIES[periodicity]}
    if end is not None:
        calendar["dataFinal"] = end.isoformat()
    body: dict[str, Any] = {
        "vinculo": {"contrato": contract[:35], "devedor": _debtor(debtor), "objeto": description[:35]},
        "calendario": calendar,
        "politicaRetentativa": retry_policy,
    }
    if amount_cents is not None:
        body["valor"] = {"valorRec": cents_to_decimal(amount_cents)}
    elif minimum_cents is not None:
        body["valor"] = {"valorMinimoRecebedor": cents_to_decimal(minimum_cents)}
    return body


def _date(value: Any) -> date | None:
    return date.fromisoformat(value) if isinstance(value, str) and value else None


def _cancellation(body: dict[str, Any]) -> tuple[Cancellation | None, str]:
    closing = body.get("encerramento") or {}
    cancel = closing.get("cancelamento")
    reject = closing.get("rejeicao") or {}
    found = None
    if isinstance(cancel, dict):
        found = Cancellation(
            requester=str(cancel.get("solicitante", "")),
            code=str(cancel.get("codigo", "")),
            description=str(cancel.get("descricao", "")),
        )
    return found, str(reject.get("codigo", "")) if isinstance(reject, dict) else ""


def recurrence_from_bacen(body: Any) -> PSPRecurrence:
    """`RecGerada` / `RecCompleta` → PSPRecurrence. Raises ValueError on a body we must not use."""
    if not isinstance(body, dict):
        raise ValueError("rec body is not an object")
    id_rec = body.get("idRec")
    if not isinstance(id_rec, str) or not ID_REC.match(id_rec):
        raise ValueError(f"idRec {id_rec!r} is not 29 alphanumerics")
    status = REC_STATUSES.get(str(body.get("status")))
    if status is None:
        raise ValueError(f"unknown rec status {body.get('status')!r}")
    calendar = body.get("calendario") or {}
    periodicity = {v: k for k, v in PERIODICITIES.items()}.get(str(calendar.get("periodicidade")), "")
    valor = (body.get("valor") or {}).get("valorRec")
    cancellation, rejection = _cancellation(body)
    return PSPRecurrence(
        id_rec=id_rec,
        status=status,
        amount_cents=decimal_to_cents(valor) if isinstance(valor, str) else None,
        periodicity=periodicity,
        start=_date(calendar.get("dataInicial")),
        end=_date(calendar.get("dataFinal")),
        contract=str((body.get("vinculo") or {}).get("contrato", "")),
        retry_policy=str(body.get("politicaRetentativa", "")),
        location=str((body.get("loc") or {}).get("location", "")),
        br_code=str((body.get("dadosQR") or {}).get("pixCopiaECola", "")),
        cancellation=cancellation,
        rejection_code=rejection,
        raw=body,
    )


def solicrec_request_body(*, id_rec: str, payer: PayerAccount, expires_at: datetime) -> dict[str, Any]:
    """`POST /solicrec` body (`SolicRecSolicitada`, example `solicRecBody1`)."""
    destination: dict[str, str] = {"ispbParticipante": payer.ispb}
    if payer.branch:
        destination["agencia"] = payer.branch
    if payer.account:
        destination["conta"] = payer.account
    destination["cpf" if len(payer.tax_id) == 11 else "cnpj"] = payer.tax_id
    stamp = expires_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {"idRec": id_rec, "calendario": {"dataExpiracaoSolicitacao": stamp}, "destinatario": destination}


def authorization_request_from_bacen(body: Any) -> PSPAuthorizationRequest:
    if not isinstance(body, dict) or not isinstance(body.get("idSolicRec"), str):
        raise ValueError("solicrec body without idSolicRec")
    status = SOLICREC_STATUSES.get(str(body.get("status")))
    if status is None:
        raise ValueError(f"unknown solicrec status {body.get('status')!r}")
    expiry = (body.get("calendario") or {}).get("dataExpiracaoSolicitacao")
    return PSPAuthorizationRequest(
        id_solic_rec=body["idSolicRec"],
        id_rec=str(body.get("idRec", "")),
        status=status,
        expires_at=parse_datetime(expiry, field_name="dataExpiracaoSolicitacao") if isinstance(expiry, str) else None,
        raw=body,
    )


def cobr_request_body(*, id_rec: str, amount_cents: int, due_date: date, info: str) -> dict[str, Any]:
    """`PUT /cobr/{txid}` body (`CobRSolicitada`): the cycle's charge, sent ahead of its due date."""
    body: dict[str, Any] = {
        "idRec": id_rec,
        "calendario": {"dataDeVencimento": due_date.isoformat()},
        "valor": {"original": cents_to_decimal(amount_cents)},
        # A due date on a weekend or holiday moves to the next business day instead of failing.
        "ajusteDiaUtil": True,
    }
    if info:
        body["infoAdicional"] = info[:140]
    return body


def recurring_charge_from_bacen(body: Any) -> PSPRecurringCharge:
    if not isinstance(body, dict):
        raise ValueError("cobr body is not an object")
    txid = body.get("txid")
    if not isinstance(txid, str) or not TXID.match(txid):
        raise ValueError(f"txid {txid!r} is not 26-35 alphanumerics")
    status = COBR_STATUSES.get(str(body.get("status")))
    if status is None:
        raise ValueError(f"unknown cobr status {body.get('status')!r}")
    due = _date((body.get("calendario") or {}).get("dataDeVencimento"))
    original = (body.get("valor") or {}).get("original")
    if due is None or not isinstance(original, str):
        raise ValueError("cobr body without calendario.dataDeVencimento or valor.original")
    attempts = tuple(
        PSPRecurringAttempt(
            settlement_date=date.fromisoformat(item["dataLiquidacao"]),
            kind=str(item.get("tipo", "")),
            status=str(item.get("status", "")),
            end_to_end_id=str(item.get("endToEndId", "")),
        )
        for item in body.get("tentativas") or []
    )
    return PSPRecurringCharge(
        txid=txid,
        id_rec=str(body.get("idRec", "")),
        status=status,
        amount_cents=decimal_to_cents(original),
        due_date=due,
        attempts=attempts,
        raw=body,
    )


def parse_recurrence_notification(body: Any) -> list[RecurrenceNotice]:
    """A `/rec` webhook body `{"recs": [...]}` → notices. Raises ValueError naming what is wrong."""
    notices = []
    for index, item in _notice_items(body, "recs"):
        id_rec = item.get("idRec")
        if not isinstance(id_rec, str) or not ID_REC.match(id_rec):
            raise ValueError(f"recs[{index}].idRec is not 29 alphanumerics")
        status = REC_STATUSES.get(str(item.get("status")))
        if status is None:
            raise ValueError(f"recs[{index}].status {item.get('status')!r} is unknown")
        cancellation, _ = _cancellation(item)
        notices.append(RecurrenceNotice(id_rec=id_rec, status=status, cancellation=cancellation, raw=item))
    return notices


class RecurringPixPSP(Protocol):
    """Pix Automático at a PSP: `BacenPixPSP` over HTTP, `SandboxPixPSP` in-process."""

    def create_recurrence(
        self,
        *,
        contract: str,
        debtor: PixPayer,
        description: str,
        periodicity: str,
        start: date,
        end: date | None = None,
        amount_cents: int | None,
        retry_policy: str = "NAO_PERMITE",
        minimum_cents: int | None = None,
    ) -> PSPRecurrence: ...  # POST /rec

    def get_recurrence(self, id_rec: str) -> PSPRecurrence: ...  # GET /rec/{idRec}

    def cancel_recurrence(self, id_rec: str) -> PSPRecurrence: ...  # PATCH /rec/{idRec} CANCELADA

    def request_authorization(
        self, *, id_rec: str, payer: PayerAccount, expires_at: datetime
    ) -> PSPAuthorizationRequest: ...  # POST /solicrec

    def get_authorization_request(self, id_solic_rec: str) -> PSPAuthorizationRequest: ...

    def create_recurring_charge(
        self, *, txid: str, id_rec: str, amount_cents: int, due_date: date, info: str = ""
    ) -> PSPRecurringCharge: ...  # PUT /cobr/{txid}

    def get_recurring_charge(self, txid: str) -> PSPRecurringCharge: ...

    def cancel_recurring_charge(self, txid: str) -> PSPRecurringCharge: ...

    def retry_recurring_charge(self, txid: str, settlement_date: date) -> PSPRecurringCharge: ...

    # POST /cobr/{txid}/retentativa/{data}
