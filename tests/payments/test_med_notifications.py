"""The MED notification at the PSP boundary (issue 37): the DICT infraction report / refund request fields as the
PSP forwards them, read into centavos and aware times; anything else refused naming the member."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from payments.med.notifications import MedNotification, parse_notification

E2E = "E18236120202612011500s0123456789"


def _body(**data: Any) -> dict[str, Any]:
    base = {"infraction_report_key": "ir-1", "end_to_end_id": E2E, "refund_request_status": "closed",
            "requested_amount": 104.7, "refunded_amount": "104.70", "analysis_result": "TOTALLY_ACCEPTED"}  # fmt: skip
    return {"key": "evt-1", "event_datetime": "2026-12-01T12:00:00-03:00", "webhook_type": "refund_request",
            "data": {**base, **data}}  # fmt: skip


def test_a_refund_request_reads_in_centavos_and_utc() -> None:
    assert parse_notification(_body()) == MedNotification(
        event_key="evt-1", kind="refund_request", psp_id="ir-1", end_to_end_id=E2E, status="closed",
        at=datetime(2026, 12, 1, 15, 0, tzinfo=UTC), analysis_result="totally_accepted",
        requested_amount=10470, refunded_amount=10470,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        ({"end_to_end_id": "E123"}, "data.end_to_end_id inválido"),
        ({"refund_request_status": "aberto"}, "data.refund_request_status desconhecido: 'aberto'"),
        ({"refunded_amount": "1.234"}, "data.refunded_amount inválido"),
        ({"refunded_amount": -1}, "data.refunded_amount inválido"),
        ({"refunded_amount": True}, "data.refunded_amount inválido"),
        ({"infraction_report_key": None}, "data.infraction_report_key ausente"),
        ({"analysis_result": "maybe"}, "data.analysis_result desconhecido: 'maybe'"),
    ],
)
def test_bad_members_are_named(change: dict[str, Any], detail: str) -> None:
    with pytest.raises(ValueError, match="^" + detail.replace("(", r"\(").replace(")", r"\)") + "$"):
        parse_notification(_body(**change))


def test_the_envelope_is_checked() -> None:
    for body, detail in (
        ({**_body(), "webhook_type": "chargeback"}, "webhook_type desconhecido: 'chargeback'"),
        ({**_body(), "key": ""}, "key ausente ou inválida"),
        ({**_body(), "event_datetime": "2026-12-01T12:00:00"}, "event_datetime sem fuso horário"),
        ([], "corpo sem data"),
    ):
        with pytest.raises(ValueError) as refused:
            parse_notification(body)
        assert str(refused.value) == detail
