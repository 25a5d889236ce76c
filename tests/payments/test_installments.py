"""Parcelamento arithmetic in integer centavos: a table of exact cases (payments/installments.py rules)."""

from __future__ import annotations

import pytest

from payments.installments import (
    Installment,
    InstallmentPolicy,
    best_interest_free,
    plan_for,
    plans_for,
    price_table_installment,
)

FREE_12 = InstallmentPolicy(max_installments=12, interest_free=12, monthly_rate_bp=199, min_installment=500)
FREE_3 = InstallmentPolicy(max_installments=12, interest_free=3, monthly_rate_bp=199, min_installment=500)


@pytest.mark.parametrize(
    ("amount", "count", "policy", "expected"),
    [
        # R$ 6.999,00 in 12x without interest: exactly R$ 583,25 each
        (699900, 12, FREE_12, Installment(12, 58325, 58325, 699900, 0, True)),
        # R$ 100,00 in 3x: the remainder cent goes to the first installment
        (10000, 3, FREE_12, Installment(3, 3333, 3334, 10000, 0, True)),
        # R$ 100,00 in 7x: 1428 × 7 = 9996, remainder 4 centavos on the first
        (10000, 7, FREE_12, Installment(7, 1428, 1432, 10000, 0, True)),
        # 1x is the amount itself
        (4290, 1, FREE_3, Installment(1, 4290, 4290, 4290, 0, True)),
        # R$ 1.000,00 in 4x at 1,99 % a.m. (Price): PMT = 262,5600… → R$ 262,56; total 1.050,24
        (100000, 4, FREE_3, Installment(4, 26256, 26256, 105024, 5024, False)),
        # R$ 1.000,00 in 12x at 1,99 % a.m.: PMT = 94,5015… → R$ 94,50; total 1.134,00
        (100000, 12, FREE_3, Installment(12, 9450, 9450, 113400, 13400, False)),
        # R$ 500,00 in 5x at 2,5 % a.m.: PMT = 107,6229… → R$ 107,62 (half up keeps .62); total 538,10
        (50000, 5, InstallmentPolicy(12, 1, 250, 500), Installment(5, 10762, 10762, 53810, 3810, False)),
    ],
)
def test_plan_table_of_exact_cases(amount: int, count: int, policy: InstallmentPolicy, expected: Installment) -> None:
    plan = plan_for(amount, count, policy)

    assert plan == expected
    assert plan.first + plan.installment * (plan.count - 1) == plan.total


def test_price_table_rounds_half_up_to_the_centavo() -> None:
    # 10000 · 0.01 · 1.01² / (1.01² − 1) = 5075.124… → 5075; 10001 at 1 % in 2x = 5075.6… → 5076
    assert price_table_installment(10000, 2, 100) == 5075
    assert price_table_installment(10001, 2, 100) == 5076


def test_minimum_installment_and_maximum_bound_the_plans() -> None:
    # R$ 20,00 with R$ 5,00 minimum: at most 4x (4 × 5,00); 1x always exists
    counts = [plan.count for plan in plans_for(2000, FREE_12)]
    assert counts == [1, 2, 3, 4]
    assert plan_for(2000, 5, FREE_12) is None
    assert plan_for(2000, 13, FREE_12) is None
    assert [plan.count for plan in plans_for(300, FREE_12)] == [1]


def test_best_interest_free_is_the_longest_plan_without_interest() -> None:
    assert best_interest_free(699900, FREE_12) == Installment(12, 58325, 58325, 699900, 0, True)
    assert best_interest_free(100000, FREE_3).count == 3
    assert best_interest_free(900, FREE_12) is None  # R$ 9,00: no 2x of at least R$ 5,00


def test_a_policy_outside_its_bounds_is_refused() -> None:
    with pytest.raises(ValueError, match="max_installments"):
        InstallmentPolicy(max_installments=25)
