"""RFC 8941 parsing, RFC 9421 signatures and RFC 9530 Content-Digest (BCP §14, BCP-SIG-*)."""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from bcp_app.keys import b64url_decode, es256_sign, es256_verify, public_jwk
from bcp_app.sfv import InnerList, Item, SFVError, Token, parse_dictionary, serialize_inner_list
from bcp_app.signatures import (
    WEBHOOK_COMPONENTS,
    HttpMessage,
    SignatureError,
    content_digest,
    digest_matches,
    sign_message,
    signature_base,
    verify_message,
)

KEY = ec.generate_private_key(ec.SECP256R1())
JWKS = [public_jwk(KEY.public_key(), kid="plat-1")]
BODY = b'{"line_items":[{"item":{"id":"SKU-CAFE-500G"},"quantity":2}]}'


def request(body: bytes = BODY, **headers: str) -> HttpMessage:
    base = {"Content-Type": "application/json", "BCP-Agent": 'profile="https://agente.example/perfil.json"',
            "Content-Digest": content_digest(body)}
    base.update(headers)
    return HttpMessage(method="POST", authority="loja.example.com.br", path="/bcp/v1/checkout-sessions",
                       headers=base)


def signed(msg: HttpMessage, components: tuple[str, ...] | list[str], **kwargs: object) -> HttpMessage:
    msg.headers = {**msg.headers, **sign_message(msg, components, key=KEY, keyid="plat-1", created=1785254400,
                                                 **kwargs)}  # type: ignore[arg-type]
    return msg


REQUEST_COMPONENTS = ("@method", "@authority", "@path", "content-digest", "content-type", "bcp-agent")


def test_bcp_agent_header_is_an_rfc8941_dictionary_bcp_rest_03() -> None:
    parsed = parse_dictionary('profile="https://agente.example/perfil.json", v=1;a=?0, t=tok')
    assert parsed["profile"] == Item("https://agente.example/perfil.json", {})
    assert parsed["v"] == Item(1, {"a": False})
    assert parsed["t"] == Item(Token("tok"), {})


@pytest.mark.parametrize("text", ['profile="unterminated', "profile=", 'Profile="x"', 'a="x",', 'a=("x"'])
def test_malformed_structured_fields_are_rejected(text: str) -> None:
    with pytest.raises(SFVError):
        parse_dictionary(text)


def test_inner_list_round_trips() -> None:
    inner = InnerList([Item("@method"), Item("content-digest")], {"created": 1, "keyid": "k"})
    text = serialize_inner_list(inner)
    assert text == '("@method" "content-digest");created=1;keyid="k"'
    assert parse_dictionary(f"sig1={text}")["sig1"] == inner


def test_content_digest_is_sha256_of_the_raw_body_bcp_sig_03() -> None:
    expected = "sha-256=:" + base64.b64encode(hashlib.sha256(BODY).digest()).decode() + ":"
    assert content_digest(BODY) == expected
    assert digest_matches(expected, BODY)
    assert not digest_matches(expected, BODY + b" ")


def test_es256_signatures_are_raw_r_s_64_bytes_bcp_sig_01() -> None:
    signature = es256_sign(b"abc", KEY)
    assert len(signature) == 64
    assert es256_verify(KEY.public_key(), signature, b"abc")
    assert not es256_verify(KEY.public_key(), signature, b"abd")


def test_signature_base_follows_rfc9421() -> None:
    msg = request()
    base = signature_base(msg, ["@method", "@authority", "@path", "content-type"],
                          '("@method" "@authority" "@path" "content-type");created=1;keyid="k"')
    assert base.decode() == (
        '"@method": POST\n"@authority": loja.example.com.br\n"@path": /bcp/v1/checkout-sessions\n'
        '"content-type": application/json\n'
        '"@signature-params": ("@method" "@authority" "@path" "content-type");created=1;keyid="k"'
    )


def test_a_signed_request_verifies_with_the_kid_matched_key_bcp_sig_01() -> None:
    msg = signed(request(), REQUEST_COMPONENTS)
    assert msg.header("signature-input") == (
        'sig1=("@method" "@authority" "@path" "content-digest" "content-type" "bcp-agent")'
        ';created=1785254400;keyid="plat-1"'
    )
    verified = verify_message(msg, BODY, JWKS)
    assert (verified.label, verified.keyid, verified.components) == ("sig1", "plat-1", REQUEST_COMPONENTS)


def test_tampered_body_is_a_digest_mismatch_bcp_sig_03() -> None:
    msg = signed(request(), REQUEST_COMPONENTS)
    with pytest.raises(SignatureError) as err:
        verify_message(msg, BODY.replace(b"2", b"3"), JWKS)
    assert err.value.code == "digest_mismatch"


def test_signature_without_required_coverage_does_not_count_bcp_sig_02() -> None:
    msg = signed(request(), ("@method", "@authority", "@path", "content-digest"))  # content-type, bcp-agent missing
    with pytest.raises(SignatureError) as err:
        verify_message(msg, BODY, JWKS)
    assert err.value.code == "signature_invalid"
    assert err.value.message == "signature does not cover bcp-agent, content-type"


def test_idempotency_key_must_be_covered_when_present_bcp_sig_02() -> None:
    msg = signed(request(**{"Idempotency-Key": "k-1"}), REQUEST_COMPONENTS)
    with pytest.raises(SignatureError) as err:
        verify_message(msg, BODY, JWKS)
    assert err.value.code == "signature_invalid"


def test_unknown_kid_is_key_not_found_and_enc_keys_are_skipped_bcp_sig_04() -> None:
    msg = signed(request(), REQUEST_COMPONENTS)
    with pytest.raises(SignatureError) as err:
        verify_message(msg, BODY, [{**JWKS[0], "kid": "other"}])
    assert err.value.code == "key_not_found"
    with pytest.raises(SignatureError) as err:
        verify_message(msg, BODY, [{**JWKS[0], "use": "enc"}])
    assert err.value.code == "key_not_found"


def test_signature_by_another_key_is_invalid_bcp_sig_04() -> None:
    msg = signed(request(), REQUEST_COMPONENTS)
    other = public_jwk(ec.generate_private_key(ec.SECP256R1()).public_key(), kid="plat-1")
    with pytest.raises(SignatureError) as err:
        verify_message(msg, BODY, [other])
    assert err.value.code == "signature_invalid"


def test_foreign_algorithms_are_unsupported_bcp_sig_04() -> None:
    msg = signed(request(), REQUEST_COMPONENTS)
    msg.headers = {**msg.headers, "Signature-Input": msg.header("signature-input") + ';alg="rsa-pss-sha512"'}
    with pytest.raises(SignatureError) as err:
        verify_message(msg, BODY, JWKS)
    assert err.value.code == "algorithm_unsupported"
    okp = {"kid": "plat-1", "kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    with pytest.raises(SignatureError) as err:
        verify_message(signed(request(), REQUEST_COMPONENTS), BODY, [okp])
    assert err.value.code == "algorithm_unsupported"


def test_missing_signature_headers_are_signature_missing_bcp_sig_04() -> None:
    with pytest.raises(SignatureError) as err:
        verify_message(request(), BODY, JWKS)
    assert err.value.code == "signature_missing"


def test_webhook_coverage_list_matches_bcp_section_8() -> None:
    assert WEBHOOK_COMPONENTS == ("@method", "@authority", "@path", "content-digest", "content-type", "bcp-agent",
                                  "webhook-id", "webhook-timestamp")


def test_public_jwk_is_a_p256_es256_signing_key_bcp_disc_05() -> None:
    jwk = public_jwk(KEY.public_key(), kid="loja-2026-07")
    assert sorted(jwk) == ["alg", "crv", "kid", "kty", "use", "x", "y"]
    assert (jwk["kty"], jwk["crv"], jwk["alg"], jwk["use"]) == ("EC", "P-256", "ES256", "sig")
    assert int.from_bytes(b64url_decode(jwk["x"]), "big") == KEY.public_key().public_numbers().x


def test_signing_key_is_generated_in_development_and_required_in_production(settings: object, tmp_path: object) -> None:
    import os

    from django.core.exceptions import ImproperlyConfigured

    from bcp_app import keys

    path = tmp_path / "nova-chave.pem"  # type: ignore[operator]
    settings.BCP_SIGNING_KEY_FILE = str(path)  # type: ignore[attr-defined]
    settings.DEBUG = False  # type: ignore[attr-defined]
    with pytest.raises(ImproperlyConfigured):
        keys.signing_key()
    assert not path.exists()
    settings.DEBUG = True  # type: ignore[attr-defined]
    generated = keys.signing_key()
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert keys.public_jwk()["x"] == public_jwk(generated.public_key())["x"]
