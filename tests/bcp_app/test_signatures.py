"""RFC 8941 parsing, RFC 9421 signatures and RFC 9530 Content-Digest (BCP §14, BCP-SIG-*)."""

from __future__ import annotations

import base64
import hashlib
import multiprocessing
import os
import sys
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from bcp_app.protocol.keys import b64url_decode, es256_sign, es256_verify, public_jwk
from bcp_app.protocol.sfv import InnerList, Item, SFVError, Token, parse_dictionary, serialize_inner_list
from bcp_app.protocol.signatures import (
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
    base = {
        "Content-Type": "application/json",
        "BCP-Agent": 'profile="https://agente.example/perfil.json"',
        "Content-Digest": content_digest(body),
    }
    base.update(headers)
    return HttpMessage(method="POST", authority="loja.example.com.br", path="/bcp/v1/checkout-sessions", headers=base)


def signed(msg: HttpMessage, components: tuple[str, ...] | list[str], **kwargs: object) -> HttpMessage:
    msg.headers = {**msg.headers, **sign_message(msg, components, key=KEY, keyid="plat-1", created=CREATED, **kwargs)}  # type: ignore[arg-type]
    return msg


CREATED = 1785254400
NOW = CREATED + 10  # the verifier's clock in these tests: 10 s after the signature was made


def verify(msg: HttpMessage, body: bytes, jwks: list, **kwargs: object):
    return verify_message(msg, body, jwks, now=kwargs.pop("now", NOW), **kwargs)  # type: ignore[arg-type]


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
    base = signature_base(
        msg,
        ["@method", "@authority", "@path", "content-type"],
        '("@method" "@authority" "@path" "content-type");created=1;keyid="k"',
    )
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
    verified = verify(msg, BODY, JWKS)
    assert (verified.label, verified.keyid, verified.components) == ("sig1", "plat-1", REQUEST_COMPONENTS)


def test_tampered_body_is_a_digest_mismatch_bcp_sig_03() -> None:
    msg = signed(request(), REQUEST_COMPONENTS)
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY.replace(b"2", b"3"), JWKS)
    assert err.value.code == "digest_mismatch"
    assert err.value.message == "Content-Digest não corresponde ao corpo: envie o sha-256 do corpo exato."


def test_signature_without_required_coverage_does_not_count_bcp_sig_02() -> None:
    msg = signed(request(), ("@method", "@authority", "@path", "content-digest"))  # content-type, bcp-agent missing
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY, JWKS)
    assert err.value.code == "signature_invalid"
    assert err.value.message == "A assinatura precisa cobrir bcp-agent, content-type (BCP §14)."


def test_idempotency_key_must_be_covered_when_present_bcp_sig_02() -> None:
    msg = signed(request(**{"Idempotency-Key": "k-1"}), REQUEST_COMPONENTS)
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY, JWKS)
    assert err.value.code == "signature_invalid"


def test_unknown_kid_is_key_not_found_and_enc_keys_are_skipped_bcp_sig_04() -> None:
    msg = signed(request(), REQUEST_COMPONENTS)
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY, [{**JWKS[0], "kid": "other"}])
    assert err.value.code == "key_not_found"
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY, [{**JWKS[0], "use": "enc"}])
    assert err.value.code == "key_not_found"


def test_signature_by_another_key_is_invalid_bcp_sig_04() -> None:
    msg = signed(request(), REQUEST_COMPONENTS)
    other = public_jwk(ec.generate_private_key(ec.SECP256R1()).public_key(), kid="plat-1")
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY, [other])
    assert err.value.code == "signature_invalid"


def test_foreign_algorithms_are_unsupported_bcp_sig_04() -> None:
    msg = signed(request(), REQUEST_COMPONENTS)
    msg.headers = {**msg.headers, "Signature-Input": msg.header("signature-input") + ';alg="rsa-pss-sha512"'}
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY, JWKS)
    assert err.value.code == "algorithm_unsupported"
    okp = {"kid": "plat-1", "kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    with pytest.raises(SignatureError) as err:
        verify(signed(request(), REQUEST_COMPONENTS), BODY, [okp])
    assert err.value.code == "algorithm_unsupported"


def test_missing_signature_headers_are_signature_missing_bcp_sig_04() -> None:
    with pytest.raises(SignatureError) as err:
        verify(request(), BODY, JWKS)
    assert err.value.code == "signature_missing"


def test_webhook_coverage_list_matches_bcp_section_8() -> None:
    assert WEBHOOK_COMPONENTS == (
        "@method",
        "@authority",
        "@path",
        "content-digest",
        "content-type",
        "bcp-agent",
        "webhook-id",
        "webhook-timestamp",
    )


def test_public_jwk_is_a_p256_es256_signing_key_bcp_disc_05() -> None:
    jwk = public_jwk(KEY.public_key(), kid="loja-2026-07")
    assert sorted(jwk) == ["alg", "crv", "kid", "kty", "use", "x", "y"]
    assert (jwk["kty"], jwk["crv"], jwk["alg"], jwk["use"]) == ("EC", "P-256", "ES256", "sig")
    assert int.from_bytes(b64url_decode(jwk["x"]), "big") == KEY.public_key().public_numbers().x


def test_signing_key_is_generated_in_development_and_required_in_production(settings: object, tmp_path: object) -> None:
    import os

    from django.core.exceptions import ImproperlyConfigured

    from bcp_app.protocol import keys

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


def _load_when_released(path_text: str, barrier: Any, answers: Any) -> None:
    from bcp_app.protocol import keys

    barrier.wait()
    try:
        answers.put(public_jwk(keys._load(path_text, True).public_key(), kid="k")["x"])
    except Exception as exc:  # the answer the test reads: any failure of any process
        answers.put(f"error: {exc!r}")


_WATCHED: list[str] = []  # the paths whose opening for writing the audit hook records, while a test watches
_OPENED_FOR_WRITING: list[str] = []
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT


def _record_writes(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHED and event == "open" and str(args[0]) in _WATCHED and (args[2] or 0) & _WRITE_FLAGS:
        _OPENED_FOR_WRITING.append(str(args[0]))


sys.addaudithook(_record_writes)  # an audit hook stays for the process: it records only while a test watches


def test_a_generated_key_file_appears_whole(tmp_path: Any) -> None:
    """CI of a fresh clone (session 38): test workers found the key file another one was still writing, read a
    partial PEM and failed every test at setup. The file's name is never opened for writing: the PEM is written
    under a temporary name and linked into place, so whoever sees the name reads the whole key."""
    from bcp_app.protocol import keys

    path = tmp_path / "chave.pem"
    _WATCHED.append(str(path))
    try:
        key = keys._load(str(path), True)
    finally:
        _WATCHED.clear()
    assert _OPENED_FOR_WRITING == []
    stored = serialization.load_pem_private_key(path.read_bytes(), password=None)
    assert public_jwk(stored.public_key(), kid="k") == public_jwk(key.public_key(), kid="k")  # type: ignore[arg-type]
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert [item.name for item in tmp_path.iterdir()] == ["chave.pem"]  # no temporary file left


def test_processes_that_start_together_all_read_the_one_key_generated(tmp_path: Any) -> None:
    """Processes released together on a missing key file all get the one key that was written (the rest find it
    and read it). This does not force the interleaving that failed in CI (a writer paused between creating the
    name and writing it): the test above holds the file to never exist partly written."""
    context = multiprocessing.get_context("fork")
    for round_ in range(4):
        path = tmp_path / f"chave-{round_}.pem"
        barrier, answers = context.Barrier(12), context.Queue()
        workers = [context.Process(target=_load_when_released, args=(str(path), barrier, answers)) for _ in range(12)]
        for worker in workers:
            worker.start()
        got = [answers.get(timeout=30) for _ in workers]
        for worker in workers:
            worker.join(timeout=30)
        assert not [answer for answer in got if answer.startswith("error")]
        assert len(set(got)) == 1
        assert [item.name for item in tmp_path.iterdir() if item.name.startswith(".")] == []


# --- RFC 9421 alignment with the UCP reference (issue 14) --------------------------------------------------


def _sign_raw(msg: HttpMessage, components: tuple[str, ...], params_text: str, label: str = "sig1") -> dict[str, str]:
    """Sign over exactly `params_text` as the `@signature-params` value (as a platform's library may write it)."""
    signature = es256_sign(signature_base(msg, components, params_text), KEY)
    encoded = base64.b64encode(signature).decode()
    return {"Signature-Input": f"{label}={params_text}", "Signature": f"{label}=:{encoded}:"}


def test_the_received_signature_params_value_is_verified_rfc9421_3_2() -> None:
    """RFC 9421 §3.2: the base's `@signature-params` line is the received Signature-Input member value; a
    valid RFC 8941 spelling that re-serializes differently (two spaces between items) still verifies."""
    msg = request()
    params = (
        '("@method"  "@authority" "@path" "content-digest" "content-type" "bcp-agent")'
        ';created=1785254400;keyid="plat-1"'
    )
    msg.headers = {**msg.headers, **_sign_raw(msg, REQUEST_COMPONENTS, params)}
    assert verify(msg, BODY, JWKS).components == REQUEST_COMPONENTS


def test_every_label_must_verify_rfc9421_3_2() -> None:
    """Not only the first: a second signature that does not verify makes the request `signature_invalid`."""
    msg = signed(request(), REQUEST_COMPONENTS)
    forged = "sig2=:" + base64.b64encode(bytes(64)).decode() + ":"
    second = msg.header("signature-input").replace("sig1=", "sig2=", 1)
    msg.headers = {
        **msg.headers,
        "Signature-Input": f"{msg.header('signature-input')}, {second}",
        "Signature": f"{msg.header('signature')}, {forged}",
    }
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY, JWKS)
    assert (err.value.code, err.value.message) == (
        "signature_invalid",
        "A assinatura não confere com a chave 'plat-1' do perfil da plataforma.",
    )


def test_a_label_without_its_signature_is_invalid_rfc9421_3_2() -> None:
    msg = signed(request(), REQUEST_COMPONENTS)
    second = msg.header("signature-input").replace("sig1=", "sig2=", 1)
    msg.headers = {**msg.headers, "Signature-Input": f"{msg.header('signature-input')}, {second}"}
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY, JWKS)
    assert err.value.code == "signature_invalid"


@pytest.mark.parametrize("port", [":443", ":80"])
def test_default_ports_are_removed_from_authority_rfc9421_2_2_3(port: str) -> None:
    """RFC 9421 §2.2.3: `@authority` is the lowercased host without the default port."""
    msg = signed(request(), REQUEST_COMPONENTS)  # signed for "loja.example.com.br"
    msg.authority = "LOJA.example.com.br" + port  # received with the default port spelled out
    assert verify(msg, BODY, JWKS).keyid == "plat-1"
    msg.authority = "loja.example.com.br:8443"  # another port is another authority
    with pytest.raises(SignatureError):
        verify(msg, BODY, JWKS)


@pytest.mark.parametrize(("age", "ok"), [(299, True), (301, False), (-59, True), (-61, False)])
def test_created_is_bounded_to_five_minutes_and_the_clock_skew(age: int, ok: bool) -> None:
    """UCP reference: `created` older than 5 minutes, or in the future beyond the skew (60 s) → invalid."""
    msg = signed(request(), REQUEST_COMPONENTS)
    if ok:
        assert verify(msg, BODY, JWKS, now=CREATED + age).label == "sig1"
        return
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY, JWKS, now=CREATED + age)
    assert err.value.code == "signature_invalid"


def test_created_is_required() -> None:
    msg = request()
    params = '("@method" "@authority" "@path" "content-digest" "content-type" "bcp-agent");keyid="plat-1"'
    msg.headers = {**msg.headers, **_sign_raw(msg, REQUEST_COMPONENTS, params)}
    with pytest.raises(SignatureError) as err:
        verify(msg, BODY, JWKS)
    assert (err.value.code, err.value.message) == ("signature_invalid", "Signature-Input precisa do parâmetro created.")
