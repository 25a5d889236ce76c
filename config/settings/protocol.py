"""BCP: agent authentication, signing, outbound calls, rate limits and the protocol mounts."""

from __future__ import annotations

from config.settings.base import DEBUG, VAR_DIR
from kernel.env import ConfigError, env_bool, env_int, env_list, env_str

# --- BCP --------------------------------------------------------------------------------------------------
BCP_ALLOW_ANONYMOUS = env_bool("BCP_ALLOW_ANONYMOUS", default=True)
# Hosts or CIDRs the outbound client may reach although they are private/loopback (dev and tests).
BCP_OUTBOUND_ALLOWLIST = env_list("BCP_OUTBOUND_ALLOWLIST", [])
# PEM of the shop's ES256 signing key; development generates one under var/ when unset.
BCP_SIGNING_KEY_FILE = env_str("BCP_SIGNING_KEY_FILE", str(VAR_DIR / "bcp_signing_key.pem"))
BCP_SIGNING_KEY_ID = env_str("BCP_SIGNING_KEY_ID", "loja-2026-07")
# Key rotation (BCP §14, BCP-SIG-07; README "Rotating the signing key"): the key that signed until
# BCP_PREVIOUS_SIGNING_KEY_RETIRED_AT stays in keys[] for 7 days after it, so platforms still verify webhooks and
# answers it signed. A compromised key is not named here: it leaves keys[] at once.
BCP_PREVIOUS_SIGNING_KEY_FILE = env_str("BCP_PREVIOUS_SIGNING_KEY_FILE", "")
BCP_PREVIOUS_SIGNING_KEY_ID = env_str("BCP_PREVIOUS_SIGNING_KEY_ID", "")
BCP_PREVIOUS_SIGNING_KEY_RETIRED_AT = env_str("BCP_PREVIOUS_SIGNING_KEY_RETIRED_AT", "")
if BCP_PREVIOUS_SIGNING_KEY_FILE and not (BCP_PREVIOUS_SIGNING_KEY_ID and BCP_PREVIOUS_SIGNING_KEY_RETIRED_AT):
    raise ConfigError("BCP_PREVIOUS_SIGNING_KEY_FILE needs BCP_PREVIOUS_SIGNING_KEY_ID and _RETIRED_AT")
if BCP_PREVIOUS_SIGNING_KEY_FILE and BCP_PREVIOUS_SIGNING_KEY_ID == BCP_SIGNING_KEY_ID:
    raise ConfigError("BCP_PREVIOUS_SIGNING_KEY_ID must differ from BCP_SIGNING_KEY_ID (kid values are unique)")
# Refuse unsigned agent requests unless they carry an API key (RFC 9421 signatures are otherwise optional).
BCP_REQUIRE_SIGNATURES = env_bool("BCP_REQUIRE_SIGNATURES", default=False)
# Every response body the shop builds is checked against its output model (and an MCP tool's outputSchema) before
# it leaves, failing loudly on drift: on in development and in the test suite, off in production, where the body is
# sent as the presenter built it (re-validating our own output was CPU on every answer, issue 34).
BCP_CHECK_OUTPUT = env_bool("BCP_CHECK_OUTPUT", default=DEBUG)
# Upper bound of cached platform profiles (Postgres rows); the oldest go first.
BCP_PROFILE_CACHE_MAX = env_int("BCP_PROFILE_CACHE_MAX", 10_000, minimum=10)
# Total deadline in seconds for fetching an agent profile (connect + headers + body; a drip cannot stretch it).
BCP_PROFILE_FETCH_TIMEOUT = env_int("BCP_PROFILE_FETCH_TIMEOUT", 5, minimum=1)
# The card handler advertised next to Pix (Google Pay style, seed 004) and the id instruments reference.
BCP_CARD_ENABLED = env_bool("BCP_CARD_ENABLED", default=True)
BCP_CARD_HANDLER_ID = env_str("BCP_CARD_HANDLER_ID", "gpay")
# The boleto handler (issue 37, README "Boleto"): advertised when a card gateway answers and the store gives a due
# date (StoreSettings.boleto_due_business_days > 0); instruments reference this id with type "boleto".
BCP_BOLETO_ENABLED = env_bool("BCP_BOLETO_ENABLED", default=True)
BCP_BOLETO_HANDLER_ID = env_str("BCP_BOLETO_HANDLER_ID", "br.dev.bcp.boleto")
# AP2 mandates extension (PIX.md §7): offered in /.well-known/bcp and the A2A Agent Card when true.
BCP_AP2_ENABLED = env_bool("BCP_AP2_ENABLED", default=False)
# BCP §15 buy links at {BCP_PUBLIC_URL}/comprar/{sku}:{qty} (advertised in /.well-known/bcp).
BCP_PERMALINK_ENABLED = env_bool("BCP_PERMALINK_ENABLED", default=True)
# The UCP face (issue 35): which UCP version `/.well-known/ucp` serves (the other one is at
# `/.well-known/ucp/{version}`, named in `supported_versions`).
UCP_DISCOVERY_VERSION = env_str("UCP_DISCOVERY_VERSION", "2026-01-11")
if UCP_DISCOVERY_VERSION not in ("2026-01-11", "2026-08-25"):
    raise ConfigError(f"UCP_DISCOVERY_VERSION: {UCP_DISCOVERY_VERSION!r} is not 2026-01-11 or 2026-08-25")
# The UCP conformance suite's simulation endpoints (`/testing/simulate-shipping/{order_id}`): present only when
# this secret is set, and answered only to a request whose `Simulation-Secret` header equals it.
UCP_SIMULATION_SECRET = env_str("UCP_SIMULATION_SECRET", "")
BCP_MCP_ALLOWED_HOSTS = env_list("BCP_MCP_ALLOWED_HOSTS", ["127.0.0.1:*", "localhost:*"])
BCP_MCP_ALLOWED_ORIGINS = env_list("BCP_MCP_ALLOWED_ORIGINS", [])
# Rate limits of every BCP transport (bcp_app/service/ratelimit.py): operation class -> (per platform credential,
# per anonymous client IP), in `limits` notation ("60/minute"); "" = unlimited. Redis-backed with REDIS_URL.
BCP_RATE_LIMITS = {
    "read": (env_str("BCP_RATE_LIMIT_READ", "600/minute"), env_str("BCP_RATE_LIMIT_ANONYMOUS_READ", "300/minute")),
    "write": (env_str("BCP_RATE_LIMIT_WRITE", "300/minute"), env_str("BCP_RATE_LIMIT_ANONYMOUS_WRITE", "120/minute")),
    "checkout_create": (
        env_str("BCP_RATE_LIMIT_CHECKOUT_CREATE", "60/minute"),
        env_str("BCP_RATE_LIMIT_ANONYMOUS_CHECKOUT_CREATE", "10/minute"),
    ),
}
# Failed API-key authentications per client IP, counted across REST, MCP and A2A: past it every key attempt
# from that IP answers `rate_limited` (429) until the window ends, so rotating keys cannot brute-force one.
BCP_RATE_LIMIT_AUTH_FAILURES = env_str("BCP_RATE_LIMIT_AUTH_FAILURES", "30/10minutes")
# Webhook endpoints (Pix PSP, NF-e provider) per source IP: generous, a PSP retrying a burst is never refused.
WEBHOOK_RATE_LIMIT = env_str("WEBHOOK_RATE_LIMIT", "600/minute")
WEBHOOK_RATE_LIMITED_PATHS: tuple[str, ...] = ("/payments/pix/webhook", "/fiscal/webhooks/", "/frete/webhooks/")
_all_limits = [
    *(text for pair in BCP_RATE_LIMITS.values() for text in pair),
    BCP_RATE_LIMIT_AUTH_FAILURES,
    WEBHOOK_RATE_LIMIT,
]
for _limit in (text for text in _all_limits if text):
    try:
        from limits import parse as _parse_limit

        _parse_limit(_limit)
    except ValueError as _exc:
        raise ConfigError(f"BCP_RATE_LIMIT_*/WEBHOOK_RATE_LIMIT: {_limit!r} is not a rate such as 60/minute") from _exc
# ASGI mounts are named by dotted path so the project package does not import the protocol app.
ASGI_MOUNTS: dict[str, str] = {
    "/bcp/mcp": "bcp_app.transports.mcp.server.asgi_app",
    "/ucp/mcp": "bcp_app.transports.mcp.ucp.asgi_app",  # UCP 2026-01-11's MCP binding on the same tools
    "/bcp/a2a": "bcp_app.transports.a2a.server.asgi_app",
    "/.well-known/agent-card.json": "bcp_app.transports.a2a.server.asgi_app",
}
# Django paths that are APIs, not pages: served by a second Django handler without the storefront's static
# files, session, CSRF, auth and messages middleware (config/asgi.py), which they never use.
ASGI_API_PREFIXES: tuple[str, ...] = ("/bcp/v1", "/ucp/v1", "/testing/")
# The URLconf holding every route under those prefixes, tried before the site's (config/asgi.py `ApiHandler`):
# config/urls.py includes it first, at the root, so it answers what the whole URLconf would.
ASGI_API_URLCONF = "bcp_app.urls"
ASGI_API_SKIPPED_MIDDLEWARE: frozenset[str] = frozenset(
    {
        "whitenoise.middleware.WhiteNoiseMiddleware",
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
        "django.contrib.messages.middleware.MessageMiddleware",
        "axes.middleware.AxesMiddleware",  # no logins on the API
        # Their paths (/healthz, /readyz; the PSP, fiscal and carrier webhooks) are never under an API prefix.
        "kernel.ops.health.HealthMiddleware",
        "kernel.ops.webhook_limits.WebhookRateLimitMiddleware",
    }
)
