"""The control-character check's shortcuts (a printable string, a container whose JSON text has no escape) answer
exactly what the full walk answers, path and character included (issue 34)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from typing import Any

from bcp_app.protocol.schemas.text import control_escape_free, find_control_character, is_id_key
from kernel.json_limits import Location, control_in, find_control_location, loads_bounded

# Characters the check must tell apart: C0 controls (tab, line feed and carriage return are text), DEL, the
# characters JSON escapes besides controls, non-ASCII letters and spaces that are not "printable" either.
CHARACTERS = ["a", "Z", "0", " ", "ã", "ç", "€", '"', "\\", "/", "\x00", "\x01", "\t", "\n", "\r", "\x0b", "\x1f"]
CHARACTERS += ["\x7f", "\u00a0", "\u2028", "\U0001f600"]
KEYS = ["id", "name", "line_item_id", "codes", "sku", "buyerId", "text", "a\x00b", "tab\tkey", 'q"k', 7]


def reference(value: Any, loc: Location) -> tuple[Location, str] | None:
    """The check as it was before the shortcuts: the walk for every container, the pattern for every string."""
    strict = is_id_key(str(loc[-1]))
    if isinstance(value, str):
        char = control_in(value, identifier=strict)
        return (loc, char) if char else None
    if value is None or isinstance(value, int | float):
        return None
    return find_control_location(value, loc, identifier=strict, is_id_key=is_id_key)


def _text(rng: random.Random) -> str:
    # mostly clean text, as requests are; sometimes one character of the list above
    base = "".join(rng.choice("abcdefghij ãç-_.0123456789") for _ in range(rng.randint(0, 12)))
    if rng.random() < 0.4:
        at = rng.randint(0, len(base))
        base = base[:at] + rng.choice(CHARACTERS) + base[at:]
    return base


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.random()
    if depth > 3 or kind < 0.45:
        return rng.choice([_text(rng), _text(rng), rng.randint(-5, 5), 1.5, None, True])
    if kind < 0.75:
        return {rng.choice(KEYS) if rng.random() < 0.3 else _text(rng): _value(rng, depth + 1) for _ in range(3)}
    if kind < 0.95:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return rng.choice([(_text(rng), 1), datetime(2026, 1, 2, tzinfo=UTC), {(1, 2): "tuple key"}])


def test_the_shortcuts_answer_what_the_walk_answers_for_generated_values() -> None:
    rng = random.Random(34)
    found = 0
    for _ in range(20_000):
        value = _value(rng, 0)
        loc = rng.choice([("buyer",), ("line_items",), ("id",), ("context",), ("payment", "token"), ("x_id",)])
        expected = reference(value, loc)
        assert find_control_character(value, loc) == expected, (value, loc)
        found += expected is not None
    assert 2_000 < found < 18_000  # both answers were exercised many times


def test_the_shortcuts_answer_what_the_walk_answers_for_hand_picked_values() -> None:
    deep: Any = "x\x00"
    for _ in range(3000):  # deeper than json.dumps recurses: the walk (iterative) answers
        deep = [deep]
    cases: list[tuple[Any, Location]] = [
        ("São Paulo", ("city",)),
        ("linha 1\nlinha 2", ("notes",)),
        ("a\nb", ("line_item_id",)),
        ("\u00a0", ("name",)),
        ("\x7f", ("sku",)),
        ({"nome": "Ana", "sobrenome": 'O"Brien'}, ("buyer",)),
        ({"nome": "Ana\\"}, ("buyer",)),
        ({"a\x00": "b"}, ("context",)),
        ({"lista": ["ok", "no\x01k"]}, ("signals",)),
        ({1: "int key", None: "none key"}, ("context",)),
        ([{"id": "li\t1"}], ("line_items",)),
        ([{"text": "ok\t"}], ("line_items",)),
        (deep, ("deep",)),
        ({"when": datetime(2026, 1, 2, tzinfo=UTC)}, ("context",)),
        # issue 34: the whole-member shortcut is orjson's text; what orjson refuses or says otherwise walks
        ({"n": 2**70, "s": "a\x00"}, ("signals",)),
        ({"n": 2**70, "s": "ok"}, ("signals",)),
        ({"x": float("nan"), "y": "\u2028\u00e9"}, ("context",)),
        ([("tupla", "b\x02")], ("signals",)),
    ]
    for value, loc in cases:
        assert find_control_character(value, loc) == reference(value, loc), (value, loc)


def test_a_json_text_without_a_control_escape_decodes_to_values_the_check_finds_clean() -> None:
    """issue 34: the REST parser skips the models' scan when the body has no escape of a control character
    (`control_escape_free`); every such text, as the transport decodes it, holds no control character anywhere,
    whether its accents came escaped (Python's `json.dumps`) or as they are."""
    rng = random.Random(3434)
    free = held = 0
    for _ in range(20_000):
        value = _value(rng, 0)
        try:
            raw = json.dumps(value, ensure_ascii=rng.random() < 0.5).encode()
        except TypeError:
            continue  # not JSON (a tuple key, a datetime): no request carries it
        decoded = loads_bounded(raw, max_bytes=1 << 20)
        dirty = reference(decoded, ("x_id",)) is not None or reference(decoded, ("text",)) is not None
        if control_escape_free(raw):
            assert not dirty, raw
            free += 1
        held += dirty
    assert free > 5_000 and held > 2_000  # both kinds of text were exercised many times
    # the same text in UTF-16 or -32 (which the decoder reads too) always goes to the scan
    assert not control_escape_free(json.dumps({"a": "b"}).encode("utf-16"))
    assert not control_escape_free(json.dumps({"a": "b"}).encode("utf-32-le"))
    # an escaped backslash before such letters costs the scan, which finds the text clean
    path = b'{"a": "C:\\\\new"}'
    assert not control_escape_free(path) and reference(json.loads(path), ("a",)) is None
