"""Business days for delivery estimates (kernel/business_days.py): weekends, national holidays, Carnival and the
turn of the year, in 2026 and 2027."""

from __future__ import annotations

from datetime import date

from kernel.business_days import add_business_days, delivery_holidays, easter_sunday, is_business_day


def test_easter_and_the_days_that_hang_on_it() -> None:
    assert (easter_sunday(2024), easter_sunday(2025), easter_sunday(2026), easter_sunday(2027)) == (
        date(2024, 3, 31),
        date(2025, 4, 20),
        date(2026, 4, 5),
        date(2027, 3, 28),
    )
    # Carnival Monday and Tuesday, Good Friday: out; Ash Wednesday and Corpus Christi: business days
    for day in (date(2026, 2, 16), date(2026, 2, 17), date(2026, 4, 3), date(2027, 2, 8), date(2027, 2, 9)):
        assert not is_business_day(day), day
    for day in (date(2026, 2, 18), date(2026, 6, 4), date(2027, 2, 10), date(2027, 5, 27)):
        assert is_business_day(day), day


def test_the_national_holidays_of_2026() -> None:
    assert sorted(delivery_holidays(2026)) == [
        date(2026, 1, 1),
        date(2026, 2, 16),  # Carnival (ponto facultativo: counted out, see the module)
        date(2026, 2, 17),
        date(2026, 4, 3),  # Good Friday
        date(2026, 4, 21),
        date(2026, 5, 1),
        date(2026, 9, 7),
        date(2026, 10, 12),
        date(2026, 11, 2),
        date(2026, 11, 15),
        date(2026, 11, 20),  # Consciência Negra, national since 2024
        date(2026, 12, 25),
    ]


def test_business_days_skip_weekends_and_holidays() -> None:
    friday = date(2026, 12, 4)
    assert (add_business_days(friday, 0), add_business_days(friday, 3), add_business_days(friday, 5)) == (
        friday,
        date(2026, 12, 9),  # Mon, Tue, Wed
        date(2026, 12, 11),
    )
    # posted on a Saturday: day 1 is Monday
    assert add_business_days(date(2026, 12, 5), 1) == date(2026, 12, 7)
    # Fri Nov 13 2026: Nov 15 is a Sunday anyway, Fri Nov 20 (Consciência Negra) is skipped
    assert (add_business_days(date(2026, 11, 13), 3), add_business_days(date(2026, 11, 13), 5)) == (
        date(2026, 11, 18),
        date(2026, 11, 23),
    )
    # Tiradentes 2027 is a Wednesday; Carnival 2027 (Mon 8, Tue 9 Feb): Fri 5 + 1 is Ash Wednesday
    assert add_business_days(date(2027, 4, 20), 1) == date(2027, 4, 22)
    assert add_business_days(date(2027, 2, 5), 1) == date(2027, 2, 10)


def test_business_days_across_the_turn_of_the_year() -> None:
    # Wed Dec 30 2026: Thu 31 counts (no national holiday), Fri Jan 1 2027 does not, then the weekend
    assert [add_business_days(date(2026, 12, 30), n) for n in (1, 2, 3)] == [
        date(2026, 12, 31),
        date(2027, 1, 4),
        date(2027, 1, 5),
    ]
    # Christmas 2026 is a Friday: Thu 24 + 1 is Mon 28
    assert add_business_days(date(2026, 12, 24), 1) == date(2026, 12, 28)
