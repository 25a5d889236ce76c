"""Reads of a MED dispute: what the disputed Pix had already refunded, and what left the account twice."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Sum

from payments.med.models import PixInfraction
from payments.models import PixRefund


@dataclass(frozen=True)
class InfractionMoney:
    refunded: int  # centavos already sent back by devoluções of the disputed Pix (done or under way)
    excess: int  # centavos the MED returned beyond what was left of the Pix: they left the account twice


def infraction_money(infraction: PixInfraction) -> InfractionMoney:
    """The devoluções of the disputed Pix (not failed) and, once the MED returned money, the excess."""
    if infraction.payment_id is None:
        return InfractionMoney(refunded=0, excess=0)
    refunded = (
        PixRefund.objects.filter(payment_id=infraction.payment_id)
        .exclude(status=PixRefund.Status.FAILED)
        .aggregate(total=Sum("amount"))["total"]
        or 0
    )
    paid = infraction.payment.amount if infraction.payment else 0
    excess = max(0, infraction.returned_amount - max(0, paid - refunded))
    return InfractionMoney(refunded=int(refunded), excess=excess)


@dataclass(frozen=True)
class DisputesInProgress:
    count: int
    amount: int  # centavos the PSP holds (bloqueio cautelar) while the disputes are open or answered


def disputes_in_progress() -> DisputesInProgress:
    """The disputes not closed yet and the money they hold: the "how much is blocked?" of the month's close.
    One query."""
    row = PixInfraction.objects.filter(status__in=(PixInfraction.Status.OPEN, PixInfraction.Status.ANSWERED)).aggregate(
        count=Count("id"), amount=Sum("amount")
    )
    return DisputesInProgress(count=int(row["count"] or 0), amount=int(row["amount"] or 0))
