"""The permalink URL grammar of BCP §15 (UCP permalink): pure functions, no Django, no database.

    GET {endpoint}/{token}:{qty}[,{token}:{qty}…]?{query}

* token: the raw id when it matches `^[A-Za-z0-9._-]+$`, else `~` + canonical base64url without padding of
  its UTF-8 bytes; the decoded id must be UTF-8 without control characters (BCP-PL-02).
* qty: a positive base-10 integer without leading zeros, at most `MAX_QUANTITY` (a documented limit).
* query: `continue_to` (the destination preference), field paths as JSON Pointers without the leading
  `/` (`buyer/email`, `discounts/codes/0`, …), and anything else (non-BCP parameters, kept on the
  redirect unless sensitive). Two parameters normalising to one pointer are ambiguous (BCP-PL-03).

`parse_permalink` turns the raw path and query into a `Permalink` or raises `PermalinkError` whose
message is the Portuguese sentence shown to the buyer.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

ENDPOINT_PATH = "/comprar"  # config.endpoint = BCP_PUBLIC_URL + this (BCP-PL-01)


def endpoint_url(public_url: str) -> str:
    return f"{public_url.rstrip('/')}{ENDPOINT_PATH}"


RAW_TOKEN = re.compile(r"^[A-Za-z0-9._-]+$")
B64URL = re.compile(r"^[A-Za-z0-9_-]+$")
QUANTITY = re.compile(r"^[1-9][0-9]*$")

# Documented limits (UCP permalink "URL Budget"): a longer link is answered 400, never cut short.
MAX_ITEMS = 50
MAX_QUANTITY = 99  # the storefront cart's limit: a link never puts more in a cart than a buyer could
MAX_ID_LENGTH = 64  # `item.id` in checkout requests
MAX_PARAMETERS = 50
MAX_VALUE_LENGTH = 500
MAX_POINTER_DEPTH = 4
MAX_URL_LENGTH = 4096

# Request-writable checkout fields a link may set (BCP §4.1 create): root → allowed sub-pointers.
BUYER_FIELDS = frozenset({"first_name", "last_name", "email", "phone_number", "tax_id"})
CONTEXT_FIELDS = frozenset(
    {"address_country", "address_region", "postal_code", "language", "intent", "currency", "location"}
)
# Every top-level member of a BCP checkout or cart: a parameter under one of these is a BCP field path,
# applied when writable and dropped otherwise (never forwarded: response-only members such as totals,
# status or ids are never set from a URL, BCP-SEC-03).
BCP_ROOTS = frozenset(
    {
        "ucp",
        "id",
        "line_items",
        "status",
        "currency",
        "totals",
        "links",
        "buyer",
        "context",
        "signals",
        "attribution",
        "messages",
        "expires_at",
        "continue_url",
        "payment",
        "order",
        "policies",
        "actions",
        "fulfillment",
        "discounts",
        "ap2",
        "cart_id",
    }
)
# Non-BCP parameters never copied onto the redirect (UCP permalink "Privacy": credentials, tokens, secrets).
SENSITIVE_WORDS = (
    "token",
    "secret",
    "passw",
    "pwd",
    "apikey",
    "api_key",
    "auth",
    "session",
    "credential",
    "signature",
    "mandate",
    "jwt",
    "otp",
    "cookie",
    "bearer",
    "cpf",
    "cnpj",
    "email",
    "phone",
)
SENSITIVE_NAMES = frozenset({"key", "code", "sig", "pin", "cvv", "cvc"})


class PermalinkError(ValueError):
    """A malformed or unsafe link (BCP-PL-02/03): shown to the buyer as a 400 page, nothing created."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Permalink:
    items: tuple[tuple[str, int], ...]  # (item id, quantity) in link order
    fields: dict[str, Any]  # the checkout create body built from the field paths (without line_items)
    continue_to: str | None  # a validated same-origin path (with its query), or None for the default
    passthrough: tuple[tuple[str, str], ...] = field(default=())  # non-BCP parameters kept on the redirect


def _has_control(text: str) -> bool:
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text)


def decode_token(token: str) -> str:
    """The item id a token names (BCP-PL-02); PermalinkError for a bad token."""
    if not token:
        raise PermalinkError("Item sem identificador no link.")
    if not token.startswith("~"):
        if not RAW_TOKEN.match(token):
            raise PermalinkError(
                f"Identificador de item inválido no link: use letras, números, '.', '_' ou '-', "
                f"ou a forma ~base64url ({token[:40]!r})."
            )
        return token
    encoded = token[1:]
    if not encoded or not B64URL.match(encoded) or len(encoded) % 4 == 1:
        raise PermalinkError("Identificador ~base64url inválido no link.")
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError):
        raise PermalinkError("Identificador ~base64url inválido no link.") from None
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != encoded:
        raise PermalinkError("Identificador ~base64url não canônico no link (sem preenchimento '=' e sem bits extras).")
    try:
        value = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PermalinkError("Identificador ~base64url do link não é texto UTF-8.") from None
    if not value or _has_control(value):
        raise PermalinkError("Identificador de item do link contém caracteres de controle.")
    return value


def encode_token(item_id: str) -> str:
    """The token for `item_id` (what a platform writes): raw when it fits the grammar, else `~base64url`."""
    if RAW_TOKEN.match(item_id):
        return item_id
    return "~" + base64.urlsafe_b64encode(item_id.encode("utf-8")).rstrip(b"=").decode("ascii")


def parse_items(segment: str) -> tuple[tuple[str, int], ...]:
    """`sku_1:2,~Z2lk…:1` → ((id, qty), …). An empty segment is a link without items."""
    if segment == "":
        return ()
    if "/" in segment:
        raise PermalinkError("O link tem barras a mais: os itens vão num único trecho, separados por vírgula.")
    if "%" in segment:
        raise PermalinkError("Identificadores de item não podem vir com %-codificação; use a forma ~base64url.")
    pairs = segment.split(",")
    if len(pairs) > MAX_ITEMS:
        raise PermalinkError(f"O link aceita no máximo {MAX_ITEMS} itens.")
    items: list[tuple[str, int]] = []
    for pair in pairs:
        token, colon, quantity = pair.rpartition(":")
        if not colon:
            raise PermalinkError(f"Cada item do link é id:quantidade (faltou a quantidade em {pair[:40]!r}).")
        if not QUANTITY.match(quantity):
            raise PermalinkError(
                f"Quantidade inválida no link ({quantity[:12]!r}): use um inteiro de 1 a "
                f"{MAX_QUANTITY}, sem zeros à esquerda."
            )
        if int(quantity) > MAX_QUANTITY:
            raise PermalinkError(f"Quantidade acima do limite no link: no máximo {MAX_QUANTITY} unidades por item.")
        item_id = decode_token(token)
        if len(item_id) > MAX_ID_LENGTH:
            raise PermalinkError(f"Identificador de item longo demais no link (máximo {MAX_ID_LENGTH} caracteres).")
        items.append((item_id, int(quantity)))
    return tuple(items)


def safe_continue_to(raw: str) -> str | None:
    """The re-encoded same-origin path for a `continue_to` value (already decoded once), or None (BCP-PL-04).

    A single leading `/` (not `//`), no scheme, backslash, whitespace or control character; dot segments
    removed; re-encoded, never reflected raw.
    """
    if not raw.startswith("/") or raw.startswith("//"):
        return None
    if "\\" in raw or any(ch.isspace() for ch in raw) or _has_control(raw):
        return None
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc:
        return None
    path = posixpath.normpath(parts.path) if parts.path else "/"
    if parts.path.endswith("/") and path != "/":
        path += "/"
    if path.startswith("//"):
        return None
    canonical = quote(path, safe="/-._~!$&'()*+,;=:@")
    if parts.query:
        canonical += "?" + urlencode(parse_qsl(parts.query, keep_blank_values=True))
    return canonical


def _pointer(name: str) -> tuple[str, ...]:
    """`buyer/email` or `/buyer/email` → ("buyer", "email"), RFC 6901 `~1`/`~0` unescaped."""
    text = "/" + name.lstrip("/") if not name.startswith("/") else name
    return tuple(token.replace("~1", "/").replace("~0", "~") for token in text[1:].split("/"))


def is_sensitive(name: str) -> bool:
    lowered = name.lower()
    return lowered in SENSITIVE_NAMES or any(word in lowered for word in SENSITIVE_WORDS)


def _set(fields: dict[str, Any], tokens: tuple[str, ...], value: str) -> bool:
    """Apply one writable field path to the create body; False when the path is not writable (dropped)."""
    root, rest = tokens[0], tokens[1:]
    # Consent is never taken from a link: LGPD consent is the buyer's own act, asked on the checkout page.
    if root == "buyer" and len(rest) == 1 and rest[0] in BUYER_FIELDS:
        fields.setdefault("buyer", {})[rest[0]] = value
        return True
    if root == "context" and len(rest) == 1 and rest[0] in CONTEXT_FIELDS:
        fields.setdefault("context", {})[rest[0]] = value
        return True
    if root == "discounts" and len(rest) == 2 and rest[0] == "codes" and rest[1].isdigit() and len(rest[1]) <= 2:
        fields.setdefault("discounts", {}).setdefault("codes", {})[int(rest[1])] = value
        return True
    if root == "attribution" and len(rest) == 1 and rest[0]:
        fields.setdefault("attribution", {})[rest[0]] = value
        return True
    if (
        root == "fulfillment"
        and len(rest) == 3
        and rest[:2] == ("methods", "0")
        and rest[2] in ("type", "selected_destination_id")
    ):
        fields.setdefault("fulfillment", {}).setdefault("methods", [{}])[0][rest[2]] = value
        return True
    return False


def _query_items(items: tuple[tuple[str, int], ...], fields: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    """`line_items/N/item/id` + `line_items/N/quantity` when the link has no item path (the path wins)."""
    lines = fields.pop("_lines", {})
    if items or not lines:
        return items
    out = []
    for index in sorted(lines):
        line = lines[index]
        if "id" not in line:
            raise PermalinkError(f"line_items/{index}/item/id faltando no link.")
        quantity = line.get("quantity", "1")
        if not QUANTITY.match(quantity) or int(quantity) > MAX_QUANTITY:
            raise PermalinkError(f"Quantidade inválida em line_items/{index}/quantity.")
        if len(line["id"]) > MAX_ID_LENGTH or _has_control(line["id"]):
            raise PermalinkError(f"Identificador inválido em line_items/{index}/item/id.")
        out.append((line["id"], int(quantity)))
    return tuple(out)


def parse_permalink(items_segment: str, query: str) -> Permalink:
    """The whole link → `Permalink`; PermalinkError for anything malformed, unsafe or ambiguous."""
    if len(items_segment) + len(query) > MAX_URL_LENGTH:
        raise PermalinkError(f"Link longo demais (máximo {MAX_URL_LENGTH} caracteres).")
    items = parse_items(items_segment)
    try:
        pairs = parse_qsl(
            query, keep_blank_values=True, strict_parsing=False, errors="strict", max_num_fields=MAX_PARAMETERS
        )
    except (ValueError, UnicodeDecodeError):
        raise PermalinkError(f"Parâmetros do link ilegíveis (no máximo {MAX_PARAMETERS}, em UTF-8).") from None
    fields: dict[str, Any] = {}
    seen: set[tuple[str, ...]] = set()
    continue_values: list[str] = []
    passthrough: list[tuple[str, str]] = []
    for name, value in pairs:
        if name == "continue_to":  # an unsafe destination falls back to the default (BCP-PL-04), never a 400
            continue_values.append(value)
            continue
        if _has_control(name) or _has_control(value):
            raise PermalinkError("O link contém caracteres de controle.")
        if len(value) > MAX_VALUE_LENGTH:
            raise PermalinkError(f"Valor longo demais no parâmetro {name[:40]!r} (máximo {MAX_VALUE_LENGTH}).")
        tokens = _pointer(name)
        if tokens[0] not in BCP_ROOTS:
            if not is_sensitive(name):
                passthrough.append((name, value))
            continue
        if len(tokens) > MAX_POINTER_DEPTH + 1:
            raise PermalinkError(f"Caminho longo demais no parâmetro {name[:60]!r}.")
        if tokens in seen:
            raise PermalinkError(f"O campo {'/'.join(tokens)} aparece mais de uma vez no link (ambíguo).")
        seen.add(tokens)
        if tokens[0] == "line_items" and len(tokens) in (3, 4) and tokens[1].isdigit() and len(tokens[1]) <= 2:
            line = fields.setdefault("_lines", {}).setdefault(int(tokens[1]), {})
            if tokens[2:] == ("item", "id"):
                line["id"] = value
            elif tokens[2:] == ("quantity",):
                line["quantity"] = value
            continue
        _set(fields, tokens, value)  # not writable → consumed and dropped
    items = _query_items(items, fields)
    codes = fields.get("discounts", {}).get("codes")
    if isinstance(codes, dict):
        if sorted(codes) != list(range(len(codes))):
            raise PermalinkError("discounts/codes/N deve numerar os cupons a partir de 0, sem lacunas.")
        fields["discounts"]["codes"] = [codes[i] for i in range(len(codes))]
    # Duplicated continue_to is ambiguous: the default destination, never the first or the last one.
    # parse_qsl already percent-decoded the value once (the single decoding pass of §15).
    continue_to = safe_continue_to(continue_values[0]) if len(continue_values) == 1 else None
    return Permalink(items=items, fields=fields, continue_to=continue_to, passthrough=tuple(passthrough))


def attribution_rewrites(fields: dict[str, Any], passthrough: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """Attribution fields shown to the destination's analytics as plain parameters (`utm_source=…`)."""
    taken = {name for name, _value in passthrough}
    return [
        (name, value)
        for name, value in (fields.get("attribution") or {}).items()
        if name not in taken and not is_sensitive(name)
    ]
