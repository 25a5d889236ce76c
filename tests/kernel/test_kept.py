"""Values kept per process behind a version token (kernel/ops/kept.py): never older than the shared token says.

The cache is Django's local-memory backend (what a test process uses); "another process" is what it does to the
shared cache: drop the token (a save there), flush the cache. Two kept families stand for two processes where
the test needs both sides.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.cache import cache

from kernel.ops import request_cache
from kernel.ops.kept import KeptByToken


@pytest.fixture
def kept() -> KeptByToken:
    return KeptByToken(f"test:kept:{uuid.uuid4().hex}", 60)


def _builds(values: list[Any]) -> tuple[list[int], Any]:
    calls: list[int] = []

    def build() -> Any:
        calls.append(1)
        return values[len(calls) - 1]

    return calls, build


def test_a_value_is_built_once_per_token_and_the_cache_holds_only_the_token(kept: KeptByToken) -> None:
    calls, build = _builds([{"rate": 1890}])
    first = kept.get("table", build)
    assert kept.get("table", build) is first and len(calls) == 1
    token = cache.get(kept.token_key)
    assert isinstance(token, int)  # a plain number: Django's Redis serializer stores it unpickled


def test_a_drop_rebuilds_here_at_once_and_in_every_process_on_its_next_read(kept: KeptByToken) -> None:
    other = KeptByToken(kept.token_key, 60)  # another process's copy under the same shared token
    calls, build = _builds(["old", "new"])
    other_calls, other_build = _builds(["old", "new"])
    assert kept.get("table", build) == "old" and other.get("table", other_build) == "old"
    with request_cache.request_scope():
        assert kept.get("table", build) == "old"
        kept.drop()  # the merchant's save, in this request
        assert kept.get("table", build) == "new"  # the rest of the request sees it
    assert other.get("table", other_build) == "new"  # the other process's next request too
    assert (len(calls), len(other_calls)) == (2, 2)


def test_a_build_from_rows_a_save_then_changes_is_never_read_again(kept: KeptByToken) -> None:
    """The token is read before the rows: a save that commits while they are read drops the token they are kept
    under, so the next read builds again instead of keeping the old rows until the TTL."""
    calls: list[str] = []

    def build_while_the_merchant_saves() -> str:
        calls.append("old")
        kept.drop()  # the save commits after this read of the rows
        return "old"

    assert kept.get("table", build_while_the_merchant_saves) == "old"
    assert kept.get("table", lambda: "new") == "new"


def test_a_flushed_cache_never_gives_back_a_token_an_older_copy_was_kept_under(kept: KeptByToken) -> None:
    """Tokens start at a random number: after a flush (or an eviction) the new token is not the old one, so a
    copy kept before is not taken for current (a counter restarting at 1 would hand the old number out again)."""
    tokens = set()
    for round_ in range(20):
        assert kept.get("table", lambda round_=round_: round_) == round_
        tokens.add(cache.get(kept.token_key))
        cache.clear()  # the flush
    assert len(tokens) == 20


def test_the_first_token_started_wins_when_two_processes_start_one(kept: KeptByToken) -> None:
    cache.set(kept.token_key, 12345, 60)  # another process's `add` got there first
    with request_cache.request_scope():
        assert kept.token() == 12345


def test_an_entry_that_is_not_a_token_is_not_taken_for_one(kept: KeptByToken) -> None:
    cache.set(kept.token_key, ("an older release's pickled value",), 60)
    _, build = _builds(["a", "b"])
    with request_cache.request_scope():
        assert kept.get("table", build) == "a" and kept.get("table", build) == "a"  # one build per request
    with request_cache.request_scope():
        assert kept.get("table", build) == "b"  # a token of its own each time: never another request's copy
