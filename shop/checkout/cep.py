"""CEP (Brazilian postal code): validation, the offline CEP-prefix → UF table, and the address lookup.

The table is the Correios range allocation by state: it always answers, with the UF only. The lookup asks a
CEP provider speaking ViaCEP's public JSON shape (`CEP_PROVIDER_URL`, `{cep}` replaced by the 8 digits) for
street, bairro and city, with a short total deadline and a cache; when the provider is unreachable, slow or answers
nonsense, the lookup falls back to the table, so the checkout never waits on it nor breaks because of it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass

from django.conf import settings
from django.core.cache import cache

from kernel.http import OutboundError, request

logger = logging.getLogger(__name__)

_CEP_RE = re.compile(r"^\s*(\d{5})-?(\d{3})\s*$")

# (first CEP as int, last CEP as int, UF), inclusive, 8-digit integers.
_RANGES: tuple[tuple[int, int, str], ...] = (
    (1_000_000, 19_999_999, "SP"),
    (20_000_000, 28_999_999, "RJ"),
    (29_000_000, 29_999_999, "ES"),
    (30_000_000, 39_999_999, "MG"),
    (40_000_000, 48_999_999, "BA"),
    (49_000_000, 49_999_999, "SE"),
    (50_000_000, 56_999_999, "PE"),
    (57_000_000, 57_999_999, "AL"),
    (58_000_000, 58_999_999, "PB"),
    (59_000_000, 59_999_999, "RN"),
    (60_000_000, 63_999_999, "CE"),
    (64_000_000, 64_999_999, "PI"),
    (65_000_000, 65_999_999, "MA"),
    (66_000_000, 68_899_999, "PA"),
    (68_900_000, 68_999_999, "AP"),
    (69_000_000, 69_299_999, "AM"),
    (69_300_000, 69_399_999, "RR"),
    (69_400_000, 69_899_999, "AM"),
    (69_900_000, 69_999_999, "AC"),
    (70_000_000, 72_799_999, "DF"),
    (72_800_000, 72_999_999, "GO"),
    (73_000_000, 73_699_999, "DF"),
    (73_700_000, 76_799_999, "GO"),
    (76_800_000, 76_999_999, "RO"),
    (77_000_000, 77_999_999, "TO"),
    (78_000_000, 78_899_999, "MT"),
    (79_000_000, 79_999_999, "MS"),
    (80_000_000, 87_999_999, "PR"),
    (88_000_000, 89_999_999, "SC"),
    (90_000_000, 99_999_999, "RS"),
)

UFS: frozenset[str] = frozenset(uf for _, _, uf in _RANGES)


def cep_digits(raw: str) -> str | None:
    """ "01310-100" / "01310100" → "01310100"; None when the format is wrong."""
    match = _CEP_RE.match(raw or "")
    return f"{match.group(1)}{match.group(2)}" if match else None


def cep_format(digits: str) -> str:
    """ "01310100" → "01310-100"."""
    return f"{digits[:5]}-{digits[5:]}"


def cep_to_int(digits: str) -> int:
    return int(digits)


def cep_uf(digits: str) -> str | None:
    """UF of a CEP by its range; None when no state uses it (e.g. "00000-000")."""
    value = int(digits)
    for start, end, uf in _RANGES:
        if start <= value <= end:
            return uf
    return None


# --- address lookup (provider boundary) --------------------------------------------------------------

_CACHE_PREFIX = "cep:v1:"
_MAX_BODY = 16 * 1024  # a ViaCEP answer is ~300 bytes; anything much larger is not one


@dataclass(frozen=True)
class CepAddress:
    """What a CEP tells: `found` False = no such CEP (the provider said so); `source` "provider" or "offline"."""

    cep: str  # "01310-100"
    uf: str
    city: str = ""
    neighborhood: str = ""
    street: str = ""
    found: bool = True
    source: str = "provider"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class _ProviderUnavailable(Exception):
    """Timeout, network error, HTTP error or an answer that is not ViaCEP's JSON: use the offline table."""


def _text(payload: dict[str, object], key: str, limit: int) -> str:
    value = payload.get(key, "")
    return value.strip()[:limit] if isinstance(value, str) else ""


def _parse(digits: str, payload: object) -> CepAddress:
    """ViaCEP shape: {"cep", "logradouro", "bairro", "localidade", "uf", …} or {"erro": true} (also "true")."""
    if not isinstance(payload, dict):
        raise _ProviderUnavailable("answer is not a JSON object")
    if payload.get("erro") in (True, "true"):
        return CepAddress(cep=cep_format(digits), uf="", found=False)
    uf = _text(payload, "uf", 2).upper()
    if uf not in UFS:
        raise _ProviderUnavailable(f"no valid UF in the answer: {uf!r}")
    return CepAddress(
        cep=cep_format(digits),
        uf=uf,
        city=_text(payload, "localidade", 100),
        neighborhood=_text(payload, "bairro", 100),
        street=_text(payload, "logradouro", 200),
    )


def _ask_provider(digits: str) -> CepAddress:
    url = settings.CEP_PROVIDER_URL.replace("{cep}", digits)
    try:
        # The kernel's client: the whole lookup (connect to last byte) within the timeout, a small body.
        # The provider is configuration, not input: no SSRF guard.
        response = request("GET", url, headers={"Accept": "application/json"}, max_bytes=_MAX_BODY,
                           deadline=settings.CEP_PROVIDER_TIMEOUT_MS / 1000, guard=False)  # fmt: skip
    except OutboundError as exc:
        raise _ProviderUnavailable(exc.kind) from exc
    if response.status_code != 200:
        raise _ProviderUnavailable(f"HTTP {response.status_code}")
    try:
        payload = response.json()
    except ValueError as exc:
        raise _ProviderUnavailable("answer is not JSON") from exc
    return _parse(digits, payload)


def _offline(digits: str) -> CepAddress:
    uf = cep_uf(digits)
    return CepAddress(cep=cep_format(digits), uf=uf or "", found=uf is not None, source="offline")


def cep_lookup(raw: str) -> CepAddress | None:
    """The address of a CEP (None when the format is wrong). Never raises for provider trouble.

    Cached: a provider answer (found or not) for `CEP_CACHE_SECONDS`; the offline fallback is not cached,
    so the next buyer gets the street again as soon as the provider is back.
    """
    digits = cep_digits(raw)
    if digits is None:
        return None
    key = _CACHE_PREFIX + digits
    cached = cache.get(key)
    if isinstance(cached, dict):
        return CepAddress(**cached)
    if not settings.CEP_PROVIDER_URL:
        return _offline(digits)
    try:
        address = _ask_provider(digits)
    except _ProviderUnavailable as exc:
        logger.warning("CEP provider unavailable for %s (%s): offline CEP table used", digits, exc)
        return _offline(digits)
    cache.set(key, address.as_dict(), settings.CEP_CACHE_SECONDS)
    return address


def cep_cache_forget(raw: str) -> None:
    """Drop a cached answer (tests, or a merchant correcting a wrong street)."""
    digits = cep_digits(raw)
    if digits is not None:
        cache.delete(_CACHE_PREFIX + digits)
