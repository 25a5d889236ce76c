"""AP2 checkout mandate verification (PIX.md §7.3): the platform's SD-JWT+KB `ap2.checkout_mandate`,
checked at completion before any payment. Failures raise `bcp_app.protocol.ap2.Ap2Error` with a BCP code.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bcp_app.protocol.ap2 import Ap2Error, _protected_header, _sha256_b64url, _signing_keys, verify_compact
from bcp_app.protocol.keys import b64url as b64url_encode
from bcp_app.protocol.keys import b64url_decode, public_key_from_jwk

CHECKOUT_MANDATE_VCT = "mandate.checkout.1"
# Clock skew tolerated on `iat`/`exp` of mandates (seconds).
CLOCK_SKEW_SECONDS = 300


@dataclass(frozen=True)
class VerifiedMandate:
    """What a verified checkout mandate binds: the signed checkout it carries and its claims."""

    mandate: str
    checkout: dict[str, Any]
    claims: dict[str, Any] = field(default_factory=dict)


def _json_segment(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(b64url_decode(text))
    except (ValueError, binascii.Error) as exc:
        raise Ap2Error("mandate_invalid_signature", f"{what} não é JSON base64url válido.") from exc
    if not isinstance(value, dict):
        raise Ap2Error("mandate_invalid_signature", f"{what} não é um objeto JSON.")
    return value


def _check_times(claims: Mapping[str, Any], now: datetime, what: str) -> None:
    timestamp = now.timestamp()
    exp, iat = claims.get("exp"), claims.get("iat")
    if exp is not None and (not isinstance(exp, int | float) or exp + CLOCK_SKEW_SECONDS < timestamp):
        raise Ap2Error("mandate_expired", f"{what} expirou.")
    if iat is not None and (not isinstance(iat, int | float) or iat - CLOCK_SKEW_SECONDS > timestamp):
        raise Ap2Error("mandate_expired", f"{what} tem 'iat' no futuro.")


def _sd_digests(value: Any) -> set[str]:
    """Every digest listed in any `_sd` array of the issuer payload (nested objects included)."""
    found: set[str] = set()
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key == "_sd" and isinstance(item, list):
                found.update(str(digest) for digest in item)
            else:
                found |= _sd_digests(item)
    elif isinstance(value, list):
        for item in value:
            found |= _sd_digests(item)
    return found


def _disclosed_claims(issuer_payload: Mapping[str, Any], disclosures: list[str]) -> dict[str, Any]:
    if issuer_payload.get("_sd_alg", "sha-256") != "sha-256":
        raise Ap2Error("mandate_invalid_signature", "O mandato usa um '_sd_alg' diferente de sha-256.")
    digests = _sd_digests(issuer_payload)
    claims = {key: value for key, value in issuer_payload.items() if key not in {"_sd", "_sd_alg"}}
    for disclosure in disclosures:
        if _sha256_b64url(disclosure.encode("ascii", "replace")) not in digests:
            raise Ap2Error("mandate_invalid_signature", "Uma divulgação do mandato não consta do '_sd' assinado.")
        try:
            decoded = json.loads(b64url_decode(disclosure))
        except (ValueError, binascii.Error) as exc:
            raise Ap2Error("mandate_invalid_signature", "Divulgação do mandato malformada.") from exc
        if not (isinstance(decoded, list) and len(decoded) == 3 and isinstance(decoded[1], str)):
            raise Ap2Error("mandate_invalid_signature", "Divulgação do mandato não é [salt, nome, valor].")
        claims[decoded[1]] = decoded[2]
    return claims


def _scope_value(checkout: Mapping[str, Any]) -> dict[str, Any]:
    """The terms a mandate must match (PIX.md §7.3 step 6): id, currency, totals, lines, the Pix instrument."""
    instruments = (checkout.get("payment") or {}).get("instruments") or []
    selected = [inst for inst in instruments if isinstance(inst, Mapping) and inst.get("selected", True)]
    instrument: dict[str, Any] = {}
    if selected:
        pix = selected[0].get("pix") or {}
        instrument = {"handler_id": selected[0].get("handler_id"), "txid": pix.get("txid"), "amount": pix.get("amount")}
    return {
        "id": checkout.get("id"),
        "currency": checkout.get("currency"),
        "totals": checkout.get("totals"),
        "line_items": checkout.get("line_items"),
        "instrument": instrument,
    }


def verify_checkout_mandate(
    mandate: Any,
    *,
    platform_keys: Iterable[Mapping[str, Any]],
    shop_keys: Iterable[Mapping[str, Any]],
    audience: str,
    checkout: Mapping[str, Any],
    now: datetime | None = None,
) -> VerifiedMandate:
    """Verify an SD-JWT+KB checkout mandate (PIX.md §7.3) against the current `checkout` response.

    `platform_keys` are the `keys[]` of the platform profile named by `BCP-Agent`; `shop_keys` ours;
    `audience` our profile URL; the KB-JWT `nonce` must be the checkout id (PIX.md D3).
    """
    now = now or datetime.now(UTC)
    if not isinstance(mandate, str) or not mandate:
        raise Ap2Error("mandate_required", "Envie ap2.checkout_mandate para concluir esta compra (AP2 ativo).")
    segments = mandate.split("~")
    if len(segments) < 2 or not segments[-1]:
        raise Ap2Error("mandate_invalid_signature", "O mandato precisa ser um SD-JWT com KB-JWT ('~' final).")
    issuer_jwt, disclosures, kb_jwt = segments[0], segments[1:-1], segments[-1]

    # Step 2: issuer JWT signed by a key of the platform profile.
    issuer_segments = issuer_jwt.split(".")
    if len(issuer_segments) != 3:
        raise Ap2Error("mandate_invalid_signature", "O JWT do emissor do mandato está malformado.")
    try:
        issuer_header = _protected_header(issuer_segments[0])
    except ValueError as exc:
        raise Ap2Error("mandate_invalid_signature", f"Cabeçalho do mandato inválido: {exc}.") from exc
    issuer_key = _signing_keys(platform_keys, str(issuer_header.get("kid", "")))
    if issuer_key is None:
        raise Ap2Error(
            "agent_missing_key",
            f"A chave {issuer_header.get('kid')!r} do mandato não está em keys[] do perfil da plataforma.",
        )
    try:
        _, issuer_raw = verify_compact(issuer_jwt, issuer_key)
    except ValueError as exc:
        raise Ap2Error("mandate_invalid_signature", "A assinatura do mandato não confere.") from exc
    issuer_payload = _json_segment(b64url_encode(issuer_raw), "O payload do mandato")
    _check_times(issuer_payload, now, "O mandato")
    if "vct" in issuer_payload and issuer_payload["vct"] != CHECKOUT_MANDATE_VCT:
        raise Ap2Error("mandate_scope_mismatch", f"O mandato não é um mandato de checkout ({CHECKOUT_MANDATE_VCT}).")

    # Step 3: disclosures must be committed to in `_sd`.
    claims = _disclosed_claims(issuer_payload, disclosures)

    # Step 4: key binding JWT signed by the holder key in `cnf.jwk`.
    cnf = issuer_payload.get("cnf")
    try:
        holder_key = public_key_from_jwk(cnf["jwk"])  # type: ignore[index]
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise Ap2Error("mandate_invalid_signature", "O mandato não traz cnf.jwk (P-256) para o KB-JWT.") from exc
    try:
        kb_header, kb_raw = verify_compact(kb_jwt, holder_key)
    except ValueError as exc:
        raise Ap2Error("mandate_invalid_signature", "A assinatura do KB-JWT do mandato não confere.") from exc
    if kb_header.get("typ") != "kb+jwt":
        raise Ap2Error("mandate_invalid_signature", "O KB-JWT precisa ter typ 'kb+jwt'.")
    kb_claims = _json_segment(b64url_encode(kb_raw), "O KB-JWT")
    _check_times(kb_claims, now, "O KB-JWT")
    if kb_claims.get("sd_hash") != _sha256_b64url(mandate[: mandate.rfind("~") + 1].encode("ascii", "replace")):
        raise Ap2Error("mandate_invalid_signature", "O sd_hash do KB-JWT não corresponde ao mandato.")
    audiences = kb_claims.get("aud")
    if audience not in (audiences if isinstance(audiences, list) else [audiences]):
        raise Ap2Error("mandate_scope_mismatch", f"O KB-JWT do mandato não é destinado a {audience}.")
    if kb_claims.get("nonce") != checkout.get("id"):
        raise Ap2Error("mandate_scope_mismatch", "O nonce do KB-JWT não é o id deste checkout.")

    # Step 5: the checkout the buyer approved is our own signed checkout, bound by its hash.
    checkout_jwt, checkout_hash = claims.get("checkout_jwt"), claims.get("checkout_hash")
    if not isinstance(checkout_jwt, str) or not isinstance(checkout_hash, str):
        raise Ap2Error("mandate_scope_mismatch", "O mandato não traz checkout_jwt e checkout_hash.")
    if _sha256_b64url(checkout_jwt.encode("ascii", "replace")) != checkout_hash:
        raise Ap2Error("mandate_scope_mismatch", "checkout_hash não corresponde a checkout_jwt.")
    try:
        _, signed_raw = verify_compact(checkout_jwt, keys=shop_keys)
        signed_checkout = json.loads(signed_raw)
    except (ValueError, LookupError) as exc:
        raise Ap2Error(
            "merchant_authorization_invalid", "checkout_jwt não traz uma assinatura válida desta loja."
        ) from exc
    if not isinstance(signed_checkout, dict):
        raise Ap2Error("merchant_authorization_invalid", "checkout_jwt não contém um checkout.")

    # Step 6: the signed terms equal the live session (a replaced Pix charge invalidates the mandate).
    if _scope_value(signed_checkout) != _scope_value(checkout):
        raise Ap2Error(
            "mandate_scope_mismatch",
            "O checkout assinado no mandato difere do checkout atual (itens, totais ou cobrança Pix).",
        )
    return VerifiedMandate(mandate=mandate, checkout=signed_checkout, claims={**claims, "kb": kb_claims})
