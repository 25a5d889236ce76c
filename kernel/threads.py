"""The one way the shop's async transports (the Django handler, MCP, A2A) run sync work in a thread.

`in_thread` is the executor's own call in a copy of the caller's context, instead of asgiref's `sync_to_async`,
which, when the thread returns, copies every context variable of the thread's context back into the caller's
task and re-makes each `asgiref.local.Local` storage for the loop's thread: measured in process, 16–20 % of an
MCP Get Order's CPU and 5–10 % of an A2A one (issue 34). Nothing on the loop side reads what the thread sets:
answers are return values, and the per-request state the thread fills in (the access log's record, the request
cache's scope) is a mutable object made on the loop side before the hop. Code that needs a variable set in the
thread back on the loop must not use this.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from typing import Any


async def in_thread[R](function: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
    """`function(*args, **kwargs)` in a thread of the loop's default executor (bounded: `size_default_executor`),
    in a copy of the caller's context; what it sets in that context stays there."""
    run = functools.partial(contextvars.copy_context().run, function, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(None, run)
