"""The shop's ES256 signing key (webhooks, response signatures, AP2) and its public JWK for `keys[]`.

JWK import and JWS are joserfc's (`ap2.py`); the raw ES256 r||s signature stays here because RFC 9421 signs
an HTTP signature base, not a JWS, and joserfc has no public API for that.

The PEM comes from `settings.BCP_SIGNING_KEY_FILE`. With DEBUG on a missing file is generated once
(0600); in production a missing or unreadable key is a configuration error, never silently replaced.

Rotation (BCP §14, BCP-SIG-07): `published_jwks()` is what `keys[]` lists — the signing key, and the previous one
(`settings.BCP_PREVIOUS_SIGNING_KEY_*`) until `KEEP_REPLACED_KEY` after it was retired. `manage.py
new_signing_key` writes a new key and says which settings to change.
"""

from __future__ import annotations

import base64
import os
import tempfile
import threading
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

_lock = threading.Lock()
KEEP_REPLACED_KEY = timedelta(days=7)  # BCP §14: "keep a replaced key ≥ 7 days"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    """Unpadded base64url only (RFC 7515 §2): padding, the standard alphabet or white space are refused."""
    if not isinstance(text, str) or any(ch in text for ch in "+/= \n"):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def new_key_file(path: Path) -> ec.EllipticCurvePrivateKey:
    """A new P-256 key at `path` (0600), written whole; FileExistsError if a file is there (never replaced)."""
    return _generate(path)


def _generate(path: Path) -> ec.EllipticCurvePrivateKey:
    """A new key written whole, or FileExistsError when another process's key got there first.

    Written to a private temporary file beside it, then linked into place: the name appears with the whole PEM
    behind it. Created in place (O_EXCL, then write), the name came first, and a process that found it in that
    instant read a partial PEM: the test workers of a fresh clone all failed at setup (CI, session 38)."""
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
        os.link(temporary, path)  # atomic, and never replaces a key that exists
    finally:
        os.unlink(temporary)
    return key


@lru_cache(maxsize=4)
def _load(path_text: str, debug: bool) -> ec.EllipticCurvePrivateKey:
    path = Path(path_text)
    with _lock:
        if not path.exists():
            if not debug:
                raise ImproperlyConfigured(f"BCP_SIGNING_KEY_FILE {path} does not exist (required with DEBUG off)")
            try:
                return _generate(path)
            except FileExistsError:
                pass  # another process generated it first: read theirs
        try:
            key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        except (OSError, ValueError) as exc:
            raise ImproperlyConfigured(f"BCP_SIGNING_KEY_FILE {path} is not a readable PEM private key") from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ImproperlyConfigured("BCP_SIGNING_KEY_FILE must hold an EC P-256 key (ES256)")
    return key


def signing_key() -> ec.EllipticCurvePrivateKey:
    return _load(str(settings.BCP_SIGNING_KEY_FILE), bool(settings.DEBUG))


def ensure_signing_key() -> None:
    """Create the development key file if it is missing (tests and `make run`; never in production)."""
    _load(str(settings.BCP_SIGNING_KEY_FILE), True)


def signing_key_id() -> str:
    return str(settings.BCP_SIGNING_KEY_ID)


def retired_at(text: str) -> datetime:
    """`BCP_PREVIOUS_SIGNING_KEY_RETIRED_AT`: an ISO 8601 date or date and time (a date is its midnight, UTC)."""
    moment = parse_datetime(text)
    if moment is None:
        day = parse_date(text)
        if day is None:
            raise ImproperlyConfigured(f"BCP_PREVIOUS_SIGNING_KEY_RETIRED_AT {text!r} is not an ISO 8601 date")
        moment = datetime(day.year, day.month, day.day)
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def previous_key_until() -> datetime | None:
    """When the previous key leaves `keys[]`, None without one."""
    if not settings.BCP_PREVIOUS_SIGNING_KEY_FILE:
        return None
    return retired_at(settings.BCP_PREVIOUS_SIGNING_KEY_RETIRED_AT) + KEEP_REPLACED_KEY


def published_jwks(now: datetime | None = None) -> list[dict[str, str]]:
    """`keys[]` of our profile: the signing key, then the replaced one while it is kept (BCP-SIG-07)."""
    jwks = [public_jwk()]
    until = previous_key_until()
    if until is not None and (now or timezone.now()) < until:
        previous = _load(str(settings.BCP_PREVIOUS_SIGNING_KEY_FILE), False)
        jwks.append(public_jwk(previous.public_key(), kid=str(settings.BCP_PREVIOUS_SIGNING_KEY_ID)))
    return jwks


def public_jwk(key: ec.EllipticCurvePublicKey | None = None, kid: str | None = None) -> dict[str, str]:
    public = key or signing_key().public_key()
    numbers = public.public_numbers()
    return {
        "kid": kid or signing_key_id(),
        "kty": "EC",
        "crv": "P-256",
        "alg": "ES256",
        "use": "sig",
        "x": b64url(numbers.x.to_bytes(32, "big")),
        "y": b64url(numbers.y.to_bytes(32, "big")),
    }


def public_key_from_jwk(jwk: Mapping[str, Any]) -> ec.EllipticCurvePublicKey:
    """Load an EC P-256 public JWK with joserfc (which checks the point is on the curve); ValueError for anything
    else (the caller maps it to algorithm_unsupported)."""
    if jwk.get("kty") != "EC" or jwk.get("crv") != "P-256" or jwk.get("alg", "ES256") != "ES256":
        raise ValueError("only EC P-256 / ES256 keys are supported")
    members = {name: jwk[name] for name in ("kty", "crv", "x", "y") if name in jwk}
    try:
        public = ECKey.import_key(members).public_key
    except (JoseError, ValueError, TypeError) as exc:
        raise ValueError("malformed EC public key") from exc
    if not isinstance(public, ec.EllipticCurvePublicKey):
        raise ValueError("malformed EC public key")
    return public


def es256_sign(data: bytes, key: ec.EllipticCurvePrivateKey | None = None) -> bytes:
    """ECDSA P-256/SHA-256 signature as raw r||s (64 bytes), as JOSE and RFC 9421 require."""
    der = (key or signing_key()).sign(data, ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def es256_verify(public: ec.EllipticCurvePublicKey, signature: bytes, data: bytes) -> bool:
    if len(signature) != 64:
        return False
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        public.verify(der, data, ec.ECDSA(hashes.SHA256()))
    except Exception:  # InvalidSignature and malformed points alike mean "does not verify"
        return False
    return True
