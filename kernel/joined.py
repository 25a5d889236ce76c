"""A write that joins the last transaction of the operation running now (issue 34).

The protocol layer keeps each write's answer (its idempotency record) and learns it only once the engine has
returned, after the engine's last commit: one more statement and commit per write, and a window in which the
change is committed while its record still says "in progress". An engine that knows its last transaction calls
`join(result)` inside it, just before it commits, with the result it is about to return; the protocol layer's
`write` (set with `joining`) then stores the answer in that transaction. It may run more than once (a transaction
retried after a deadlock calls it again); a caller trusts its effect only when the engine returned the very
result the last call received (`joined_result`), and otherwise writes the answer after commit as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_write: ContextVar[Callable[[Any], None] | None] = ContextVar("joined_write", default=None)
_last: ContextVar[Any] = ContextVar("joined_last", default=None)


@contextmanager
def joining(write: Callable[[Any], None]) -> Iterator[None]:
    """Within the block, `join(result)` runs `write(result)` in the caller's transaction."""
    token, last = _write.set(write), _last.set(None)
    try:
        yield
    finally:
        _write.reset(token)
        _last.reset(last)


def join(result: Any) -> None:
    """Inside the operation's last transaction, before it commits: the joined write, if any, for `result`."""
    write = _write.get()
    if write is None:
        return
    _last.set(None)  # a write that raises leaves nothing to trust
    write(result)
    _last.set(result)


def joined_result() -> Any:
    """The result the last `join` of this block wrote for (None when none did)."""
    return _last.get()
