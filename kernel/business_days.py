"""Business days for delivery estimates ("Chega em 3 a 5 dias úteis" → "entre 09/12 e 11/12").

The carriers count their days in business days from the day after posting: no Saturdays, Sundays or national
holidays. The national holidays come from the `holidays` package (the law's list, kept current: Consciência
Negra is national from 2024), the same dependency payments' boleto calendar uses; Carnival is added here.
Boletos follow the banks' calendar (payments/boleto/service.py), which differs (Corpus Christi, Dec 24/31).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import date, timedelta

import holidays


def easter_sunday(year: int) -> date:
    """Gregorian Easter (the anonymous algorithm, Meeus/Jones/Butcher): 2026-04-05, 2027-03-28."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday_shift = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * weekday_shift) // 451
    month, day = divmod(h + weekday_shift - 7 * m + 114, 31)
    return date(year, month, day + 1)


@functools.lru_cache(maxsize=16)
def delivery_holidays(year: int) -> frozenset[date]:
    """The days of `year` no delivery counts on besides weekends: the national holidays (Good Friday included),
    plus Carnival Monday and Tuesday.

    Carnival is only a "ponto facultativo" by law, yet the Correios do not deliver on it in most of the country and
    private carriers follow: counting it out moves an estimate a day or two later, never promises a day no one
    delivers. Ash Wednesday (work from the afternoon) and Corpus Christi (a municipal holiday only in some cities)
    stay business days: the estimate is national, and the carriers' own days already absorb local closures."""
    easter = easter_sunday(year)
    carnival = {easter - timedelta(days=48), easter - timedelta(days=47)}
    return frozenset(holidays.country_holidays("BR", years=year)) | frozenset(carnival)


Calendar = Callable[[int], frozenset[date]]  # a year → its days off besides weekends


def is_business_day(day: date, calendar: Calendar = delivery_holidays) -> bool:
    return day.weekday() < 5 and day not in calendar(day.year)


def add_business_days(start: date, days: int, calendar: Calendar = delivery_holidays) -> date:
    """The `days`-th business day after `start` (0: `start` itself) in `calendar` (deliveries by default; the
    boleto's due date passes the banks'). Day 1 is the first business day after `start` whatever `start` is, as a
    carrier counts from the day after posting (posted on a Saturday: day 1 is Monday)."""
    day, left = start, max(0, days)
    while left:
        day += timedelta(days=1)
        if is_business_day(day, calendar):
            left -= 1
    return day
