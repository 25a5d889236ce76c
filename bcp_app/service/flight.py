"""Single-flight: concurrent calls for one key in this process share the first caller's result.

Used for agent-profile fetches: a burst of requests naming one uncached profile URL makes one
outbound request; the others wait for it (bounded) and get the same document or the same error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_lock = threading.Lock()
_flights: dict[str, _Flight] = {}


@dataclass
class _Flight:
    done: threading.Event = field(default_factory=threading.Event)
    waiters: int = 0
    result: Any = None
    error: BaseException | None = None


def waiting(key: str) -> int:
    """How many callers are waiting on the flight for `key` right now (0 when none is in the air)."""
    with _lock:
        flight = _flights.get(key)
        return flight.waiters if flight is not None else 0


def single_flight[T](key: str, call: Callable[[], T], *, wait: float = 60.0) -> T:
    """`call()` once for all concurrent callers with `key`; followers wait at most `wait` seconds, then call."""
    with _lock:
        flight = _flights.get(key)
        leader = flight is None
        if flight is None:
            flight = _flights[key] = _Flight()
        else:
            flight.waiters += 1
    if not leader:
        if flight.done.wait(wait):
            if flight.error is not None:
                raise flight.error
            return flight.result  # type: ignore[no-any-return]
        return call()  # the leader is stuck past any deadline: do not wait forever behind it
    try:
        flight.result = call()
        return flight.result
    except BaseException as exc:
        flight.error = exc
        raise
    finally:
        with _lock:
            _flights.pop(key, None)
        flight.done.set()
