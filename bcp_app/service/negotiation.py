"""Platform profile resolution and capability negotiation (BCP §3).

`parse_agent_header` reads `BCP-Agent: profile="…"` (RFC 8941 Dictionary); `get_platform_profile`
fetches through the outbound client with a Postgres cache (TTL ≥ 60 s, longer `Cache-Control`
honoured, failures backed off) and validates against `profile.json#/$defs/platform_schema`;
`negotiate` intersects capabilities and prunes orphan extensions.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from bcp_app.models import ProfileCacheEntry
from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.names import CHECKOUT, PROTOCOL_VERSION
from bcp_app.protocol.sfv import Item, SFVError, parse_dictionary
from bcp_app.protocol.ucp import (
    UCP_2026_01_11,
    is_ucp_profile,
    platform_profile_to_bcp,
    platform_ucp_version,
    profile_path_to_ucp,
)
from bcp_app.service import outbound
from bcp_app.service.discovery import capability_registry
from bcp_app.service.flight import single_flight
from kernel.db_connections import release_db_connection
from kernel.json_limits import JsonLimitError, loads_bounded
from kernel.ops import request_cache, setting

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "jsonschemas"  # bcp_app/jsonschemas
PROFILE_MAX_BYTES = 256 * 1024  # BCP §3: cap ≥ 128 KiB
TTL_FLOOR = 60
TTL_CEILING = 24 * 3600
STALE_GRACE = timedelta(hours=1)  # serve a known-good profile this long past expiry when a refresh fails
CACHE_MAX_ENTRIES = 10_000
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?", re.IGNORECASE)


AGENT_HEADER = "BCP-Agent"  # the header a platform names itself with on the BCP face; UCP's face reads `UCP-Agent`


def parse_agent_header(value: str | None, header: str = AGENT_HEADER) -> str:
    """Profile URL from the agent header (`BCP-Agent`, or `UCP-Agent` on UCP's face: `header` names the one the
    request arrived with, so a refusal names it); `invalid_profile_url` when missing or malformed (BCP-NEG-01)."""
    return validate_profile_url(_profile_member(value, header))


@lru_cache(maxsize=256)
def _profile_member(value: str | None, header: str) -> str:
    # A platform sends the same header on every call: parsed once per process (refusals are not remembered).
    if not value or not value.strip():
        raise ProtocolError("invalid_profile_url", f'O cabeçalho {header} com profile="https://…" é obrigatório.')
    try:
        parsed = parse_dictionary(value.strip())
    except SFVError as exc:
        raise ProtocolError(
            "invalid_profile_url", f'{header} não é um dicionário RFC 8941 válido: use profile="https://…".'
        ) from exc
    member = parsed.get("profile")
    if not isinstance(member, Item) or not isinstance(member.value, str):
        raise ProtocolError("invalid_profile_url", f"{header} precisa do membro profile com uma URL entre aspas.")
    return member.value


PROFILE_URL_MAX = 2048


# Profile URLs that passed `validate_profile_url`, asked twice per request (the agent header, then identity) with the
# same few URLs (issue 34): an https one for good (its answer depends on nothing else), an http one while the
# outbound allow-list that let it pass is the one in the settings (development and tests).
_HTTPS = object()
_VALID: dict[str, object] = {}
_VALID_MAX = 1024


def validate_profile_url(url: Any) -> str:
    passed = _VALID.get(url) if isinstance(url, str) else None
    if passed is not None and (passed is _HTTPS or passed is setting.value("BCP_OUTBOUND_ALLOWLIST")):
        return url
    if not isinstance(url, str) or not url:
        raise ProtocolError("invalid_profile_url", "A URL do perfil da plataforma é obrigatória.")
    if len(url) > PROFILE_URL_MAX:
        raise ProtocolError(
            "invalid_profile_url",
            f"A URL do perfil da plataforma é longa demais: {len(url)} caracteres, o máximo é {PROFILE_URL_MAX}.",
        )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise ProtocolError("invalid_profile_url", "A URL do perfil da plataforma é inválida.") from exc
    host = (parts.hostname or "").lower()
    if not host or parts.username or parts.password or parts.fragment:
        raise ProtocolError("invalid_profile_url", "A URL do perfil da plataforma é inválida.")
    if len(_VALID) >= _VALID_MAX:
        _VALID.clear()
    if parts.scheme == "https":
        _VALID[url] = _HTTPS
        return url
    allowlist = setting.value("BCP_OUTBOUND_ALLOWLIST")  # the object the next call's identity check compares
    if parts.scheme == "http" and host in {h.strip().lower() for h in allowlist or ()}:
        _VALID[url] = allowlist
        return url  # development and tests only (allow-listed host)
    raise ProtocolError("invalid_profile_url", "A URL do perfil da plataforma precisa usar https.")


@lru_cache(maxsize=1)
def _platform_validator() -> Any:
    resources = []
    for path in SCHEMA_DIR.rglob("*.json"):
        document = json.loads(path.read_text())
        if "$id" in document:
            resources.append((document["$id"], Resource.from_contents(document)))
    registry = Registry().with_resources(resources)
    schema = {"$ref": "https://bcp.dev.br/draft/schemas/profile.json#/$defs/platform_schema"}
    return Draft202012Validator(schema, registry=registry)


def validate_platform_profile(document: Any, *, ucp_original: dict[str, Any] | None = None) -> None:
    """Raise `profile_malformed` naming the first offending member; `ucp_original`: the UCP profile `document` was
    read from (`platform_profile_to_bcp`), whose own names and paths the message then uses."""
    # The first error found, not all of them sorted: a profile with thousands of bad members is refused
    # as fast as one with a single bad member.
    error = next(iter(_platform_validator().iter_errors(document)), None)
    if error is not None:
        path = list(error.absolute_path)
        if ucp_original is not None:
            path = profile_path_to_ucp(ucp_original, path)
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) or "(raiz)"
        raise ProtocolError("profile_malformed", f"Perfil da plataforma inválido em ${where}: {_schema_reason(error)}.")


_JSON_TYPES = {
    "object": "um objeto",
    "array": "uma lista",
    "string": "um texto",
    "integer": "um número inteiro",
    "number": "um número",
    "boolean": "true ou false",
    "null": "null",
}
# What the platform's developer reads for a JSON Schema keyword the profile broke (jsonschema says it in English).
_SCHEMA_REASONS = {
    "enum": "valor fora dos permitidos",
    "const": "valor diferente do exigido",
    "pattern": "formato inválido",
    "format": "formato inválido",
    "minLength": "texto curto demais",
    "maxLength": "texto longo demais",
    "minItems": "lista curta demais",
    "maxItems": "lista longa demais",
    "minimum": "número pequeno demais",
    "maximum": "número grande demais",
    "additionalProperties": "membro não permitido",
    "uniqueItems": "itens repetidos",
    "oneOf": "não corresponde a exatamente um formato aceito",
    "anyOf": "não corresponde a nenhum formato aceito",
}


def _schema_reason(error: Any) -> str:
    if error.validator == "type":
        expected = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        return "esperado " + " ou ".join(_JSON_TYPES.get(str(t), str(t)) for t in expected)
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [name for name in error.validator_value if name not in error.instance]
        return "falta o membro obrigatório " + ", ".join(f"“{name}”" for name in missing)
    return _SCHEMA_REASONS.get(str(error.validator), "valor inválido")


# An outbound failure as the platform's developer reads it (outbound's own messages are for the logs).
_UNREACHABLE = {
    "timeout": "o servidor demorou demais para responder",
    "dns": "o nome do servidor não foi encontrado",
    "connect": "não foi possível conectar",
    "blocked": "o endereço aponta para uma rede não pública",
    "invalid_url": "URL inválida",
    "scheme": "só https é aceito",
    "redirect": "redirecionamentos não são seguidos",
    "too_large": "resposta grande demais",
}


def _ttl(cache_control: str) -> int:
    match = _MAX_AGE.search(cache_control or "")
    max_age = int(match.group(1)) if match else 0
    return max(TTL_FLOOR, min(max_age, TTL_CEILING))


@lru_cache(maxsize=1024)  # a platform names the same profile on every call, hashed several times per call
def url_hash(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def _fetch(url: str) -> tuple[dict[str, Any], int]:
    host = urlsplit(url).hostname or url
    try:
        response = outbound.get(
            url, max_bytes=PROFILE_MAX_BYTES, deadline=float(getattr(settings, "BCP_PROFILE_FETCH_TIMEOUT", 5))
        )
    except outbound.OutboundError as exc:
        reason = _UNREACHABLE.get(exc.kind, "falha de rede")
        raise ProtocolError("profile_unreachable", f"Perfil da plataforma inacessível: {reason} ({host}).") from exc
    if response.status_code != 200:
        raise ProtocolError("profile_unreachable", f"Perfil da plataforma respondeu HTTP {response.status_code}.")
    try:
        document = loads_bounded(response.body, max_bytes=PROFILE_MAX_BYTES)
    except JsonLimitError as exc:
        reason = "aninhado demais" if exc.kind == "too_deep" else "não é JSON"
        raise ProtocolError("profile_malformed", f"O perfil da plataforma {reason}.") from exc
    original = None
    if is_ucp_profile(document):
        original, document = document, platform_profile_to_bcp(document)  # a plain UCP platform: the name map
    validate_platform_profile(document, ucp_original=original)
    return document, _ttl(response.headers.get("cache-control", ""))


def _record_failure(url: str, error: ProtocolError) -> None:
    now = timezone.now()
    with transaction.atomic():
        entry, _ = ProfileCacheEntry.objects.select_for_update().get_or_create(
            url_hash=url_hash(url), defaults={"url": url, "fetched_at": now, "expires_at": now}
        )
        entry.failure_count += 1
        entry.failed_until = now + timedelta(seconds=min(300, 5 * 2 ** min(entry.failure_count - 1, 8)))
        entry.last_error_code, entry.last_error = error.code, error.content[:300]
        entry.save()
    _prune_cache(now)  # failures add rows too: a flood of unreachable profile URLs stays within the cap


def profile_memo_key(url: str) -> str:
    """The cache entry `get_platform_profile` reads first."""
    return f"bcp:profile:{url_hash(url)}"


def profile_version_key(url: str) -> str:
    """A random integer token written beside the profile's cache entry, for as long (resolve_context prefetches
    it): while it is the one a process negotiated under, that process reuses its own copy of the profile and
    of the negotiated capabilities (`negotiated`), with no profile to unpickle and nothing to negotiate."""
    return f"bcp:profile:{url_hash(url)}:v"


def _memo(url: str, body: dict[str, Any], expires_at: Any, now: Any) -> None:
    # Per process (or Redis) in front of the Postgres cache, for the profile's own remaining TTL.
    seconds = int((expires_at - now).total_seconds())
    if seconds > 0:
        request_cache.set(profile_memo_key(url), body, seconds)
        # an integer: Django's Redis serializer reads it back with `int()` (a string was a failed `int()`, then a
        # pickle, on every request)
        request_cache.set(profile_version_key(url), secrets.randbits(52), seconds)


def forget_profile(url: str) -> None:
    """Drop the cached copy of the profile at `url` (and so every process's negotiated copy of it)."""
    request_cache.forget(profile_memo_key(url), profile_version_key(url))


# Per process: profile URL → (version token, profile, negotiated capabilities). Bounded: a flood of profile URLs
# empties it rather than growing it.
_NEGOTIATED: dict[str, tuple[object, dict[str, Any], dict[str, str]]] = {}
_NEGOTIATED_MAX = 1024


def negotiated(url: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The validated profile at `url` and the capabilities negotiated with it (`negotiate`), this process's own
    copy while the cache's version token for the URL is the one it was made under; else read and negotiated
    again (`get_platform_profile`). Both are shared by the requests of this process: read them, never change
    them."""
    version = request_cache.get(profile_version_key(url))
    kept = _NEGOTIATED.get(url)
    if kept is not None and version is not None and kept[0] == version:
        return kept[1], kept[2]
    profile = get_platform_profile(url)
    capabilities = negotiate(profile)
    version = request_cache.get(profile_version_key(url))  # written by get_platform_profile when it read anew
    if version is not None:
        if len(_NEGOTIATED) >= _NEGOTIATED_MAX:
            _NEGOTIATED.clear()
        _NEGOTIATED[url] = (version, profile, capabilities)
    return profile, capabilities


def cached_platform_profile(url: str) -> dict[str, Any] | None:
    """The profile when this process (or Redis) has it fresh, else None; never a query or a fetch."""
    return request_cache.get(profile_memo_key(url))


def get_platform_profile(url: str, *, force_refresh: bool = False) -> dict[str, Any]:
    """The validated platform profile at `url` (BCP-NEG-02/03), from cache when fresh.

    A fetch holds no database connection (it goes back to the pool first) and no transaction; the
    cache row is written after it. Concurrent fetches of one URL in this process share one request.
    """
    if not force_refresh and (memo := request_cache.get(profile_memo_key(url))) is not None:
        return memo
    now = timezone.now()
    entry = ProfileCacheEntry.objects.filter(url_hash=url_hash(url)).first()
    if entry is not None and not force_refresh:
        if entry.body is not None and entry.expires_at > now:
            _memo(url, entry.body, entry.expires_at, now)
            return entry.body
        if entry.failed_until and entry.failed_until > now:
            if entry.body is not None and entry.expires_at + STALE_GRACE > now:
                return entry.body
            code = entry.last_error_code or "profile_unreachable"
            raise ProtocolError(code, entry.last_error or "Perfil da plataforma inacessível.")
    usable = entry is not None and entry.body is not None and entry.expires_at + STALE_GRACE > now
    stale = entry.body if usable and entry is not None else None
    release_db_connection()  # a slow profile must not starve the pool
    try:
        document, _ = single_flight(url, lambda: _fetch_and_store(url))
    except ProtocolError:
        if stale is not None:
            return stale
        raise
    return document


def _fetch_and_store(url: str) -> tuple[dict[str, Any], int]:
    """Fetch (no connection held), then write the cache row, success or failure."""
    try:
        document, ttl = _fetch(url)
    except ProtocolError as exc:
        _record_failure(url, exc)
        raise
    now = timezone.now()
    ProfileCacheEntry.objects.update_or_create(
        url_hash=url_hash(url),
        defaults={
            "url": url,
            "body": document,
            "fetched_at": now,
            "expires_at": now + timedelta(seconds=ttl),
            "failure_count": 0,
            "failed_until": None,
            "last_error_code": "",
            "last_error": "",
        },
    )
    _prune_cache(now)
    _memo(url, document, now + timedelta(seconds=ttl), now)
    return document, ttl


def profile_age_seconds(url: str) -> float | None:
    entry = ProfileCacheEntry.objects.filter(url_hash=url_hash(url)).only("fetched_at").first()
    return None if entry is None else (timezone.now() - entry.fetched_at).total_seconds()


def _prune_cache(now: Any) -> None:
    # Bounded cache: old rows go first; the cap protects against profile-URL floods.
    ProfileCacheEntry.objects.filter(fetched_at__lt=now - timedelta(days=2)).delete()
    limit = getattr(settings, "BCP_PROFILE_CACHE_MAX", CACHE_MAX_ENTRIES)
    extra = ProfileCacheEntry.objects.count() - limit
    if extra > 0:
        old = ProfileCacheEntry.objects.order_by("fetched_at").values_list("id", flat=True)[:extra]
        ProfileCacheEntry.objects.filter(id__in=list(old)).delete()


def check_version(profile: dict[str, Any]) -> None:
    version = profile.get("ucp", {}).get("version")
    if version != PROTOCOL_VERSION:
        raise ProtocolError(
            "version_unsupported",
            f"Versão {version!r} do protocolo não suportada; esta loja fala {PROTOCOL_VERSION}.",
            continue_url=f"{settings.BCP_PUBLIC_URL}/.well-known/bcp",
        )


def _parents(entry: dict[str, Any]) -> list[str]:
    extends = entry.get("extends")
    if isinstance(extends, str):
        return [extends]
    return [p for p in extends or [] if isinstance(p, str)]


def negotiate(profile: dict[str, Any], ours: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, str]:
    """Active capabilities (name → version), BCP-NEG-05: name match, highest exact shared version, pruning."""
    ours = capability_registry() if ours is None else ours
    theirs = profile.get("ucp", {}).get("capabilities") or {}
    active: dict[str, str] = {}
    parents: dict[str, list[str]] = {}
    for name, entries in ours.items():
        their_entries = theirs.get(name)
        if not isinstance(their_entries, list):
            continue
        shared = {e.get("version") for e in entries} & {e.get("version") for e in their_entries if isinstance(e, dict)}
        shared.discard(None)
        if shared:
            active[name] = max(shared)  # YYYY-MM-DD strings sort chronologically
            parents[name] = [p for e in entries for p in _parents(e)]
    changed = True
    while changed:
        changed = False
        for name in list(active):
            if parents[name] and not any(p in active for p in parents[name]):
                del active[name]
                changed = True
    return active


def with_core_checkout_2026_01_11(
    profile: dict[str, Any], capabilities: dict[str, str], ours: dict[str, list[dict[str, Any]]] | None = None
) -> dict[str, str]:
    """The capabilities a checkout operation runs under for a platform whose profile is UCP 2026-01-11 and names no
    checkout: the negotiated ones plus the core checkout, without any extension of checkout.

    UCP 2026-01-11 makes no capability of the intersection a condition of an operation: overview.md (tag
    v2026-01-11) "Version Negotiation", lines 1073-1074: "If platform version ≤ business version: Business
    **MUST** process the request"; its "Business Requirements" (lines 457-465) compute the intersection and
    exclude the extensions whose parent is not in it. So such a platform (the conformance suite's own profile
    lists only `dev.ucp.shopping.order`) is served the core checkout, and fulfillment, discount, buyer consent and
    AP2 stay off: checkout is not in the intersection, their parent is missing. From UCP 2026-04-08 on
    (overview.md "Request-Time Validation", lines 1914-1917: a capability the requested operation requires with
    no mutual version → `capabilities_incompatible`) and on BCP (§3) the refusal stands: any other profile gets
    `capabilities` unchanged."""
    if CHECKOUT in capabilities or platform_ucp_version(profile) != UCP_2026_01_11:
        return capabilities
    ours = capability_registry() if ours is None else ours
    offered = [e.get("version") for e in ours.get(CHECKOUT, []) if isinstance(e.get("version"), str)]
    if not offered:
        return capabilities
    # checkout's extensions, and theirs: off here even when another parent keeps them active (discount for a cart)
    off = {CHECKOUT}
    grew = True
    while grew:
        more = {name for name, entries in ours.items() if any(set(_parents(e)) & off for e in entries)} - off
        off |= more
        grew = bool(more)
    kept = {name: version for name, version in capabilities.items() if name not in off}
    return {CHECKOUT: max(offered), **kept}


def platform_capability_config(profile: dict[str, Any], name: str) -> dict[str, Any]:
    entries = profile.get("ucp", {}).get("capabilities", {}).get(name) or []
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("config"), dict):
            return entry["config"]
    return {}
