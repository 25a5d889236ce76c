"""Parcelamento: the installment plans of one amount, in integer centavos (no floats anywhere).

The rules, written down once (README "Parcelamento" and the table of exact cases in
tests/payments/test_installments.py):

- **Up to N installments without interest** (`interest_free`): the total is the amount itself. Every
  installment is `amount // n`; the remainder (`amount % n`, fewer than n centavos) is added to the
  **first** installment, so the installments sum to the amount exactly. R$ 100,00 in 3x is
  R$ 33,34 + R$ 33,33 + R$ 33,33. A one-line offer ("ou 3x de R$ 33,34 sem juros") names the largest
  installment, never less than the buyer pays; the checkout selector shows both values.
- **Above N, with interest** at the monthly rate `i` (basis points: 199 = 1,99 % a.m.), the Price table
  (French amortization, compound interest): PMT = PV · i / (1 − (1 + i)^−n), computed exactly with
  fractions and rounded **half up** to the centavo. All n installments are that PMT; the total is
  `n × PMT` and the interest is `total − amount` (a fee line on the checkout, so the charge always
  matches the total).
- **Minimum installment** (`min_installment`): a plan of n > 1 exists only when its smallest
  installment is at least this value. 1x always exists.
- **Maximum** (`max_installments`, 1…24): no plan above it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

MAX_ALLOWED = 24


@dataclass(frozen=True)
class InstallmentPolicy:
    """A shop's plan (StoreSettings): the defaults offer 12x without interest, at least R$ 5,00 each."""

    max_installments: int = 12
    interest_free: int = 12
    monthly_rate_bp: int = 199  # basis points a month, used above `interest_free`
    min_installment: int = 500  # centavos

    def __post_init__(self) -> None:
        if not 1 <= self.max_installments <= MAX_ALLOWED:
            raise ValueError(f"max_installments must be 1..{MAX_ALLOWED}")
        if not 1 <= self.interest_free <= MAX_ALLOWED:
            raise ValueError(f"interest_free must be 1..{MAX_ALLOWED}")
        if self.monthly_rate_bp < 0 or self.min_installment < 0:
            raise ValueError("monthly_rate_bp and min_installment must not be negative")


@dataclass(frozen=True)
class Installment:
    count: int
    installment: int  # every installment but the first (and the first, when there is no remainder)
    first: int  # the first installment (carries the remainder cent(s) of an interest-free plan)
    total: int
    interest: int  # total − amount; 0 without interest
    interest_free: bool

    @property
    def has_remainder(self) -> bool:
        return self.first != self.installment


def price_table_installment(amount: int, count: int, rate_bp: int) -> int:
    """PMT of the Price table, exact rational arithmetic, rounded half up to the centavo."""
    if rate_bp == 0:
        return -(-amount // count)  # no rate: the ceiling keeps the total at or above the amount
    rate = Fraction(rate_bp, 10_000)
    factor = (1 + rate) ** count
    pmt = Fraction(amount) * rate * factor / (factor - 1)
    return int(pmt + Fraction(1, 2))  # half up (pmt > 0)


def plan_for(amount: int, count: int, policy: InstallmentPolicy) -> Installment | None:
    """The plan of `count` installments for `amount` centavos, or None when the policy does not offer it."""
    if amount <= 0 or not 1 <= count <= policy.max_installments:
        return None
    if count <= policy.interest_free:
        regular, remainder = divmod(amount, count)
        plan = Installment(count, regular, regular + remainder, amount, 0, True)
    else:
        pmt = price_table_installment(amount, count, policy.monthly_rate_bp)
        plan = Installment(count, pmt, pmt, pmt * count, pmt * count - amount, pmt * count == amount)
    if count > 1 and plan.installment < policy.min_installment:
        return None
    return plan


def plans_for(amount: int, policy: InstallmentPolicy) -> list[Installment]:
    """Every plan offered for `amount`, 1x first."""
    return [plan for count in range(1, policy.max_installments + 1) if (plan := plan_for(amount, count, policy))]


def best_interest_free(amount: int, policy: InstallmentPolicy) -> Installment | None:
    """The longest plan without interest above 1x ("ou 12x de R$ 583,25 sem juros"), or None."""
    free = [plan for plan in plans_for(amount, policy) if plan.interest_free and plan.count > 1]
    return free[-1] if free else None
