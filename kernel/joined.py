"""A write that joins the last transaction of the operation running now (issue 34).

The protocol layer keeps each write's answer (its idempotency record) and learns it only once the engine has
returned, after the engine's last commit: one more statement and commit per write, and a window in which the
change is committed while its record still says "in progress". An engine that knows its last transaction calls
`join(result)` inside it, just before it commits, with the result it is about to return; the layer that keeps
the answer (`joining(write)`, around the whole operation) then stores it in that transaction, and a layer between
them says what is stored for the engine's result (`presenting(present)`: the protocol's answer for it).

A join may run more than once (a transaction retried after a deadlock calls it again), and its transaction may
still roll back after it. So this module remembers one thing, for every layer: what the last join received and
what its write stored. A layer trusts the write's effect only when the engine returned the very result the last
join received (`stored_for`, the presenting layer) or when it is handed back the very answer that write stored
(`stored`, the keeping layer); otherwise the answer is written after commit as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

# `write(result)` stores what it is handed and returns what it stored.
_write: ContextVar[Callable[[Any], Any] | None] = ContextVar("joined_write", default=None)
_last: ContextVar[tuple[Any, Any] | None] = ContextVar("joined_last", default=None)  # (received, stored)


@contextmanager
def joining(write: Callable[[Any], Any]) -> Iterator[None]:
    """Within the block, `join(result)` runs `write(result)` in the engine's transaction; `write` returns what it
    stored (read back with `stored`)."""
    token, last = _write.set(write), _last.set(None)
    try:
        yield
    finally:
        _write.reset(token)
        _last.reset(last)


@contextmanager
def presenting(present: Callable[[Any], Any]) -> Iterator[None]:
    """Within a `joining` block, `join(result)` hands its write `present(result)` instead of `result`. Nothing
    outside one (no write to hand anything to)."""
    write = _write.get()
    if write is None:
        yield
        return
    token = _write.set(lambda result: write(present(result)))
    try:
        yield
    finally:
        _write.reset(token)


def join(result: Any) -> None:
    """Inside the operation's last transaction, before it commits: the joined write, if any, for `result`."""
    write = _write.get()
    if write is None:
        return
    _last.set(None)  # a write that raises leaves nothing to trust
    _last.set((result, write(result)))


def stored_for(result: Any) -> Any:
    """What the last `join` stored for `result`, when `result` is the very object it received; else None."""
    last = _last.get()
    return last[1] if last is not None and last[0] is result else None


def stored() -> Any:
    """What the last `join` of this `joining` block stored (None when none did)."""
    last = _last.get()
    return last[1] if last is not None else None
