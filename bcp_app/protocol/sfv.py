"""Minimal RFC 8941 Structured Field Values: what BCP needs (`BCP-Agent`, `Signature-Input`, `Signature`).

Parses Dictionaries whose members are Items or Inner Lists with Parameters, and serializes the
Inner Lists used as RFC 9421 signature parameters. Raises `SFVError` on anything malformed.
"""

from __future__ import annotations

import base64
import binascii
import string
from dataclasses import dataclass, field
from typing import Any

_KEY_START = set(string.ascii_lowercase + "*")
_KEY_CHARS = set(string.ascii_lowercase + string.digits + "_-.*")
_TOKEN_START = set(string.ascii_letters + "*")
_TOKEN_CHARS = set(string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~:/")


class SFVError(ValueError):
    pass


@dataclass(frozen=True)
class Token:
    value: str


@dataclass
class Item:
    value: Any
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class InnerList:
    items: list[Item]
    params: dict[str, Any] = field(default_factory=dict)
    # The member's text exactly as received (dictionary members only): RFC 9421 §3.2 verifies the
    # signature base with the received `@signature-params` value, not a re-serialization.
    raw: str = field(default="", compare=False)


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip_sp(self) -> None:
        while self.peek() == " ":
            self.i += 1

    def skip_ows(self) -> None:
        while self.peek() in (" ", "\t") and self.peek():
            self.i += 1

    def key(self) -> str:
        if self.peek() not in _KEY_START or not self.peek():
            raise SFVError(f"invalid key at {self.i}")
        start = self.i
        while self.peek() and self.peek() in _KEY_CHARS:
            self.i += 1
        return self.s[start : self.i]

    def bare_item(self) -> Any:
        c = self.peek()
        if c == '"':
            return self.string()
        if c == ":":
            return self.bytes_()
        if c == "?":
            return self.boolean()
        if c == "-" or c.isdigit():
            return self.number()
        if c and c in _TOKEN_START:
            return self.token()
        raise SFVError(f"invalid item at {self.i}")

    def string(self) -> str:
        self.i += 1
        out = []
        while self.i < len(self.s):
            c = self.s[self.i]
            self.i += 1
            if c == "\\":
                if self.i >= len(self.s) or self.s[self.i] not in '"\\':
                    raise SFVError("invalid escape in string")
                out.append(self.s[self.i])
                self.i += 1
            elif c == '"':
                return "".join(out)
            elif not (0x20 <= ord(c) <= 0x7E):
                raise SFVError("invalid character in string")
            else:
                out.append(c)
        raise SFVError("unterminated string")

    def bytes_(self) -> bytes:
        end = self.s.find(":", self.i + 1)
        if end < 0:
            raise SFVError("unterminated byte sequence")
        raw = self.s[self.i + 1 : end]
        self.i = end + 1
        if any(c not in string.ascii_letters + string.digits + "+/=" for c in raw):
            raise SFVError("invalid byte sequence")
        try:
            return base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise SFVError("invalid base64 in byte sequence") from exc

    def boolean(self) -> bool:
        value = self.s[self.i + 1 : self.i + 2]
        if value not in ("0", "1"):
            raise SFVError("invalid boolean")
        self.i += 2
        return value == "1"

    def number(self) -> int | float:
        start = self.i
        if self.peek() == "-":
            self.i += 1
        if not self.peek().isdigit():
            raise SFVError("invalid number")
        while self.peek().isdigit() or self.peek() == ".":
            self.i += 1
        text = self.s[start : self.i]
        if "." in text:
            whole, _, fraction = text.lstrip("-").partition(".")
            # RFC 8941 §4.2.4: at most 12 integer digits and 1 to 3 fractional ones
            if "." in fraction or not 1 <= len(fraction) <= 3 or len(whole) > 12:
                raise SFVError("invalid decimal")
            return float(text)
        if len(text.lstrip("-")) > 15:
            raise SFVError("integer too long")
        return int(text)

    def token(self) -> Token:
        start = self.i
        self.i += 1
        while self.peek() and self.peek() in _TOKEN_CHARS:
            self.i += 1
        return Token(self.s[start : self.i])

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {}
        while self.peek() == ";":
            self.i += 1
            self.skip_sp()
            name = self.key()
            value: Any = True
            if self.peek() == "=":
                self.i += 1
                value = self.bare_item()
            params[name] = value
        return params

    def item_or_inner_list(self) -> Item | InnerList:
        if self.peek() == "(":
            self.i += 1
            items: list[Item] = []
            while True:
                self.skip_sp()
                if self.peek() == ")":
                    self.i += 1
                    return InnerList(items, self.params())
                if not self.peek():
                    raise SFVError("unterminated inner list")
                value = self.bare_item()
                items.append(Item(value, self.params()))
                if self.peek() not in (" ", ")"):
                    raise SFVError("invalid inner list")
        value = self.bare_item()
        return Item(value, self.params())


def parse_dictionary(text: str) -> dict[str, Item | InnerList]:
    parser = _Parser(text)
    result: dict[str, Item | InnerList] = {}
    parser.skip_sp()
    if not parser.peek():
        return result
    while True:
        name = parser.key()
        if parser.peek() == "=":
            parser.i += 1
            start = parser.i
            member = parser.item_or_inner_list()
            if isinstance(member, InnerList):
                member.raw = text[start : parser.i]
            result[name] = member
        else:
            result[name] = Item(True, parser.params())
        parser.skip_ows()
        if not parser.peek():
            return result
        if parser.peek() != ",":
            raise SFVError(f"expected ',' at {parser.i}")
        parser.i += 1
        parser.skip_ows()
        if not parser.peek():
            raise SFVError("trailing comma")


def serialize_bare(value: Any) -> str:
    if isinstance(value, bool):
        return "?1" if value else "?0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Token):
        return value.value
    if isinstance(value, bytes):
        return ":" + base64.b64encode(value).decode() + ":"
    if isinstance(value, str):
        # printable ASCII is 0x20–0x7E exactly; two C-level checks, not a Python step per character (every signed
        # webhook serializes its signature parameters, issue 34)
        if not (value.isascii() and value.isprintable()):
            raise SFVError("strings must be printable ASCII")
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise SFVError(f"cannot serialize {type(value).__name__}")


def serialize_params(params: dict[str, Any]) -> str:
    return "".join(f";{k}" if v is True else f";{k}={serialize_bare(v)}" for k, v in params.items())


def serialize_inner_list(inner: InnerList) -> str:
    items = " ".join(serialize_bare(item.value) + serialize_params(item.params) for item in inner.items)
    return f"({items}){serialize_params(inner.params)}"
