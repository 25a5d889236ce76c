"""`SandboxPixPSP`: the PixPSP interface over the sandbox tables, in-process (no HTTP needed).

It produces the Bacen JSON shapes and parses them with the same functions as the HTTP adapter, so
the parsing path is exercised in development and tests too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime

from django.conf import settings

from payments.due import DueTerms
from payments.money import cents_to_decimal
from payments.psp.base import (
    PixPayer,
    PSPCharge,
    PSPNotFound,
    PSPPayment,
    PSPRefund,
    PSPRejected,
    charge_from_bacen,
    cob_request_body,
    cobv_request_body,
    payment_from_bacen,
    refund_from_bacen,
)
from payments.psp.recurring import (
    PayerAccount,
    PSPAuthorizationRequest,
    PSPRecurrence,
    PSPRecurringCharge,
    authorization_request_from_bacen,
    cobr_request_body,
    rec_request_body,
    recurrence_from_bacen,
    recurring_charge_from_bacen,
    solicrec_request_body,
)
from payments.sandbox import bodies, recurring, services


def _call[T](function: Callable[[], T]) -> T:
    try:
        return function()
    except services.SandboxError as exc:
        if exc.status == 404:
            raise PSPNotFound(exc.detail) from exc
        raise PSPRejected(exc.problem(), exc.status) from exc


class SandboxPixPSP:
    def create_charge(
        self,
        *,
        txid: str,
        amount_cents: int,
        expires_in: int,
        payer: PixPayer | None,
        message: str | None,
        extra: list[tuple[str, str]],
    ) -> PSPCharge:
        body = cob_request_body(pix_key=settings.PIX_KEY, amount_cents=amount_cents, expires_in=expires_in, payer=payer)
        body["solicitacaoPagador"] = (message or "")[:140]
        body["infoAdicionais"] = [{"nome": name, "valor": value} for name, value in extra]
        cob = _call(lambda: services.cob_put(txid=txid, body=body))
        return charge_from_bacen(bodies.cob_body(cob))

    def create_due_charge(
        self,
        *,
        txid: str,
        amount_cents: int,
        terms: DueTerms,
        payer: PixPayer,
        message: str | None,
        extra: list[tuple[str, str]],
    ) -> PSPCharge:
        body = cobv_request_body(pix_key=settings.PIX_KEY, amount_cents=amount_cents, terms=terms, payer=payer)
        body["solicitacaoPagador"] = (message or "")[:140]
        body["infoAdicionais"] = [{"nome": name, "valor": value} for name, value in extra]
        return charge_from_bacen(bodies.cob_body(_call(lambda: services.cobv_put(txid=txid, body=body))))

    def get_charge(self, txid: str, kind: str = "cob") -> PSPCharge:
        return charge_from_bacen(bodies.cob_body(_call(lambda: services.get_cob(txid, kind=kind))))

    def cancel_charge(self, txid: str, kind: str = "cob") -> PSPCharge:
        cob = _call(lambda: services.cob_patch_removed(txid=txid, kind=kind))
        return charge_from_bacen(bodies.cob_body(cob))

    def refund(self, *, e2eid: str, refund_id: str, amount_cents: int, description: str | None) -> PSPRefund:
        body = {"valor": cents_to_decimal(amount_cents), "natureza": "ORIGINAL", "descricao": description or ""}
        refund = _call(lambda: services.refund_put(e2eid=e2eid, refund_id=refund_id, body=body))
        return refund_from_bacen(bodies.refund_body(refund))

    def get_refund(self, e2eid: str, refund_id: str) -> PSPRefund:
        refund = _call(lambda: services.get_refund(e2eid=e2eid, refund_id=refund_id))
        return refund_from_bacen(bodies.refund_body(refund))

    def list_received(self, start: datetime, end: datetime) -> list[PSPPayment]:
        return [payment_from_bacen(item) for item in services.list_received(start=start, end=end)]

    def answer_infraction(self, *, infraction_id: str, accept: bool, justification: str) -> None:
        return None  # the sandbox has no MED analyst: the answer is recorded, nothing is decided by it

    def register_webhook(self, key: str, url: str) -> None:
        # The sandbox always delivers to PIX_SANDBOX_WEBHOOK_URL; nothing to register.
        return None

    # --- Pix Automático: the same bodies and parsers as BacenPixPSP, over payments/sandbox/recurring.py ---------

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
    ) -> PSPRecurrence:
        body = rec_request_body(
            contract=contract, debtor=debtor, description=description, periodicity=periodicity, start=start,
            end=end, amount_cents=amount_cents, retry_policy=retry_policy, minimum_cents=minimum_cents,
        )  # fmt: skip
        return recurrence_from_bacen(_call(lambda: recurring.rec_post(body=body)))

    def get_recurrence(self, id_rec: str) -> PSPRecurrence:
        return recurrence_from_bacen(_call(lambda: recurring.rec_get(id_rec)))

    def cancel_recurrence(self, id_rec: str) -> PSPRecurrence:
        return recurrence_from_bacen(_call(lambda: recurring.rec_cancel(id_rec)))

    def request_authorization(
        self, *, id_rec: str, payer: PayerAccount, expires_at: datetime
    ) -> PSPAuthorizationRequest:
        body = solicrec_request_body(id_rec=id_rec, payer=payer, expires_at=expires_at)
        return authorization_request_from_bacen(_call(lambda: recurring.solicrec_post(body=body)))

    def get_authorization_request(self, id_solic_rec: str) -> PSPAuthorizationRequest:
        return authorization_request_from_bacen(_call(lambda: recurring.solicrec_get(id_solic_rec)))

    def create_recurring_charge(
        self, *, txid: str, id_rec: str, amount_cents: int, due_date: date, info: str = ""
    ) -> PSPRecurringCharge:
        body = cobr_request_body(id_rec=id_rec, amount_cents=amount_cents, due_date=due_date, info=info)
        return recurring_charge_from_bacen(_call(lambda: recurring.cobr_put(txid=txid, body=body)))

    def get_recurring_charge(self, txid: str) -> PSPRecurringCharge:
        return recurring_charge_from_bacen(_call(lambda: recurring.cobr_get(txid)))

    def cancel_recurring_charge(self, txid: str) -> PSPRecurringCharge:
        return recurring_charge_from_bacen(_call(lambda: recurring.cobr_cancel(txid)))

    def retry_recurring_charge(self, txid: str, settlement_date: date) -> PSPRecurringCharge:
        return recurring_charge_from_bacen(_call(lambda: recurring.cobr_retry(txid, settlement_date)))
