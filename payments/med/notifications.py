"""The PSP's MED notifications at the boundary: the webhook body read into `MedNotification` (centavos, aware times).

Bacen's MED lives in the DICT API between the payer's and the receiver's institutions: an *infraction report*
(`InfractionReport`: key, `endToEndId` of the disputed Pix, status OPEN → ACKNOWLEDGED → CLOSED or CANCELLED, situation
SCAM/ACCOUNT_TAKEOVER/COERCION/FRAUDULENT_ACCESS/OTHER/UNKNOWN, details, `analysisResult` AGREED/DISAGREED) and, once
agreed, a *refund request* (`RefundRequest`: requested and refunded amounts, status OPEN/CLOSED/CANCELLED,
`refundAnalysisResult` TOTALLY_ACCEPTED/PARTIALLY_ACCEPTED/REJECTED). The receiver's PSP forwards both to its client
by webhook; this reads the snake_case JSON in which PSPs forward them (QI Tech's "Receive Infraction Report" and
"Receive Refund Request" webhooks, https://docs.qitech.com.br/documentation/pix/med/recebimento_pedidos_de_devolucao,
Pismo's `pix-dict` infraction/refund status events — the same DICT fields):

    {"key": "<event id, the same on every re-delivery>", "event_datetime": "2026-02-10T12:00:00Z",
     "webhook_type": "infraction_report" | "refund_request",
     "data": {"infraction_report_key": "…", "end_to_end_id": "E…", "infraction_report_status": "acknowledged",
              "infraction_report_situation": "scam", "infraction_report_details": "…",
              "analysis_result": null | "agreed" | "disagreed", "analysis_details": "…",
              // refund_request only:
              "refund_request_key": "…", "refund_request_status": "open" | "closed" | "cancelled",
              "requested_amount": 40.00, "refunded_amount": 0, "analysis_result": "totally_accepted" | …}}

Anything else is a `ValueError` naming the member (answered 400, nothing stored).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

KINDS = ("infraction_report", "refund_request")
INFRACTION_STATUSES = ("open", "acknowledged", "closed", "cancelled")
REFUND_STATUSES = ("open", "closed", "cancelled")
ANALYSIS = ("agreed", "disagreed", "totally_accepted", "partially_accepted", "rejected")
_E2E = re.compile(r"^[EeDd][0-9]{8}[0-9]{12}[A-Za-z0-9]{11}$")


@dataclass(frozen=True)
class MedNotification:
    event_key: str
    kind: str  # infraction_report | refund_request
    psp_id: str  # the infraction report's key (a refund request names its infraction)
    end_to_end_id: str
    status: str
    at: datetime
    situation: str = ""
    details: str = ""
    analysis_result: str = ""
    analysis_details: str = ""
    requested_amount: int | None = None
    refunded_amount: int | None = None


def _text(data: dict[str, Any], key: str, *, required: bool = False, max_length: int = 2000) -> str:
    value = data.get(key)
    if value is None or value == "":
        if required:
            raise ValueError(f"data.{key} ausente")
        return ""
    if not isinstance(value, str) or len(value) > max_length:
        raise ValueError(f"data.{key} inválido")
    return value


def _cents(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"data.{key} inválido")
    try:
        amount = Decimal(str(value))
    except InvalidOperation as exc:
        raise ValueError(f"data.{key} inválido") from exc
    cents = amount * 100
    if not amount.is_finite() or amount < 0 or cents != cents.to_integral_value():
        raise ValueError(f"data.{key} inválido")
    return int(cents)


def _time(text: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError("event_datetime inválido") from exc
    if moment.tzinfo is None:
        raise ValueError("event_datetime sem fuso horário")
    return moment.astimezone(UTC)


def parse_notification(body: Any) -> MedNotification:
    if not isinstance(body, dict) or not isinstance(body.get("data"), dict):
        raise ValueError("corpo sem data")
    key = body.get("key")
    if not isinstance(key, str) or not 1 <= len(key) <= 64:
        raise ValueError("key ausente ou inválida")
    kind = body.get("webhook_type")
    if kind not in KINDS:
        raise ValueError(f"webhook_type desconhecido: {kind!r}")
    data = body["data"]
    e2e = _text(data, "end_to_end_id", required=True, max_length=32)
    if not _E2E.match(e2e):
        raise ValueError("data.end_to_end_id inválido")
    status_key = "infraction_report_status" if kind == "infraction_report" else "refund_request_status"
    status = _text(data, status_key, required=True, max_length=16).lower()
    if status not in (INFRACTION_STATUSES if kind == "infraction_report" else REFUND_STATUSES):
        raise ValueError(f"data.{status_key} desconhecido: {status!r}")
    analysis = _text(data, "analysis_result", max_length=32).lower()
    if analysis and analysis not in ANALYSIS:
        raise ValueError(f"data.analysis_result desconhecido: {analysis!r}")
    return MedNotification(
        event_key=key,
        kind=kind,
        psp_id=_text(data, "infraction_report_key", required=True, max_length=64),
        end_to_end_id=e2e,
        status=status,
        at=_time(body.get("event_datetime")),
        situation=_text(data, "infraction_report_situation", max_length=32).lower(),
        details=_text(data, "infraction_report_details") or _text(data, "refund_request_details"),
        analysis_result=analysis,
        analysis_details=_text(data, "analysis_details"),
        requested_amount=_cents(data, "requested_amount"),
        refunded_amount=_cents(data, "refunded_amount"),
    )
