"""Helpers shared by the A2A/AP2 tests: a platform-side AP2 mandate builder written with joserfc.

joserfc is a JOSE implementation independent of `bcp_app.ap2` (which only uses `cryptography`), so a
mandate built here and accepted there is a cross-implementation check (PIX.md §7.3).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any

from joserfc import jws
from joserfc.jwk import ECKey

from bcp_app import ap2


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def ec_key() -> ECKey:
    return ECKey.generate_key("P-256", private=True)


def public_jwk(key: ECKey, kid: str) -> dict[str, Any]:
    return {**key.as_dict(private=False), "kid": kid, "alg": "ES256", "use": "sig"}


def disclosure(name: str, value: Any) -> str:
    return b64url(json.dumps([b64url(secrets.token_bytes(16)), name, value]).encode())


def build_checkout_mandate(
    *,
    signed_checkout: dict[str, Any],
    platform_key: ECKey,
    platform_kid: str,
    holder_key: ECKey,
    audience: str,
    nonce: str | None = None,
    exp_in: int = 600,
    checkout_jwt: str | None = None,
    checkout_hash: str | None = None,
    extra_disclosures: tuple[str, ...] = (),
) -> str:
    """A one-hop SD-JWT+KB checkout mandate carrying `checkout_jwt`/`checkout_hash` (PIX.md §7.3, D3, D7)."""
    if checkout_jwt is None:
        checkout_jwt = ap2.attach_payload(signed_checkout["ap2"]["merchant_authorization"], signed_checkout)
    if checkout_hash is None:
        checkout_hash = b64url(hashlib.sha256(checkout_jwt.encode()).digest())
    disclosures = [disclosure("checkout_jwt", checkout_jwt), disclosure("checkout_hash", checkout_hash)]
    now = int(time.time())
    issuer_payload = {
        "vct": "mandate.checkout.1",
        "_sd_alg": "sha-256",
        "_sd": sorted(b64url(hashlib.sha256(item.encode()).digest()) for item in disclosures),
        "iat": now,
        "exp": now + exp_in,
        "cnf": {"jwk": holder_key.as_dict(private=False)},
    }
    issuer_jwt = jws.serialize_compact(
        {"alg": "ES256", "kid": platform_kid, "typ": "vc+sd-jwt"},
        json.dumps(issuer_payload).encode(),
        platform_key,
    )
    sd_jwt = issuer_jwt + "~" + "~".join([*disclosures, *extra_disclosures]) + "~"
    kb_claims = {
        "iat": now,
        "aud": audience,
        "nonce": signed_checkout["id"] if nonce is None else nonce,
        "sd_hash": b64url(hashlib.sha256(sd_jwt.encode()).digest()),
    }
    kb_jwt = jws.serialize_compact({"alg": "ES256", "typ": "kb+jwt"}, json.dumps(kb_claims).encode(), holder_key)
    return sd_jwt + kb_jwt
