"""BR Code ("Pix Copia e Cola"): EMV-MPM TLV build/parse and CRC16/CCITT-FALSE (PIX.md §6).

Own module on purpose (PIX.md §9): the PyPI packages drop CRC leading zeros or hard-code lengths.
Lengths count characters, so every value is restricted to ASCII before building.
"""

from __future__ import annotations

import binascii
import re
import unicodedata
from dataclasses import dataclass, field

from payments.money import cents_to_decimal, decimal_to_cents

PIX_GUI = "br.gov.bcb.pix"
MAX_LENGTH = 512
_NESTED = {"26", "62", "80"}
_AMOUNT = re.compile(r"^\d{1,10}\.\d{2}$")
_STATIC_TXID = re.compile(r"^[A-Za-z0-9]{1,25}$")


class BRCodeError(ValueError):
    """A BR Code that cannot be built or does not validate; `reason` names the failed rule."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def crc16(payload: str) -> str:
    # CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR) == crc_hqx.
    return f"{binascii.crc_hqx(payload.encode('ascii'), 0xFFFF):04X}"


def tlv(tag: str, value: str) -> str:
    if not value.isascii():
        raise BRCodeError(f"field {tag}: value must be ASCII")
    if not 1 <= len(value) <= 99:
        raise BRCodeError(f"field {tag}: value length must be 1..99, got {len(value)}")
    return f"{tag}{len(value):02d}{value}"


def merchant_text(value: str, max_length: int) -> str:
    """Strip accents, uppercase and cut to the EMV limit (59: 25 chars, 60: 15 chars)."""
    ascii_value = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    cleaned = " ".join(ascii_value.upper().split())[:max_length].strip()
    if not cleaned:
        raise BRCodeError("merchant name/city must contain at least one ASCII character")
    return cleaned


def _finish(body: str) -> str:
    body += "6304"
    return body + crc16(body)


def build_dynamic(*, location: str, merchant_name: str, merchant_city: str) -> str:
    """Dynamic `cob` code: `010212`, GUI + `25` location (no scheme), `62.05=***`, no amount (54)."""
    if location.startswith(("https://", "http://")):
        raise BRCodeError("field 26.25: location must not carry the URL scheme")
    if len(location) > 77:
        raise BRCodeError("field 26.25: location longer than 77 characters")
    body = (
        tlv("00", "01")
        + tlv("01", "12")
        + tlv("26", tlv("00", PIX_GUI) + tlv("25", location))
        + tlv("52", "0000")
        + tlv("53", "986")
        + tlv("58", "BR")
        + tlv("59", merchant_name)
        + tlv("60", merchant_city)
        + tlv("62", tlv("05", "***"))
    )
    return _finish(body)


def build_static(
    *,
    key: str,
    merchant_name: str,
    merchant_city: str,
    amount_cents: int | None = None,
    txid: str = "***",
    description: str = "",
) -> str:
    """Static code: Pix key in `26.01`, optional free text `26.02`, optional amount `54`, txid in `62.05`."""
    if txid != "***" and not _STATIC_TXID.match(txid):
        raise BRCodeError("field 62.05: static txid must be 1..25 characters [A-Za-z0-9] or ***")
    account = tlv("00", PIX_GUI) + tlv("01", key) + (tlv("02", description) if description else "")
    body = tlv("00", "01") + tlv("26", account) + tlv("52", "0000") + tlv("53", "986")
    if amount_cents is not None:
        if amount_cents <= 0:
            raise BRCodeError("field 54: amount must be positive")
        body += tlv("54", cents_to_decimal(amount_cents))
    body += tlv("58", "BR") + tlv("59", merchant_name) + tlv("60", merchant_city) + tlv("62", tlv("05", txid))
    return _finish(body)


def parse_tlv(data: str, *, where: str = "") -> list[tuple[str, str]]:
    """Split a TLV string into (tag, value) pairs; any overrun or junk raises BRCodeError."""
    fields: list[tuple[str, str]] = []
    pos = 0
    while pos < len(data):
        head = data[pos : pos + 4]
        if len(head) < 4 or not head.isdigit():
            raise BRCodeError(f"TLV header malformed at {where}{pos}")
        tag, length = head[:2], int(head[2:])
        value = data[pos + 4 : pos + 4 + length]
        if len(value) != length:
            raise BRCodeError(f"TLV overrun in field {where}{tag}")
        fields.append((tag, value))
        pos += 4 + length
    return fields


@dataclass(frozen=True)
class BRCode:
    raw: str
    fields: dict[str, str]
    account: dict[str, str]
    additional: dict[str, str]
    recurrence: dict[str, str] = field(default_factory=dict)

    @property
    def is_dynamic(self) -> bool:
        return self.fields.get("01") == "12" and "25" in self.account

    @property
    def location(self) -> str | None:
        return self.account.get("25")

    @property
    def key(self) -> str | None:
        return self.account.get("01")

    @property
    def txid(self) -> str | None:
        return self.additional.get("05")

    @property
    def amount_cents(self) -> int | None:
        raw = self.fields.get("54")
        return None if raw is None else decimal_to_cents(raw)

    @property
    def merchant_name(self) -> str:
        return self.fields.get("59", "")

    @property
    def merchant_city(self) -> str:
        return self.fields.get("60", "")


def parse(code: str) -> BRCode:
    """Parse and check the generic rules of §6.3 (any valid Pix BR Code, static or dynamic)."""
    if not isinstance(code, str) or not code:
        raise BRCodeError("empty BR Code")
    if not code.isascii():
        raise BRCodeError("BR Code must be ASCII")
    if len(code) > MAX_LENGTH:
        raise BRCodeError(f"BR Code longer than {MAX_LENGTH} characters")
    if not code.startswith("000201"):
        raise BRCodeError("BR Code must start with 000201")
    top = parse_tlv(code)
    tags = [tag for tag, _ in top]
    if tags[-1] != "63" or len(top[-1][1]) != 4:
        raise BRCodeError("BR Code must end with the CRC field 6304XXXX")
    if tags.count("63") != 1:
        raise BRCodeError("CRC field 63 must appear once, last")
    if crc16(code[:-4]) != code[-4:].upper():
        raise BRCodeError("CRC mismatch")
    if len(set(tags)) != len(tags):
        raise BRCodeError("duplicate top-level field")
    fields = dict(top)
    nested = {tag: dict(parse_tlv(fields[tag], where=f"{tag}.")) for tag in _NESTED if tag in fields}
    account = nested.get("26", {})
    if "26" not in fields or account.get("00", "").lower() != PIX_GUI:
        raise BRCodeError("field 26.00 must be the Pix GUI br.gov.bcb.pix")
    # Recurrence-only codes (Pix Automático, field 80) carry their location in 80, not in 26.
    if "01" not in account and "25" not in account and "80" not in fields:
        raise BRCodeError("field 26 must carry a key (01) or a location (25)")
    for tag, expected in (("52", "0000"), ("53", "986"), ("58", "BR")):
        if fields.get(tag) != expected:
            raise BRCodeError(f"field {tag} must be {expected}")
    for tag in ("59", "60"):
        if not fields.get(tag):
            raise BRCodeError(f"field {tag} is required")
    if "54" in fields and not _AMOUNT.match(fields["54"]):
        raise BRCodeError("field 54: amount must look like 5999.00")
    additional = nested.get("62", {})
    txid = additional.get("05")
    if not txid:
        raise BRCodeError("field 62.05 (txid) is required")
    if "25" not in account and txid != "***" and not _STATIC_TXID.match(txid):
        raise BRCodeError("field 62.05: static txid must be 1..25 characters [A-Za-z0-9] or ***")
    return BRCode(raw=code, fields=fields, account=account, additional=additional, recurrence=nested.get("80", {}))


def validate_psp_br_code(code: str, *, amount_cents: int) -> BRCode:
    """Validate a `pixCopiaECola` returned for one of our `cob` charges (dynamic, amount matches if present)."""
    parsed = parse(code)
    if not parsed.is_dynamic:
        raise BRCodeError("a cob charge must return a dynamic BR Code (010212 and 26.25 location)")
    if parsed.amount_cents is not None and parsed.amount_cents != amount_cents:
        raise BRCodeError(f"field 54: amount {parsed.fields['54']} differs from the charge amount")
    return parsed
