"""Platform records and API-key authentication (services + selectors for `Platform`)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from functools import lru_cache

from django.db import transaction
from django.utils import timezone

from bcp_app.models import Platform
from bcp_app.protocol.errors import ProtocolError
from bcp_app.service import ratelimit
from kernel.ops import request_cache

_KEY_RE = re.compile(r"^bcp_([0-9a-f]{12})_([A-Za-z0-9_-]{20,100})$")


@dataclass(frozen=True)
class NewPlatform:
    platform: Platform
    api_key: str  # shown once; only its hash is stored


# A platform presents the same key on every call, and each call hashes it and matches its form more than once
# (cache key, platform lookup, failure windows): remembered per process, a few hundred keys at most (issue 34).
KEYS_REMEMBERED = 512


@lru_cache(maxsize=KEYS_REMEMBERED)
def _hash_key(api_key: str) -> str:
    # The key carries 256 bits of entropy, so a plain SHA-256 is enough (no slow KDF needed).
    return hashlib.sha256(api_key.encode()).hexdigest()


@lru_cache(maxsize=KEYS_REMEMBERED)
def _key_parts(api_key: str) -> tuple[str, str] | None:
    """(prefix, hash) of a well-formed key (stripped), None for a malformed one."""
    stripped = api_key.strip()
    match = _KEY_RE.match(stripped)
    return (match.group(1), _hash_key(stripped)) if match else None


def platform_create(*, name: str, profile_url: str = "") -> NewPlatform:
    name = name.strip()
    if not name:
        raise ValueError("name: o nome da plataforma é obrigatório")
    with transaction.atomic():
        prefix = secrets.token_hex(6)
        api_key = f"bcp_{prefix}_{secrets.token_urlsafe(32)}"
        platform = Platform.objects.create(
            name=name, key_prefix=prefix, key_hash=_hash_key(api_key), profile_url=profile_url.strip()
        )
    return NewPlatform(platform=platform, api_key=api_key)


def platform_revoke(*, public_id: str) -> Platform:
    with transaction.atomic():
        platform = Platform.objects.select_for_update().get(public_id=public_id)
        if platform.active:
            platform.active = False
            platform.revoked_at = timezone.now()
            platform.save(update_fields=["active", "revoked_at"])
    return platform


# Platforms by API-key hash, cached briefly: every agent request authenticates. The cache holds a version
# token for the key (a random integer, read in resolve_context's one round trip: Django's Redis serializer reads an
# integer back with `int()`, where a string token was a pickle behind a failed `int()`); each process keeps the platform
# it read under that token, so a request whose token it knows unpickles no model and runs no query. A save
# (revoke) drops the token at once (`platform_cache_drop`, on post_save), and every process reads the row again;
# a cache that cannot hear other processes (local memory) keeps a revoked key usable there for at most this long.
PLATFORM_CACHE_SECONDS = 30
_KEPT_MAX = 1024
_kept: dict[str, tuple[int, Platform]] = {}  # key hash → (version token, platform), this process's


def _platform_key(key_hash: str) -> str:
    return f"bcp:platform:{key_hash}"


def key_prefix(api_key: str) -> str | None:
    """The public prefix of a well-formed key (which platform it claims to be), None for a malformed one."""
    parts = _key_parts(api_key)
    return parts[0] if parts else None


def platform_cache_key(api_key: str) -> str | None:
    """The cache key `platform_for_api_key` reads for this key (to prefetch it), None for a malformed key."""
    parts = _key_parts(api_key)
    return _platform_key(parts[1]) if parts else None


def platform_cache_drop(platform: Platform) -> None:
    request_cache.forget(_platform_key(platform.key_hash), _platform_id_key(platform.public_id))
    _kept.pop(platform.key_hash, None)
    _kept_by_id.pop(platform.public_id, None)


def platform_for_api_key(api_key: str) -> Platform | None:
    """The active platform owning `api_key`, or None (unknown, malformed or revoked)."""
    parts = _key_parts(api_key)
    if parts is None:
        return None
    prefix, key_hash = parts
    version = request_cache.get(_platform_key(key_hash))
    kept = _kept.get(key_hash)
    if kept is not None and kept[0] == version and _is_token(version):
        return kept[1]  # shared by this process's requests: read it, never change it
    platform = Platform.objects.filter(key_prefix=prefix).first()
    if platform is None or not platform.active:
        return None
    if not hmac.compare_digest(platform.key_hash, key_hash):
        return None
    return _keep(_kept, key_hash, platform, version, _platform_key(key_hash))


def _is_token(version: object) -> bool:
    return type(version) is int  # not a bool, nor an older release's string token or pickled platform


def _keep(
    kept: dict[str, tuple[int, Platform]], key: str, platform: Platform, version: object, token_key: str
) -> Platform:
    """Keep `platform` in this process behind the shared version token, starting one when there is none yet (or
    an older release's string token or pickled platform sits there)."""
    if not _is_token(version):
        version = secrets.randbits(52)
        request_cache.set(token_key, version, PLATFORM_CACHE_SECONDS)
    if len(kept) >= _KEPT_MAX:
        kept.clear()
    kept[key] = (version, platform)
    return platform


def platform_authenticate(
    api_key: str, *, client_ip: str | None = None, failure_windows: list[ratelimit.Window] | None = None
) -> Platform:
    """The platform owning `api_key`, for every transport: `unauthenticated` when the key is unknown or
    revoked (counted against the client IP and the key's prefix), `rate_limited` while either has failed
    too often. `failure_windows`: `ratelimit.failure_windows` of this attempt, when the caller made them."""
    prefix = key_prefix(api_key)
    ratelimit.enforce_auth_attempts(client_ip, prefix, failure_windows)
    platform = platform_for_api_key(api_key)
    if platform is None:
        ratelimit.count_auth_failure(client_ip, prefix)
        raise ProtocolError("unauthenticated", "Chave de API inválida ou revogada.")
    return platform


def platform_for_profile(profile_url: str) -> Platform | None:
    """The active platform registered with this profile URL (signature-authenticated callers)."""
    return Platform.objects.filter(profile_url=profile_url, active=True).order_by("id").first()


def platform_get(public_id: str) -> Platform | None:
    return Platform.objects.filter(public_id=public_id).first()


# The same scheme by public id, for the worker: every order event of an agent's order reads its platform
# (issue 34: a query per order's task). A save drops the token as above.
_kept_by_id: dict[str, tuple[int, Platform]] = {}  # public id → (version token, platform), this process's


def _platform_id_key(public_id: str) -> str:
    return f"bcp:platform-id:{public_id}"


def platform_get_kept(public_id: str) -> Platform | None:
    """`platform_get`, kept by this process behind a version token in the shared cache (at most
    PLATFORM_CACHE_SECONDS old where the cache cannot hear other processes). The platform is shared: read it,
    never change it."""
    version = request_cache.get(_platform_id_key(public_id))
    kept = _kept_by_id.get(public_id)
    if kept is not None and kept[0] == version and _is_token(version):
        return kept[1]
    platform = platform_get(public_id)
    if platform is None:
        return None
    return _keep(_kept_by_id, public_id, platform, version, _platform_id_key(public_id))
