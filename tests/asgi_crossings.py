"""Counting a request's crossings between the event loop and threads (asgiref), for the one-hop handlers'
tests (config/asgi.py `OneHopHandler`, MCP and A2A)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from asgiref.sync import AsyncToSync, SyncToAsync

from kernel import threads


@dataclass
class Crossings:
    into_a_thread: list[Any] = field(default_factory=list)  # each SyncToAsync or `in_thread` call's function
    back_to_the_loop: list[Any] = field(default_factory=list)  # each AsyncToSync call's awaitable


def count_crossings(monkeypatch: pytest.MonkeyPatch) -> Crossings:
    """From now until the test ends, record every `sync_to_async`, `kernel.threads.in_thread` and `async_to_sync`
    call."""
    crossings = Crossings()
    into_a_thread, out_of_it = SyncToAsync.__call__, AsyncToSync.__call__
    in_thread = threads.in_thread

    async def executor_hop(function: Any, /, *args: Any, **kwargs: Any) -> Any:
        crossings.into_a_thread.append(function)
        return await in_thread(function, *args, **kwargs)

    def hop(self: SyncToAsync, *args: Any, **kwargs: Any) -> Any:
        crossings.into_a_thread.append(self.func)
        return into_a_thread(self, *args, **kwargs)

    def back(self: AsyncToSync, *args: Any, **kwargs: Any) -> Any:
        crossings.back_to_the_loop.append(self.awaitable)
        return out_of_it(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", hop)
    monkeypatch.setattr(threads, "in_thread", executor_hop)
    monkeypatch.setattr(AsyncToSync, "__call__", back)
    return crossings
