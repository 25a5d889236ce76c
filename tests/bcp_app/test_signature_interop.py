"""Our RFC 9421 code (`bcp_app/protocol/signatures.py`) against an independent implementation,
`http-message-signatures` (pyauth), in both directions (BCP-SIG-01, BCP-SIG-03, BCP-WH-03).

Why keep ours at runtime: BCP §14 fixes the covered components per message kind and the error codes of
§5.4 (`key_not_found`, `digest_mismatch`, …), keys come from a profile's `keys[]` JWKs, and `created` is
bounded both ways; the library's verifier would need all of that around it, and its signer works on
`requests` objects while we sign Django requests, responses and outgoing webhooks. So the library is the
oracle here: a signature either side makes must verify on the other.
"""

from __future__ import annotations

import base64
import hashlib
import time
from datetime import timedelta

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ec
from http_message_signatures import HTTPMessageSigner, HTTPMessageVerifier, MappingKeyResolver, algorithms
from http_message_signatures.exceptions import InvalidSignature

from bcp_app.protocol.keys import public_jwk
from bcp_app.protocol.signatures import (
    REQUEST_BASE_COMPONENTS,
    WEBHOOK_COMPONENTS,
    HttpMessage,
    SignatureError,
    sign_message,
    verify_message,
)

BODY = b'{"event":"order.updated","order":{"id":"order_123","status":"shipped"}}'
KID = "plataforma-2026"


def _digest(body: bytes) -> str:
    return f"sha-256=:{base64.b64encode(hashlib.sha256(body).digest()).decode()}:"


def _webhook_headers() -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Content-Digest": _digest(BODY),
        "BCP-Agent": 'profile="https://loja.example.com.br/.well-known/bcp"',
        "Webhook-Id": "evt_01",
        "Webhook-Timestamp": str(int(time.time())),
    }


def _prepared(
    headers: dict[str, str], url: str = "https://agente.example.com/webhooks/bcp?x=1"
) -> requests.PreparedRequest:
    return requests.Request("POST", url, headers=headers, data=BODY).prepare()


def test_a_webhook_we_sign_verifies_with_http_message_signatures() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    headers = _webhook_headers()
    message = HttpMessage(
        method="POST", authority="agente.example.com", path="/webhooks/bcp", query="x=1", headers=headers
    )
    headers.update(sign_message(message, WEBHOOK_COMPONENTS, key=key, keyid=KID))
    verifier = HTTPMessageVerifier(
        signature_algorithm=algorithms.ECDSA_P256_SHA256,
        key_resolver=MappingKeyResolver(public_keys={KID: key.public_key()}, private_keys={}),
    )

    results = verifier.verify(_prepared(headers), max_age=timedelta(minutes=5))

    assert [r.label for r in results] == ["sig1"]
    covered = [name for name in results[0].covered_components if name != '"@signature-params"']
    assert covered == [f'"{component}"' for component in WEBHOOK_COMPONENTS]
    assert results[0].parameters["keyid"] == KID


def test_a_tampered_webhook_we_sign_fails_with_http_message_signatures() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    headers = _webhook_headers()
    message = HttpMessage(
        method="POST", authority="agente.example.com", path="/webhooks/bcp", query="x=1", headers=headers
    )
    headers.update(sign_message(message, WEBHOOK_COMPONENTS, key=key, keyid=KID))
    headers["Webhook-Id"] = "evt_02"
    verifier = HTTPMessageVerifier(
        signature_algorithm=algorithms.ECDSA_P256_SHA256,
        key_resolver=MappingKeyResolver(public_keys={KID: key.public_key()}, private_keys={}),
    )

    with pytest.raises(InvalidSignature):
        verifier.verify(_prepared(headers), max_age=timedelta(minutes=5))


@pytest.mark.parametrize("tamper", [False, True])
def test_a_request_signed_by_http_message_signatures_verifies_with_ours(tamper: bool) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    headers = {
        "Content-Type": "application/json",
        "Content-Digest": _digest(BODY),
        "BCP-Agent": 'profile="https://agente.example.com/perfil.json"',
        "Idempotency-Key": "k-1",
    }
    request = _prepared(headers, url="https://loja.example.com.br/bcp/v1/checkout-sessions")
    signer = HTTPMessageSigner(
        signature_algorithm=algorithms.ECDSA_P256_SHA256,
        key_resolver=MappingKeyResolver(public_keys={}, private_keys={KID: key}),
    )
    covered = (*REQUEST_BASE_COMPONENTS, "bcp-agent", "idempotency-key", "content-digest", "content-type")
    signer.sign(
        request, key_id=KID, covered_component_ids=covered, label="sig1", include_alg=False, use_existing_digest=True
    )
    sent = dict(request.headers)
    if tamper:
        sent["Idempotency-Key"] = "k-2"
    message = HttpMessage(
        method="POST", authority="loja.example.com.br", path="/bcp/v1/checkout-sessions", headers=sent
    )
    jwks = [public_jwk(key.public_key(), kid=KID)]

    if tamper:
        with pytest.raises(SignatureError) as refused:
            verify_message(message, BODY, jwks)
        assert refused.value.code == "signature_invalid"
    else:
        verified = verify_message(message, BODY, jwks)
        assert verified.keyid == KID
