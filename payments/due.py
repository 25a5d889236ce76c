"""Pix com vencimento (`cobv`, API Pix): the charge's terms and what is owed on a given day (issue 17).

Terms, as the merchant sets them and as they travel in `PUT /cobv/{txid}` (Bacen API Pix 2.x):

- `dataDeVencimento` (due date) and `validadeAposVencimento` (days the charge can still be paid after it;
  the payer's app refuses it afterwards). Dates are Brasília dates (America/Sao_Paulo).
- `valor.multa` modalidade 2: a fine of `fine_bp` basis points of the original, once, when paid after the
  due date.
- `valor.juros` modalidade 3: simple interest of `interest_bp` basis points **per month**, counted in calendar
  days after the due date (pro rata: month = 30 days).
- `valor.desconto` modalidade 2 (percentual até a data informada): `discount_bp` off when paid on or before
  `discount_until` (one date; optional).

Each component is rounded half to even to the centavo on its own, then summed (payments/money.py); the
payer's PSP computes the same value from the same published terms, and settlement accepts exactly it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from payments.money import half_even

BRASILIA = ZoneInfo("America/Sao_Paulo")
MAX_VALIDITY_DAYS = 365


@dataclass(frozen=True)
class DueTerms:
    due_date: date
    validity_days: int = 30  # validadeAposVencimento
    fine_bp: int = 0  # multa, % of the original (modalidade 2)
    interest_bp: int = 0  # juros, % a month, calendar days (modalidade 3)
    discount_bp: int = 0  # desconto, % off until `discount_until` (modalidade 2)
    discount_until: date | None = None

    def __post_init__(self) -> None:
        if not self.discount_bp:  # no discount, no date: the cobv body carries none, so equal terms compare equal
            object.__setattr__(self, "discount_until", None)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["due_date"] = self.due_date.isoformat()
        data["discount_until"] = self.discount_until.isoformat() if self.discount_until else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DueTerms:
        until = data.get("discount_until")
        return cls(
            due_date=date.fromisoformat(data["due_date"]),
            validity_days=int(data.get("validity_days", 30)),
            fine_bp=int(data.get("fine_bp", 0)),
            interest_bp=int(data.get("interest_bp", 0)),
            discount_bp=int(data.get("discount_bp", 0)),
            discount_until=date.fromisoformat(until) if until else None,
        )

    def problems(self) -> list[tuple[str, str]]:
        """(field, message) for terms the API Pix would refuse; empty when valid."""
        found = []
        if not 0 <= self.validity_days <= MAX_VALIDITY_DAYS:
            found.append(("validity_days", f"must be 0..{MAX_VALIDITY_DAYS} days"))
        for name in ("fine_bp", "interest_bp", "discount_bp"):
            if not 0 <= getattr(self, name) <= 10_000:
                found.append((name, "must be 0..100 % (0..10000 basis points)"))
        if self.discount_bp and (self.discount_until is None or self.discount_until > self.due_date):
            found.append(("discount_until", "a discount needs a date on or before the due date"))
        return found

    @property
    def expires_at(self) -> datetime:
        """The first instant the charge can no longer be paid: the end of the last day of validity (Brasília)."""
        last_day = self.due_date + timedelta(days=self.validity_days)
        return datetime.combine(last_day + timedelta(days=1), time.min, tzinfo=BRASILIA)


@dataclass(frozen=True)
class AmountDue:
    original: int
    fine: int
    interest: int
    discount: int
    overdue_days: int

    @property
    def total(self) -> int:
        return self.original + self.fine + self.interest - self.discount


def local_date(moment: datetime) -> date:
    return moment.astimezone(BRASILIA).date()


def amount_due(original: int, terms: DueTerms, on: date) -> AmountDue:
    """What a `cobv` of `original` centavos costs when paid on `on` (a Brasília date)."""
    overdue = max(0, (on - terms.due_date).days)
    fine = half_even(original * terms.fine_bp, 10_000) if overdue else 0
    interest = half_even(original * terms.interest_bp * overdue, 30 * 10_000) if overdue else 0
    discount = 0
    if terms.discount_bp and terms.discount_until is not None and on <= terms.discount_until:
        discount = min(half_even(original * terms.discount_bp, 10_000), original - 1)
    return AmountDue(original=original, fine=fine, interest=interest, discount=discount, overdue_days=overdue)
