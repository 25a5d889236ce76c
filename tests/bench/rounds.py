"""Interleaved rounds for the throughput benchmarks (issue 11), and the medians they print.

This machine is shared, and a window measured once can be cold or can catch a burst of other load. So each
case (a label: what runs, at how many clients) first gets a discarded pilot window, which warms it and sizes
its windows. Then come `rounds` rounds of one window per case, the order reversed every other round, so no
case always runs right after the same neighbour. A ratio is taken inside each round and the median of those
per-round ratios is printed, with their min–max beside it: one bad window moves the range, not the median.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


class Measured(Protocol):
    """A window: calls per second over the whole window (every client's calls)."""

    @property
    def rate(self) -> float: ...


@dataclass(frozen=True)
class Case:
    """How one label's windows run: `clients` processes; `pilot` calls per client in its discarded pilot."""

    clients: int
    pilot: int


def interleaved[W: Measured](
    cases: Mapping[str, Case], window: Callable[[str, int], W], rounds: int, seconds: float
) -> dict[str, list[W]]:
    """`window(label, calls per client)` measures one window of a case. A pilot of each case, then `rounds`
    rounds of one window per case, the order reversed every other round. Each window's calls per client come
    from the case's latest rate, so that it lasts about `seconds`; never fewer than the pilot's."""
    labels = list(cases)
    rate = {label: window(label, cases[label].pilot).rate for label in labels}
    windows: dict[str, list[W]] = {label: [] for label in labels}
    for index in range(rounds):
        for label in labels if index % 2 == 0 else labels[::-1]:
            case = cases[label]
            measured = window(label, max(case.pilot, math.ceil(seconds * rate[label] / case.clients)))
            windows[label].append(measured)
            rate[label] = measured.rate  # the next window is sized from the latest one
    return windows


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def spread(values: Sequence[float], digits: int = 2) -> str:
    """Median of per-round values, with their range: `0.81 (0.74–0.90)`."""
    return f"{median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def ratios(top: Sequence[float], bottom: Sequence[float]) -> list[float]:
    """Round by round: top[i] / bottom[i] (both lists hold one value per round, in round order)."""
    return [t / b for t, b in zip(top, bottom, strict=True)]


def rate_ratio(top: Sequence[Measured], bottom: Sequence[Measured], digits: int = 2) -> str:
    """Median (min–max) of the per-round rate ratios of two cases."""
    return spread(ratios([w.rate for w in top], [w.rate for w in bottom]), digits)
