"""AP2 mandates (PIX.md §7, BCP.md §11.5): merchant authorization and checkout mandate checks.

- `merchant_authorization(checkout, ...)`: ES256 detached-content JWS (`<header>..<signature>`) over the
  JCS (RFC 8785) canonical form of the checkout response without its `ap2` member (PIX.md §7.1).
- `verify_merchant_authorization(checkout, keys)`: the §7.2 check (platform side; our own tests).
- `sign_response(ctx, body)` / `mandate_refusal(ctx, checkout, ap2)`: what `bcp_app.service.operations` calls
  while AP2 is negotiated; the SD-JWT+KB checkout mandate check itself (§7.3) is `bcp_app.protocol.ap2_mandate`.
  Every failure is an `Ap2Error(code, content)` with a BCP code (`mandate_required`, `agent_missing_key`,
  `mandate_invalid_signature`, `mandate_expired`, `mandate_scope_mismatch`, `merchant_authorization_invalid`).

The ES256 and base64url primitives are protocol/keys.py's (one copy for AP2, RFC 9421 and the shop's key);
the tests check the results against `joserfc`, an independent implementation.
"""

from __future__ import annotations

import binascii
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import rfc8785
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jws
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jwk import ECKey

from bcp_app.protocol.keys import b64url as b64url_encode
from bcp_app.protocol.keys import b64url_decode, public_key_from_jwk
from bcp_app.protocol.keys import public_jwk as ec_public_jwk

AP2_CAPABILITY = "br.dev.bcp.shopping.ap2_mandate"
ALLOWED_ALGORITHMS = frozenset({"ES256"})


class Ap2Error(Exception):
    """A mandate or signature problem, carrying the BCP message code and a pt-BR explanation."""

    def __init__(self, code: str, content: str) -> None:
        super().__init__(f"{code}: {content}")
        self.code = code
        self.content = content


# --- encoding helpers -----------------------------------------------------------------------------------


def jcs(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes (not `json.dumps(sort_keys=True)`: numbers and escapes differ)."""
    return rfc8785.dumps(value)


def checkout_payload(checkout: Mapping[str, Any]) -> bytes:
    """The signed payload P: JCS of the checkout without its top-level `ap2` member."""
    return jcs({key: value for key, value in checkout.items() if key != "ap2"})


def _sha256_b64url(data: bytes) -> str:
    return b64url_encode(hashlib.sha256(data).digest())


# --- keys ------------------------------------------------------------------------------------------------


def public_jwk(key: ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey, *, kid: str) -> dict[str, str]:
    return ec_public_jwk(key.public_key() if isinstance(key, ec.EllipticCurvePrivateKey) else key, kid=kid)


def _signing_keys(keys: Iterable[Mapping[str, Any]], kid: str) -> ec.EllipticCurvePublicKey | None:
    for jwk in keys:
        if jwk.get("kid") == kid and jwk.get("use", "sig") != "enc":
            try:
                return public_key_from_jwk(jwk)
            except (ValueError, KeyError, TypeError, binascii.Error):
                return None
    return None


# --- JWS (ES256, joserfc) ------------------------------------------------------------------------------------


def _protected_header(encoded: str) -> dict[str, Any]:
    try:
        header = json.loads(b64url_decode(encoded))
    except (ValueError, binascii.Error) as exc:
        raise ValueError("protected header is not base64url JSON") from exc
    if not isinstance(header, dict):
        raise ValueError("protected header is not a JSON object")
    if header.get("alg") not in ALLOWED_ALGORITHMS:
        raise ValueError(f"algorithm {header.get('alg')!r} is not allowed")
    if "crit" in header or header.get("b64") is False:
        raise ValueError("crit/b64 headers are not supported")
    return header


def sign_compact(payload: bytes, *, private_key: ec.EllipticCurvePrivateKey, kid: str, typ: str = "") -> str:
    """Compact JWS `H.P.S` (ES256, RFC 7515 §7.1) over `payload`, serialized by joserfc."""
    header: dict[str, str] = {"alg": "ES256", "kid": kid}
    if typ:
        header["typ"] = typ
    return jws.serialize_compact(header, payload, ECKey.import_key(private_key), algorithms=["ES256"])


def sign_detached_unencoded(payload: bytes, *, private_key: ec.EllipticCurvePrivateKey, kid: str) -> str:
    """Detached JWS `H..S` with the unencoded payload option (RFC 7797: `b64: false`, `crit: ["b64"]`): the
    signature covers the payload's exact bytes, which travel only as the HTTP body (UCP order webhooks'
    `Request-Signature`, order.md "Webhook Signature Verification" at UCP's tag v2026-01-11)."""
    header = {"alg": "ES256", "kid": kid, "b64": False, "crit": ["b64"]}
    token = jws.serialize_compact(header, payload, ECKey.import_key(private_key), algorithms=["ES256"])
    return jws.detach_content(token)


def verify_compact(
    token: str, key: ec.EllipticCurvePublicKey | None = None, *, keys: Iterable[Mapping[str, Any]] = ()
) -> tuple[dict[str, Any], bytes]:
    """Verify a compact JWS with `key`, or with the `kid`-matched key of `keys`; returns (header, payload).

    The header is read first only to pick the key and refuse what we never accept (another `alg`, `crit`,
    unencoded payloads); joserfc then checks the serialization and the ES256 signature."""
    segments = token.split(".") if isinstance(token, str) else []
    if len(segments) != 3 or not segments[0] or not segments[2]:
        raise ValueError("not a compact JWS")
    header = _protected_header(segments[0])
    if key is None:
        key = _signing_keys(keys, str(header.get("kid", "")))
        if key is None:
            raise LookupError(f"no signing key with kid {header.get('kid')!r}")
    try:
        verified = jws.deserialize_compact(token, ECKey.import_key(key), algorithms=sorted(ALLOWED_ALGORITHMS))
    except BadSignatureError as exc:
        raise ValueError("signature does not verify") from exc
    except (JoseError, ValueError, binascii.Error) as exc:
        raise ValueError("payload or signature is not base64url") from exc
    return header, verified.payload


# --- merchant authorization (PIX.md §7.1 / §7.2) ------------------------------------------------------------------


def merchant_authorization(checkout: Mapping[str, Any], *, private_key: ec.EllipticCurvePrivateKey, kid: str) -> str:
    """Detached-content JWS `H..S` over JCS(checkout without `ap2`)."""
    header, _payload, signature = sign_compact(checkout_payload(checkout), private_key=private_key, kid=kid).split(".")
    return f"{header}..{signature}"


def with_merchant_authorization(
    checkout: Mapping[str, Any], *, private_key: ec.EllipticCurvePrivateKey, kid: str
) -> dict[str, Any]:
    """A copy of `checkout` with `ap2.merchant_authorization` set (other `ap2` members are dropped)."""
    signed = {key: value for key, value in checkout.items() if key != "ap2"}
    signed["ap2"] = {"merchant_authorization": merchant_authorization(signed, private_key=private_key, kid=kid)}
    return signed


def attach_payload(detached: str, checkout: Mapping[str, Any]) -> str:
    """Re-attach JCS(checkout without `ap2`) to a detached JWS: the `checkout_jwt` of AP2 (PIX.md D7)."""
    segments = detached.split(".")
    if len(segments) != 3 or segments[1]:
        raise ValueError("not a detached JWS")
    return f"{segments[0]}.{b64url_encode(checkout_payload(checkout))}.{segments[2]}"


def verify_merchant_authorization(checkout: Mapping[str, Any], keys: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """PIX.md §7.2: verify `checkout.ap2.merchant_authorization` against the business `keys`; returns the header."""
    ap2 = checkout.get("ap2")
    token = ap2.get("merchant_authorization") if isinstance(ap2, Mapping) else None
    if not isinstance(token, str) or token.count(".") != 2 or token.split(".")[1]:
        raise Ap2Error("merchant_authorization_invalid", "ap2.merchant_authorization ausente ou malformado.")
    try:
        header, _ = verify_compact(attach_payload(token, checkout), keys=keys)
    except (ValueError, LookupError) as exc:
        raise Ap2Error("merchant_authorization_invalid", f"Assinatura do lojista inválida: {exc}.") from exc
    return header
