"""AP2 mandates (PIX.md §7, BCP.md §11.5, BCP-PAY-09): merchant authorization and checkout mandate checks.

Signatures are cross-checked with joserfc, a JOSE library independent of `bcp_app.protocol.ap2`.
"""

from __future__ import annotations

import base64
import copy
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from joserfc import jws
from joserfc.errors import BadSignatureError

from bcp_app.protocol import ap2, ap2_mandate
from tests.bcp_app.test_a2a_helpers import b64url, build_checkout_mandate, disclosure, ec_key, public_jwk

SHOP_KID = "loja-2026-07"
PLATFORM_KID = "plataforma-2026"
AUDIENCE = "https://loja.example.com.br/.well-known/bcp"


def seed_checkout() -> dict[str, Any]:
    # The seed's sample checkout (004, "AP2-based completion"), with a non-ASCII buyer and a Pix charge.
    return {
        "ucp": {"version": "2026-07-28", "payment_handlers": {}},
        "id": "checkout_abc123",
        "line_items": [
            {
                "id": "line_1",
                "item": {"id": "PIXEL-10-PRO", "title": "Pixel 10 Pro", "price": 599900},
                "quantity": 1,
                "totals": [{"type": "subtotal", "amount": 599900}],
            }
        ],
        "buyer": {"first_name": "João", "last_name": "Conceição"},
        "status": "ready_for_complete",
        "currency": "BRL",
        "totals": [{"type": "subtotal", "amount": 599900}, {"type": "total", "amount": 599900}],
        "payment": {
            "instruments": [
                {
                    "id": "instr_1",
                    "handler_id": "pix_recebedor_001",
                    "type": "pix",
                    "selected": True,
                    "pix": {"txid": "4dbaa2bc0a4a45d8b63e50117f566fca", "amount": 599900, "status": "active"},
                }
            ]
        },
        "links": [{"type": "terms_of_service", "url": "https://example-business.com/terms"}],
    }


@pytest.fixture
def shop_key():
    return ec_key()


@pytest.fixture
def signed(shop_key) -> dict[str, Any]:
    return ap2.with_merchant_authorization(seed_checkout(), private_key=shop_key.private_key, kid=SHOP_KID)


def test_merchant_authorization_is_detached_es256_jws_with_kid(signed):
    """BCP-PAY-09: `ap2.merchant_authorization` = `<header>..<signature>` with {"alg":"ES256","kid":…}."""
    token = signed["ap2"]["merchant_authorization"]
    header, payload, signature = token.split(".")

    assert payload == ""
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "ES256", "kid": SHOP_KID}
    assert len(base64.urlsafe_b64decode(signature + "==")) == 64  # raw r||s, not DER
    assert list(signed) == [*seed_checkout(), "ap2"]


def test_merchant_authorization_verifies_with_joserfc_over_jcs_without_ap2(shop_key, signed):
    """PIX.md §7.1: the signature covers JCS(checkout without ap2); joserfc verifies it independently."""
    payload = ap2.jcs({k: v for k, v in signed.items() if k != "ap2"})

    result = jws.deserialize_compact(signed["ap2"]["merchant_authorization"], shop_key, payload=payload)

    assert result.payload == payload
    assert json.loads(payload)["buyer"]["first_name"] == "João"


def test_jcs_is_not_sorted_json_dumps():
    # RFC 8785: numbers in shortest form and no ASCII escaping.
    assert ap2.jcs({"b": 1.0, "a": "ç"}) == '{"a":"ç","b":1}'.encode()


def test_our_verifier_accepts_joserfc_signature(shop_key):
    checkout = seed_checkout()
    detached = jws.detach_content(
        jws.serialize_compact({"alg": "ES256", "kid": SHOP_KID}, ap2.checkout_payload(checkout), shop_key)
    )
    checkout["ap2"] = {"merchant_authorization": detached}

    header = ap2.verify_merchant_authorization(checkout, [public_jwk(shop_key, SHOP_KID)])

    assert header == {"alg": "ES256", "kid": SHOP_KID}


def test_verification_survives_reserialization_and_extra_ap2_members(shop_key, signed):
    reparsed = json.loads(json.dumps(signed, indent=3, ensure_ascii=True, sort_keys=True))
    reparsed["ap2"]["checkout_mandate_hint"] = "ignored"

    assert ap2.verify_merchant_authorization(reparsed, [public_jwk(shop_key, SHOP_KID)])["kid"] == SHOP_KID


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("totals", 1, "amount"), 1),
        (("line_items", 0, "quantity"), 2),
        (("status", None), "completed"),
        (("ucp", "version"), "2026-01-01"),
        (("payment", "instruments"), []),
    ],
)
def test_tampering_is_detected_by_us_and_by_joserfc(shop_key, signed, path, value):
    tampered = copy.deepcopy(signed)
    target: Any = tampered
    keys = [key for key in path if key is not None]
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value

    with pytest.raises(ap2.Ap2Error) as excinfo:
        ap2.verify_merchant_authorization(tampered, [public_jwk(shop_key, SHOP_KID)])
    with pytest.raises(BadSignatureError):
        jws.deserialize_compact(
            tampered["ap2"]["merchant_authorization"], shop_key, payload=ap2.checkout_payload(tampered)
        )

    assert excinfo.value.code == "merchant_authorization_invalid"


def test_alg_none_wrong_key_and_unknown_kid_fail(shop_key, signed):
    other = ec_key()
    none_header = b64url(json.dumps({"alg": "none", "kid": SHOP_KID}).encode())
    unsigned = {**signed, "ap2": {"merchant_authorization": f"{none_header}.."}}

    for checkout, keys in [
        (unsigned, [public_jwk(shop_key, SHOP_KID)]),
        (signed, [public_jwk(other, SHOP_KID)]),
        (signed, [public_jwk(shop_key, "other-kid")]),
        (signed, [{**public_jwk(shop_key, SHOP_KID), "use": "enc"}]),
    ]:
        with pytest.raises(ap2.Ap2Error) as excinfo:
            ap2.verify_merchant_authorization(checkout, keys)
        assert excinfo.value.code == "merchant_authorization_invalid"


# --- checkout mandate (PIX.md §7.3) -----------------------------------------------------------------------------


@pytest.fixture
def parties(shop_key):
    return {"shop": shop_key, "platform": ec_key(), "holder": ec_key()}


def verify(mandate: str, parties: dict, checkout: dict[str, Any], **overrides: Any) -> ap2_mandate.VerifiedMandate:
    arguments: dict[str, Any] = {
        "platform_keys": [public_jwk(parties["platform"], PLATFORM_KID)],
        "shop_keys": [public_jwk(parties["shop"], SHOP_KID)],
        "audience": AUDIENCE,
        "checkout": checkout,
        **overrides,
    }
    return ap2_mandate.verify_checkout_mandate(mandate, **arguments)


def mandate_for(signed: dict[str, Any], parties: dict, **kwargs: Any) -> str:
    arguments = {
        "platform_key": parties["platform"],
        "platform_kid": PLATFORM_KID,
        "holder_key": parties["holder"],
        "audience": AUDIENCE,
        **kwargs,
    }
    return build_checkout_mandate(signed_checkout=signed, **arguments)


def test_valid_mandate_binds_the_signed_checkout(parties, signed):
    mandate = mandate_for(signed, parties)

    verified = verify(mandate, parties, signed)

    assert verified.mandate == mandate
    assert verified.checkout == {k: v for k, v in signed.items() if k != "ap2"}
    assert verified.claims["kb"]["nonce"] == "checkout_abc123"


def error_code(mandate: Any, parties: dict, checkout: dict[str, Any], **overrides: Any) -> str:
    with pytest.raises(ap2.Ap2Error) as excinfo:
        verify(mandate, parties, checkout, **overrides)
    assert excinfo.value.content
    return excinfo.value.code


def test_missing_mandate_is_mandate_required(parties, signed):
    """BCP-PAY-09: complete without mandate → mandate_required."""
    assert error_code(None, parties, signed) == "mandate_required"
    assert error_code("", parties, signed) == "mandate_required"


def test_platform_key_not_in_profile_is_agent_missing_key(parties, signed):
    mandate = mandate_for(signed, parties)

    assert error_code(mandate, parties, signed, platform_keys=[public_jwk(ec_key(), "x")]) == "agent_missing_key"


def test_issuer_signature_by_another_key_with_known_kid_is_invalid(parties, signed):
    mandate = mandate_for(signed, {**parties, "platform": ec_key()})

    assert error_code(mandate, parties, signed) == "mandate_invalid_signature"


def test_forged_disclosure_is_rejected(parties, signed):
    mandate = mandate_for(signed, parties, extra_disclosures=(disclosure("checkout_hash", "forged"),))

    assert error_code(mandate, parties, signed) == "mandate_invalid_signature"


def test_kb_jwt_must_cover_the_presented_sd_jwt(parties, signed):
    mandate = mandate_for(signed, parties)
    issuer, first, second, kb = mandate.split("~")
    # Dropping a disclosure changes what the KB-JWT's sd_hash must cover.
    assert error_code(f"{issuer}~{first}~{kb}", parties, signed) == "mandate_invalid_signature"
    assert error_code(f"{issuer}~{first}~{second}~", parties, signed) == "mandate_invalid_signature"


def test_kb_jwt_by_another_holder_is_rejected(parties, signed):
    good = mandate_for(signed, parties)
    forged = mandate_for(signed, {**parties, "holder": ec_key()})
    mixed = good[: good.rfind("~") + 1] + forged[forged.rfind("~") + 1 :]

    assert error_code(mixed, parties, signed) == "mandate_invalid_signature"


def test_wrong_audience_or_nonce_is_scope_mismatch(parties, signed):
    assert (
        error_code(mandate_for(signed, parties, audience="https://outra.example/.well-known/bcp"), parties, signed)
        == "mandate_scope_mismatch"
    )
    assert error_code(mandate_for(signed, parties, nonce="checkout_other"), parties, signed) == "mandate_scope_mismatch"


def test_expired_mandate(parties, signed):
    mandate = mandate_for(signed, parties, exp_in=-3600)

    assert error_code(mandate, parties, signed) == "mandate_expired"


def test_mandate_checked_against_later_clock_expires(parties, signed):
    mandate = mandate_for(signed, parties, exp_in=60)

    assert error_code(mandate, parties, signed, now=datetime.now(UTC) + timedelta(hours=2)) == "mandate_expired"


def test_checkout_jwt_not_signed_by_the_shop(parties, signed):
    forged = ap2.with_merchant_authorization(seed_checkout(), private_key=ec_key().private_key, kid=SHOP_KID)
    mandate = mandate_for(forged, parties)

    assert error_code(mandate, parties, signed) == "merchant_authorization_invalid"


def test_checkout_changed_after_signing_is_scope_mismatch(parties, signed):
    """PIX.md §7.3 step 6: a replaced Pix charge (new txid) or a new total invalidates the mandate."""
    mandate = mandate_for(signed, parties)
    new_charge = copy.deepcopy(signed)
    new_charge["payment"]["instruments"][0]["pix"]["txid"] = "ffffffffffffffffffffffffffffffff"
    new_total = copy.deepcopy(signed)
    new_total["totals"][1]["amount"] = 599901

    assert error_code(mandate, parties, new_charge) == "mandate_scope_mismatch"
    assert error_code(mandate, parties, new_total) == "mandate_scope_mismatch"


def test_status_and_messages_may_change_after_signing(parties, signed):
    mandate = mandate_for(signed, parties)
    later = {**signed, "status": "ready_for_complete", "messages": [{"type": "info", "content": "ok"}]}

    assert verify(mandate, parties, later).checkout["id"] == "checkout_abc123"


def test_checkout_hash_must_match_checkout_jwt(parties, signed):
    mandate = mandate_for(signed, parties, checkout_hash=b64url(b"not the hash of checkout_jwt"))

    assert error_code(mandate, parties, signed) == "mandate_scope_mismatch"


def test_garbage_mandates_fail_cleanly(parties, signed):
    for garbage in ["x", "a.b.c~", "~~~", "eyJ.eyJ.sig~kb", 42]:
        assert error_code(garbage, parties, signed) in {"mandate_invalid_signature", "mandate_required"}
