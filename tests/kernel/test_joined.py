"""kernel.joined (issue 34): one record of what the last join received and stored serves the layer that keeps the
answer (`stored`) and the layer that presents it (`stored_for`)."""

from __future__ import annotations

from typing import Any

import pytest

from kernel.joined import join, joining, presenting, stored, stored_for


def test_outside_a_joining_block_a_join_writes_nothing_and_nothing_is_stored() -> None:
    result = object()
    with presenting(lambda value: pytest.fail("nothing to present for")):
        join(result)
    assert stored_for(result) is None and stored() is None


def test_the_keeping_layer_writes_what_the_presenting_layer_makes_of_the_engines_result() -> None:
    written: list[Any] = []
    engine_result = object()

    def write(answer: Any) -> Any:
        written.append(answer)
        return answer

    with joining(write):
        with presenting(lambda value: ("answer", value)):
            join(engine_result)
        answer = stored_for(engine_result)
        assert answer == ("answer", engine_result) and written == [answer]
        assert stored() is answer  # the keeping layer, handed back that very answer, trusts it
        assert stored_for(object()) is None  # another result than the one joined: not trusted
    assert stored() is None  # the block's record ends with it


def test_a_retried_join_is_the_one_trusted_and_a_write_that_raises_leaves_nothing() -> None:
    first, second = object(), object()
    with joining(lambda answer: answer):
        join(first)
        join(second)  # e.g. the transaction retried after a deadlock joins again
        assert stored_for(first) is None and stored_for(second) is second
    writes: list[Any] = []

    def flaky(answer: Any) -> Any:  # stores the first answer, fails on the retry
        writes.append(answer)
        if len(writes) > 1:
            raise RuntimeError("store down")
        return answer

    with joining(flaky):
        join(first)
        with pytest.raises(RuntimeError):
            join(second)
        assert stored() is None and stored_for(first) is None
