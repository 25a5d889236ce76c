"""RFC 9421 HTTP Message Signatures (ES256, raw r||s) and RFC 9530 Content-Digest, with `cryptography`.

`sign_message` produces `Signature-Input`/`Signature` for our webhooks and responses; `verify_message`
checks a platform's request signature with the keys of its profile (BCP §14). Failures raise
`SignatureError` whose `code` is the BCP §5.4 code (`signature_invalid`, `key_not_found`,
`digest_mismatch`, `algorithm_unsupported`, `signature_missing`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric import ec

from bcp_app.protocol import keys as shop_keys
from bcp_app.protocol.sfv import InnerList, Item, SFVError, parse_dictionary, serialize_inner_list

ES256_ALG = "ecdsa-p256-sha256"
# BCP §14: a request signature counts only with these; the second set is required when present.
REQUEST_BASE_COMPONENTS = ("@method", "@authority", "@path")
REQUEST_IF_PRESENT = ("bcp-agent", "idempotency-key", "content-digest", "content-type")
WEBHOOK_COMPONENTS = (
    "@method",
    "@authority",
    "@path",
    "content-digest",
    "content-type",
    "bcp-agent",
    "webhook-id",
    "webhook-timestamp",
)
RESPONSE_COMPONENTS = ("@status", "content-digest", "content-type")
# `created` bounds (UCP reference): older than 5 minutes, or ahead of our clock beyond the skew → invalid.
MAX_AGE_SECONDS = 300
CLOCK_SKEW_SECONDS = 60


class SignatureError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class HttpMessage:
    """The parts of a request (or response, with `status`) that signatures can cover."""

    method: str = ""
    authority: str = ""
    path: str = "/"
    query: str | None = None  # raw query without "?", None when the URL has none
    headers: Mapping[str, str] = field(default_factory=dict)  # any case; looked up case-insensitively
    status: int | None = None

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in self.headers.items():
            if key.lower() == lowered:
                return str(value).strip()
        return None


@dataclass(frozen=True)
class VerifiedSignature:
    label: str
    keyid: str
    components: tuple[str, ...]
    created: int | None


def content_digest(body: bytes) -> str:
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"


def digest_matches(header: str, body: bytes) -> bool:
    try:
        parsed = parse_dictionary(header)
    except SFVError:
        return False
    entry = parsed.get("sha-256")
    if not isinstance(entry, Item) or not isinstance(entry.value, bytes):
        return False
    return hmac.compare_digest(entry.value, hashlib.sha256(body).digest())


def normalized_authority(authority: str) -> str:
    """RFC 9421 §2.2.3: lowercase host, default port removed (`:443` for https, `:80` for http)."""
    host = authority.strip().lower()
    for default in (":443", ":80"):
        if host.endswith(default):
            return host[: -len(default)]
    return host


def _component_value(msg: HttpMessage, name: str) -> str:
    if name == "@method":
        return msg.method.upper()
    if name == "@authority":
        return normalized_authority(msg.authority)
    if name == "@path":
        return msg.path or "/"
    if name == "@query":
        return "?" + (msg.query or "")
    if name == "@status":
        if msg.status is None:
            raise SignatureError("signature_invalid", "@status only applies to responses")
        return str(msg.status)
    if name.startswith("@"):
        raise SignatureError("signature_invalid", f"unsupported derived component {name}")
    value = msg.header(name)
    if value is None:
        raise SignatureError("signature_invalid", f"covered header {name} is missing")
    return value


def signature_base(msg: HttpMessage, components: Iterable[str], params_text: str) -> bytes:
    lines = [f'"{name}": {_component_value(msg, name)}' for name in components]
    lines.append(f'"@signature-params": {params_text}')
    return "\n".join(lines).encode()


@functools.lru_cache(maxsize=16)
def _signature_params(covered: tuple[str, ...], created: int, keyid: str) -> str:
    """`@signature-params` (RFC 9421 §2.3) of `covered` with `created` and `keyid`: the same text for every message
    signed in the same second with the same key and components (the shop's responses and webhooks), so it is
    serialized once per second rather than per message (issue 34: the SFV serialization was most of the ~180
    Python calls of signing a complete's answer)."""
    return serialize_inner_list(InnerList([Item(c) for c in covered], {"created": created, "keyid": keyid}))


def sign_message(
    msg: HttpMessage,
    components: Iterable[str],
    *,
    key: ec.EllipticCurvePrivateKey | None = None,
    keyid: str | None = None,
    label: str = "sig1",
    created: int | None = None,
) -> dict[str, str]:
    """Headers `Signature-Input` and `Signature` for `msg` (its covered headers must already be set)."""
    covered = tuple(components)
    inner = _signature_params(
        covered, int(created if created is not None else time.time()), keyid or shop_keys.signing_key_id()
    )
    signature = shop_keys.es256_sign(signature_base(msg, covered, inner), key)
    return {
        "Signature-Input": f"{label}={inner}",
        "Signature": f"{label}=:{base64.b64encode(signature).decode()}:",
    }


def required_request_components(msg: HttpMessage) -> set[str]:
    required = set(REQUEST_BASE_COMPONENTS)
    if msg.query:
        required.add("@query")
    required.update(name for name in REQUEST_IF_PRESENT if msg.header(name) is not None)
    return required


def verify_message(
    msg: HttpMessage,
    body: bytes,
    jwks: Iterable[Mapping],
    *,
    required: Iterable[str] | None = None,
    now: float | None = None,
) -> VerifiedSignature:
    """Verify every signature of `msg` (RFC 9421 §3.2) with `kid`-matched keys; raise SignatureError otherwise.

    Every `Signature-Input` label must have its `Signature` and verify, each covering `required` (BCP §14),
    with `created` no older than `MAX_AGE_SECONDS` and not ahead of our clock by more than `CLOCK_SKEW_SECONDS`
    (the UCP reference's bounds). Returns the first label's result.
    """
    sig_input_header, sig_header = msg.header("signature-input"), msg.header("signature")
    if not sig_input_header or not sig_header:
        raise SignatureError("signature_missing", "Os cabeçalhos Signature e Signature-Input são obrigatórios.")
    try:
        inputs, signatures = parse_dictionary(sig_input_header), parse_dictionary(sig_header)
    except SFVError as exc:
        raise SignatureError(
            "signature_invalid", "Signature ou Signature-Input malformado: não é um dicionário RFC 8941."
        ) from exc
    if not inputs or set(inputs) != set(signatures):
        raise SignatureError(
            "signature_invalid", "Cada rótulo de Signature-Input precisa do seu Signature, e vice-versa."
        )
    needed = set(required if required is not None else required_request_components(msg))
    keys = list(jwks)
    clock = now if now is not None else time.time()
    verified = [
        _verify_label(msg, body, keys, label, inputs[label], signatures[label], needed, clock) for label in inputs
    ]
    return verified[0]


def _covered(inner: InnerList) -> list[str]:
    components: list[str] = []
    for item in inner.items:
        if not isinstance(item.value, str) or item.params or item.value != item.value.lower():
            raise SignatureError(
                "signature_invalid", "Signature-Input: os componentes cobertos são nomes simples, em minúsculas."
            )
        components.append(item.value)
    if len(set(components)) != len(components):
        raise SignatureError("signature_invalid", "Signature-Input: um componente coberto aparece duas vezes.")
    return components


def _check_times(params: Mapping[str, object], now: float) -> int:
    created = params.get("created")
    if not isinstance(created, int) or isinstance(created, bool):
        raise SignatureError("signature_invalid", "Signature-Input precisa do parâmetro created.")
    if created < now - MAX_AGE_SECONDS:
        raise SignatureError(
            "signature_invalid", f"A assinatura foi criada há mais de {MAX_AGE_SECONDS} s: assine a requisição de novo."
        )
    if created > now + CLOCK_SKEW_SECONDS:
        raise SignatureError(
            "signature_invalid", "O parâmetro created da assinatura está no futuro: confira o relógio."
        )
    expires = params.get("expires")
    if isinstance(expires, int) and expires < now:
        raise SignatureError("signature_invalid", "A assinatura expirou (parâmetro expires).")
    return created


def _verify_label(
    msg: HttpMessage,
    body: bytes,
    jwks: list[Mapping],
    label: str,
    inner: Item | InnerList,
    sig_item: Item | InnerList,
    needed: set[str],
    now: float,
) -> VerifiedSignature:
    if not isinstance(inner, InnerList) or not isinstance(sig_item, Item) or not isinstance(sig_item.value, bytes):
        raise SignatureError("signature_invalid", f"A entrada {label} de Signature ou Signature-Input está malformada.")
    components = _covered(inner)
    missing = sorted(needed - set(components))
    if missing:
        raise SignatureError("signature_invalid", f"A assinatura precisa cobrir {', '.join(missing)} (BCP §14).")
    alg = inner.params.get("alg")
    if alg is not None and alg != ES256_ALG:
        raise SignatureError("algorithm_unsupported", f"Algoritmo {alg!r} não suportado: use {ES256_ALG} (ES256).")
    created = _check_times(inner.params, now)
    keyid = inner.params.get("keyid")
    if not isinstance(keyid, str):
        raise SignatureError("signature_invalid", "Signature-Input precisa do parâmetro keyid.")
    jwk = next((k for k in jwks if k.get("kid") == keyid and k.get("use") != "enc"), None)
    if jwk is None:
        raise SignatureError(
            "key_not_found", f"Nenhuma chave de assinatura com kid {keyid!r} em keys[] do perfil da plataforma."
        )
    try:
        public = shop_keys.public_key_from_jwk(dict(jwk))
    except ValueError as exc:
        raise SignatureError(
            "algorithm_unsupported", f"A chave {keyid!r} do perfil não é uma chave EC P-256 (ES256) válida."
        ) from exc
    digest_header = msg.header("content-digest")
    body_unbound = digest_header is None and bool(body)
    if body_unbound:
        raise SignatureError(
            "digest_mismatch", "Content-Digest (sha-256) é obrigatório numa requisição assinada com corpo."
        )
    if digest_header is not None and not digest_matches(digest_header, body):
        raise SignatureError(
            "digest_mismatch", "Content-Digest não corresponde ao corpo: envie o sha-256 do corpo exato."
        )
    # RFC 9421 §3.2: the base ends with the `@signature-params` value exactly as received.
    base = signature_base(msg, components, inner.raw or serialize_inner_list(inner))
    if not shop_keys.es256_verify(public, sig_item.value, base):
        raise SignatureError(
            "signature_invalid", f"A assinatura não confere com a chave {keyid!r} do perfil da plataforma."
        )
    return VerifiedSignature(label, keyid, tuple(components), created)
