"""Our RFC 8941 dictionary parser (bcp_app/protocol/sfv.py: BCP-Agent, Signature-Input, Signature) against
http-sfv, an independent implementation, on the RFC's own examples and on inputs it says must fail (BCP-NEG-03).

Ours is kept rather than replaced: it also keeps each member's received text (`InnerList.raw`), which RFC 9421
§3.2 needs to rebuild the signature base exactly; http-sfv re-serializes. Two RFC 9651 additions that RFC 8941
does not have (Date `@…` and Display String `%"…"`), and a decimal ending in "." (RFC 8941 §4.2.4 fails it), are
refused by ours and read by http-sfv: those differences are asserted below, so a change on either side is seen.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import http_sfv
import pytest

from bcp_app.protocol import sfv

AGREED = [
    'en="Applepie", da=:w4ZibGV0w6ZydGU=:',
    "a=?0, b, c; foo=bar",
    "rating=1.5, feelings=(joy sadness)",
    "a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid",
    'sig1=("@method" "@path" "content-digest");created=1618884473;keyid="test-key-ecc-p256"',
    "a=1,  b=2",
    'profile="https://agente.example.com.br/.well-known/ucp"',
    'a="\\"q\\""',
    "a=-0.5, b=123456789012.123, c=-999999999999999",
    "a=()",
    "*k=1",
    " a=1",
    "a=1 ",
]
REFUSED = [
    "a=1,",
    "a=(1 2",
    "A=1",
    "a=1;",
    "a=1 b=2",
    "a=1.1234",
    "a=1234567890123.1",
    "a=12345678901234567",
    'a="\x7f"',
    "a=:not base64:",
]


def _bare(value: Any) -> tuple[str, Any]:
    if isinstance(value, (sfv.Token, http_sfv.Token)):
        return ("token", value.value if isinstance(value, sfv.Token) else str(value))
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (bytes, bytearray)):
        return ("bytes", bytes(value))
    if isinstance(value, (float, Decimal)):
        return ("decimal", Decimal(str(value)).normalize())
    if isinstance(value, int):
        return ("integer", value)
    return ("string", str(value))


def _ours(text: str) -> dict[str, Any]:
    def member(value: sfv.Item | sfv.InnerList) -> Any:
        params = {key: _bare(param) for key, param in value.params.items()}
        if isinstance(value, sfv.InnerList):
            return ("inner list", [member(item) for item in value.items], params)
        return ("item", _bare(value.value), params)

    return {key: member(value) for key, value in sfv.parse_dictionary(text).items()}


def _theirs(text: str) -> dict[str, Any]:
    def member(value: Any) -> Any:
        params = {key: _bare(param) for key, param in dict(value.params).items()}
        if isinstance(value, http_sfv.InnerList):
            return ("inner list", [member(item) for item in value], params)
        return ("item", _bare(value.value), params)

    parsed = http_sfv.Dictionary()
    parsed.parse(text.encode())
    return {key: member(value) for key, value in parsed.items()}


@pytest.mark.parametrize("text", AGREED)
def test_a_dictionary_reads_the_same_as_an_independent_parser_reads_it(text: str) -> None:
    assert _ours(text) == _theirs(text)


@pytest.mark.parametrize("text", REFUSED)
def test_what_rfc_8941_says_must_fail_fails_in_both(text: str) -> None:
    with pytest.raises(sfv.SFVError):
        sfv.parse_dictionary(text)
    with pytest.raises(ValueError):
        _theirs(text)


@pytest.mark.parametrize("text", ['a=%"x"', "a=@1659578233", "a=1."])
def test_where_we_refuse_what_http_sfv_reads(text: str) -> None:
    with pytest.raises(sfv.SFVError):
        sfv.parse_dictionary(text)
    assert _theirs(text)["a"][0] == "item"  # RFC 9651's Display String and Date; a lenient trailing "."


@pytest.mark.parametrize("text", ["", "keyid ~ ok", 'a "q" \\', "tab\there", "del\x7f", "unit\x1f", "café", "\u2028"])
def test_a_string_serializes_as_http_sfv_serializes_it_or_is_refused_as_it_refuses_it(text: str) -> None:
    """RFC 8941 §4.1.6: a String is printable ASCII (0x20–0x7E) or cannot be serialized (the signature parameters
    of every signed webhook, BCP-WH-04, are serialized so)."""
    try:
        expected: str | None = http_sfv.Item(text).__str__()
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(sfv.SFVError):
            sfv.serialize_bare(text)
    else:
        assert sfv.serialize_bare(text) == expected
