"""`RequestContext`: who is calling and what was negotiated, shared by the REST, MCP and A2A transports.

`resolve_context` runs BCP §3 (profile URL, fetch/cache/validate, version, negotiation) plus
platform identity (API key first, then an RFC 9421 signature verified with the keys of the
caller's profile). It is synchronous (ORM + outbound HTTP); async transports wrap it with
`asgiref.sync.sync_to_async`. Protocol failures raise `bcp_app.protocol.errors.ProtocolError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bcp_app.models import Platform
from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.signatures import HttpMessage, SignatureError, verify_message
from bcp_app.service import negotiation, ratelimit
from bcp_app.service.platforms import key_prefix, platform_authenticate, platform_cache_key, platform_for_profile
from kernel.ops import request_cache, setting
from kernel.ops.access_log import annotate
from shop.catalog.selectors import checkout_read_keys
from shop.checkout.selectors import CheckoutOwner, agent_key
from shop.store.services import store_cache_key

KEY_REFRESH_INTERVAL = 60  # BCP-SIG-05: at most one profile refresh per minute for an unknown kid
# What an operation will read from the cache after identity, fetched in identity's round trip: every checkout
# operation reads the store settings and policies; those that price the checkout (complete prices it once more)
# also the shipping table and the catalog version. An A2A message is one of them (add to checkout, set address…).
_PRICING_OPERATIONS = frozenset(
    {
        "create_checkout",
        "update_checkout",
        "complete_checkout",
        "get_checkout",
        "create_cart",
        "update_cart",
        "get_cart",
        "a2a_message",
    }
)
_CHECKOUT_OPERATIONS = _PRICING_OPERATIONS | {"cancel_checkout", "cancel_cart"}


@dataclass
class SignedRequest:
    """What an HTTP transport hands over when the request carries `Signature-Input`."""

    message: HttpMessage
    body: bytes


@dataclass
class RequestContext:
    transport: str  # "rest" | "mcp" | "a2a"
    profile_url: str
    profile: dict[str, Any]
    capabilities: dict[str, str]  # active capability/extension name -> negotiated version
    platform: Platform | None = None  # authenticated platform (API key or signature), else None
    signature_keyid: str | None = None  # set when an RFC 9421 signature verified
    idempotency_key: str | None = None
    language: str = "pt-br"  # "pt-br" | "en"
    request_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # transport-specific bits (e.g. A2A contextId)

    @property
    def platform_id(self) -> str | None:
        """The registered platform, else the profile whose key signed this request (BCP §7, §18), else None."""
        if self.platform is not None:
            return self.platform.public_id
        return signed_platform_id(self.profile_url) if self.signature_keyid is not None else None

    @property
    def checkout_owner(self) -> CheckoutOwner:
        """Who owns the checkouts this caller creates and who may touch one (BCP-CHK-13: anyone else gets
        `not_found`): a platform by its id; an anonymous agent by its profile URL (§18 (4): anonymous agents
        create checkouts, so the URL that created one is the only identity it has); a permalink's browser by
        its session (`extra["session_key"]`)."""
        key = self.extra.get("session_key") or agent_key(negotiation.url_hash(self.profile_url))
        return CheckoutOwner(platform_id=self.platform_id, key=key)

    @property
    def authenticated(self) -> bool:
        return self.platform is not None or self.signature_keyid is not None

    @property
    def principal(self) -> str:
        """Idempotency scope (BCP §12: per platform profile): the platform, else the profile URL."""
        if self.platform is not None:
            return f"platform:{self.platform.public_id}"
        return "profile:" + negotiation.url_hash(self.profile_url)

    def has(self, capability: str) -> bool:
        return capability in self.capabilities

    def ucp_capabilities(self, *names: str) -> dict[str, list[dict[str, str]]]:
        """`ucp.capabilities` limited to the active ones among `names`, in that order (BCP-NEG-07)."""
        return {name: [{"version": self.capabilities[name]}] for name in names if name in self.capabilities}

    def platform_payment_handlers(self) -> dict[str, Any]:
        handlers = self.profile.get("ucp", {}).get("payment_handlers")
        return handlers if isinstance(handlers, dict) else {}


def signed_platform_id(profile_url: str) -> str:
    """Identity of a platform that signs with a key of its profile but never registered (BCP §7
    "authenticated (API key, OAuth, mTLS or signature)"): checkouts it creates carry this id, so a later
    request signed by a key of the same profile may read their orders (BCP-ORD-02, BCP-SIG-08)."""
    return "sig_" + negotiation.url_hash(profile_url)[:32]


def normalize_language(value: str | None) -> str:
    """BCP content is pt-BR by default; English when asked (first tag of Accept-Language wins)."""
    first = (value or "").split(",")[0].split(";")[0].strip().lower()
    return "en" if first.startswith("en") else "pt-br"


def resolve_context(
    *,
    transport: str,
    profile_url: str | None,
    api_key: str | None = None,
    signed: SignedRequest | None = None,
    idempotency_key: str | None = None,
    language: str | None = None,
    request_id: str | None = None,
    client_ip: str | None = None,
    operation: str | None = None,
    counted: ratelimit.Window | None = None,
    agent_header: str = negotiation.AGENT_HEADER,
) -> RequestContext:
    """Run BCP §3 and identify the caller. `profile_url` is the already-extracted URL (or None).

    `client_ip`: the caller's address when the transport knows it better than the request context does.
    `operation`: what the caller asks for (`create_checkout`…), so that what it reads from the cache comes in
    identity's round trip. `counted`: the rate-limit window this call counts in (`ratelimit.call_window`),
    counted in that same round trip and refused before anything else when over. `agent_header`: where the
    caller named its profile (`UCP-Agent` on UCP's face), for the refusals that name it.
    """
    url = negotiation.validate_profile_url(profile_url)
    # What identity and negotiation read from the cache, in one round trip with the call's rate-limit counter:
    # the caller's failed-key count, the version tokens of its key's platform and of its profile (with Redis:
    # one command, an INCR and MGET script, instead of four), and the tokens of what the operation reads next
    # (store settings, shipping table, catalog version). A token this process has seen means its own copy is
    # current (plain values, no model unpickled, nothing negotiated again).
    wanted = [negotiation.profile_version_key(url)]
    failures: list[ratelimit.Window] = []
    if api_key is not None:
        failures = ratelimit.failure_windows(client_ip, key_prefix(api_key))
        wanted += [*[window.key for window in failures], platform_cache_key(api_key)]
    if operation in _CHECKOUT_OPERATIONS:
        wanted += checkout_read_keys(pricing=operation in _PRICING_OPERATIONS)
    elif operation is not None:  # the agent trust tiers (bcp_app/service/trust.py) read the store settings
        wanted.append(store_cache_key())
    count = request_cache.prefetch(
        *(key for key in wanted if key is not None),
        counter=(counted.key, counted.timeout) if counted is not None else None,
    )
    ratelimit.refuse_if_over(counted, count)
    platform: Platform | None = None
    if api_key is not None:
        platform = platform_authenticate(api_key, client_ip=client_ip, failure_windows=failures)
        if platform.profile_url and platform.profile_url != url:
            raise ProtocolError(
                "profile_not_trusted", f"Esta credencial não pode usar o perfil informado em {agent_header}."
            )
    profile, capabilities = negotiation.negotiated(url)
    negotiation.check_version(profile)
    keyid = None
    if signed is not None:
        keyid = _verify_signature(url, profile, signed)
        if platform is None:
            platform = platform_for_profile(url)
    elif platform is None and setting.value("BCP_REQUIRE_SIGNATURES", False):
        raise ProtocolError("signature_missing", "Esta loja exige requisições assinadas (RFC 9421).")
    if platform is None and keyid is None and not setting.value("BCP_ALLOW_ANONYMOUS", True):
        raise ProtocolError("unauthenticated", "Autentique-se com uma chave de API ou uma assinatura HTTP.")
    ctx = RequestContext(
        transport=transport,
        profile_url=url,
        profile=profile,
        capabilities=capabilities,
        platform=platform,
        signature_keyid=keyid,
        idempotency_key=idempotency_key,
        language=normalize_language(language),
        request_id=request_id,
    )
    annotate(transport=transport, platform=ctx.platform_id or "anonymous")
    return ctx


def _verify_signature(url: str, profile: dict[str, Any], signed: SignedRequest) -> str:
    try:
        return verify_message(signed.message, signed.body, profile.get("keys") or []).keyid
    except SignatureError as exc:
        if exc.code != "key_not_found":
            raise ProtocolError(exc.code, exc.message) from exc
        age = negotiation.profile_age_seconds(url)
        if age is not None and age < KEY_REFRESH_INTERVAL:
            raise ProtocolError(exc.code, exc.message) from exc
    # Unknown kid: the platform may have rotated keys; refresh its profile once and retry.
    fresh = negotiation.get_platform_profile(url, force_refresh=True)
    try:
        return verify_message(signed.message, signed.body, fresh.get("keys") or []).keyid
    except SignatureError as exc:
        raise ProtocolError(exc.code, exc.message) from exc


__all__ = ["RequestContext", "SignedRequest", "normalize_language", "resolve_context"]
