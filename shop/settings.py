"""Django settings for the shop. Configuration comes only from environment variables (README)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from celery.schedules import crontab
from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _

from shop.env import ConfigError, env_bool, env_int, env_list, env_str, parse_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
# Templates, static sources and locale: top-level folders of the source tree; a non-editable install
# (`pip install .`, the image) carries them as package data under shop/_site (setup.py).
_INSTALLED_SITE_DIR = Path(__file__).resolve().parent / "_site"
SITE_DIR = _INSTALLED_SITE_DIR if _INSTALLED_SITE_DIR.is_dir() else BASE_DIR
VAR_DIR = Path(env_str("SHOP_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DJANGO_DEBUG", default=True)
RUNNING_IN_CI = env_bool("CI", default=False)

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ConfigError("DJANGO_SECRET_KEY is required when DJANGO_DEBUG is off")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# Absolute base of every URL we hand out (continue_url, permalinks, BCP profile, webhooks).
BCP_PUBLIC_URL = env_str("BCP_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "shop.admin_site.ShopAdminConfig",  # django.contrib.admin with our site (header, dashboard)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "easy_thumbnails",
    "axes",  # admin login lockout (failed attempts in Postgres)
    "ninja",  # serves Swagger UI / ReDoc from its own static files: /bcp/v1/docs works offline (no CDN)
    "orders",
    "payments",
    "fiscal",
    "shop",
    "bcp_app",
]

MIDDLEWARE = [
    "shop.ops.health.HealthMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "shop.ops.webhook_limits.WebhookRateLimitMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "shop.error_pages.MethodNotAllowedPage",
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out login into the lockout page
]

ROOT_URLCONF = "shop.urls"
ASGI_APPLICATION = "shop.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [SITE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "shop.context_processors.shop",
                "shop.context_processors.store",
                "django.template.context_processors.csp",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------------
# No DATABASE_URL: an embedded SQLite file so that `make run` works on a bare machine.
DATABASE_URL = env_str("DATABASE_URL", "")
_db = parse_database_url(DATABASE_URL or f"sqlite:///{VAR_DIR / 'shop.sqlite3'}")
if RUNNING_IN_CI and _db.engine.endswith("sqlite3"):
    raise ConfigError("CI=true requires PostgreSQL: set DATABASE_URL=postgres://… (SQLite fallback refused)")
DATABASES = {
    "default": {
        "ENGINE": _db.engine,
        "NAME": _db.name,
        "USER": _db.user,
        "PASSWORD": _db.password,
        "HOST": _db.host,
        "PORT": _db.port,
        "OPTIONS": dict(_db.options or {}),
    }
}
if _db.engine.endswith("postgresql"):
    # psycopg 3 connection pool; CONN_MAX_AGE must stay 0 with it. The minimum covers one process's usual
    # concurrency (uvicorn worker: the requests in flight; Celery prefork child: 1) so a burst does not pay
    # for new connections; the test runner lowers it (many short-lived processes share one server). The
    # pool tests each connection it hands out, so a backend killed by a restart or an admin is replaced
    # instead of answering with a 500.
    from shop.db_pool import check_connection

    DATABASES["default"]["OPTIONS"]["pool"] = {
        "check": check_connection,
        "min_size": env_int("DATABASE_POOL_MIN", 4, minimum=0),
        "max_size": env_int("DATABASE_POOL_MAX", 10, minimum=1),
        "timeout": env_int("DATABASE_POOL_TIMEOUT", 10, minimum=1),
    }
else:
    DATABASES["default"]["OPTIONS"].setdefault("timeout", 20)
USING_POSTGRES = _db.engine.endswith("postgresql")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# --- Auth, i18n, static -----------------------------------------------------------------------------
# Admin login lockout (django-axes): after SHOP_ADMIN_LOGIN_FAILURE_LIMIT failed logins from one client IP
# the login answers 429 with a Portuguese page for SHOP_ADMIN_LOGIN_COOLOFF_MINUTES; a correct login after
# that resets the count. Attempts are rows in the database (AxesDatabaseHandler), so every web process
# sees them. The IP is REMOTE_ADDR: uvicorn sets it from X-Forwarded-For only for trusted proxies.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_FAILURE_LIMIT = env_int("SHOP_ADMIN_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("SHOP_ADMIN_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "shop.admin.lockout.lockout_response"  # 429, Portuguese page (admin/shop/login_locked.html)
AXES_VERBOSE = False
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "pt-br"
LANGUAGES = [("pt-br", _("Português")), ("en", _("English"))]
LOCALE_PATHS = [SITE_DIR / "locale"]
TIME_ZONE = "America/Sao_Paulo"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [SITE_DIR / "static"]
# Uploaded media (product photos, the store logo): local files by default; an S3-compatible bucket
# (AWS S3, Cloudflare R2, MinIO, DigitalOcean Spaces…) when SHOP_MEDIA_S3_BUCKET is set.
SHOP_MEDIA_S3_BUCKET = env_str("SHOP_MEDIA_S3_BUCKET", "")
if SHOP_MEDIA_S3_BUCKET:
    _media_storage: dict[str, object] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": SHOP_MEDIA_S3_BUCKET,
            "endpoint_url": env_str("SHOP_MEDIA_S3_ENDPOINT_URL", "") or None,
            "region_name": env_str("SHOP_MEDIA_S3_REGION", "") or None,
            "access_key": env_str("SHOP_MEDIA_S3_ACCESS_KEY_ID", "") or None,
            "secret_key": env_str("SHOP_MEDIA_S3_SECRET_ACCESS_KEY", "") or None,
            # Public photos: plain URLs (a CDN or the bucket's public domain), no expiring signatures.
            "custom_domain": env_str("SHOP_MEDIA_S3_CUSTOM_DOMAIN", "") or None,
            "querystring_auth": env_bool("SHOP_MEDIA_S3_QUERYSTRING_AUTH", False),
            "file_overwrite": False,
            "location": env_str("SHOP_MEDIA_S3_PREFIX", "media"),
        },
    }
else:
    _media_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
STORAGES = {
    "default": _media_storage,
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
MEDIA_URL = env_str("SHOP_MEDIA_URL", "/media/")
MEDIA_ROOT = Path(env_str("SHOP_MEDIA_ROOT", str(VAR_DIR / "media")))
# WhiteNoise serves static files only. Local media are served by Django itself when this is true
# (development and `make run` under uvicorn); in production put the media on a bucket or let the
# reverse proxy serve MEDIA_ROOT at MEDIA_URL and set it to false.
SHOP_SERVE_MEDIA = env_bool("SHOP_SERVE_MEDIA", default=DEBUG)
# Product photos: one thumbnail per photo, made once when the photo is saved.
SHOP_IMAGE_MAX_BYTES = env_int("SHOP_IMAGE_MAX_BYTES", 5 * 1024 * 1024, minimum=1024)
THUMBNAIL_DEFAULT_STORAGE_ALIAS = "default"
SHOP_THUMBNAIL_OPTIONS = {"size": (480, 480), "crop": "smart", "quality": 85}  # the admin's thumbnail
# What the storefront shows (product cards, the product gallery, cart lines), each at 1× and 2× for srcset.
# Made once when a photo is saved (shop.images); pages read the stored names, never render one.
THUMBNAIL_ALIASES = {
    "": {
        "card": {"size": (320, 320), "crop": "smart", "quality": 82},
        "card_2x": {"size": (640, 640), "crop": "smart", "quality": 80},
        "detail": {"size": (600, 600), "crop": "smart", "quality": 85},
        "detail_2x": {"size": (1200, 1200), "crop": "smart", "quality": 82},
        "cart": {"size": (64, 64), "crop": "smart", "quality": 82},
        "cart_2x": {"size": (128, 128), "crop": "smart", "quality": 80},
    }
}

# --- E-mail -----------------------------------------------------------------------------------------
# Django 6.1 mailers; console in development, SMTP in production.
_email_backend = env_str(
    "DJANGO_EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend" if DEBUG else "django.core.mail.backends.smtp.EmailBackend",
)
MAILERS = {
    "default": {
        "BACKEND": _email_backend,
        "OPTIONS": (
            {
                "host": env_str("EMAIL_HOST", "localhost"),
                "port": env_int("EMAIL_PORT", 25),
                "username": env_str("EMAIL_HOST_USER"),
                "password": env_str("EMAIL_HOST_PASSWORD"),
                "use_tls": env_bool("EMAIL_USE_TLS", False),
                "timeout": 10,
            }
            if _email_backend.endswith("smtp.EmailBackend")
            else {}
        ),
    }
}
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Loja Exemplo <pedidos@loja.example.com.br>")

# --- Production hardening (DEBUG off) ------------------------------------------------------------------
if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", True)
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SECURE_REFERRER_POLICY = "same-origin"
# Content Security Policy (Django's built-in CSP) for the storefront, buyer pages and admin: scripts and
# styles come from our static files; the few inline <style>/<script> blocks carry `nonce="{{ csp_nonce }}"`;
# no page uses style="…" attributes (classes instead), so none are allowed.
# Images may be https (product photos on a CDN) or data: (Pix QR codes). The protocol mounts get the
# SecurityMiddleware headers from the ASGI router (shop/asgi_guard.py).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:", "https:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# --- Celery -------------------------------------------------------------------------------------------
# No broker: tasks run eagerly in-process (embedded default for `make run`).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", "") or None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", default=not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
# Every task is idempotent (unique keys, conditional updates), so a task whose worker died is run again:
# acknowledged only after it ran, re-queued when its worker process is lost. A task left unacknowledged
# by a killed worker goes back to the queue once it is older than the visibility timeout, which must be
# longer than any task may run (the hard time limit) or a running task would be handed out twice.
# Beat (`celery -A shop beat`) must run in production: its sweeps re-drive whatever is still stranded.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 300, minimum=1)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3 * CELERY_TASK_TIME_LIMIT, minimum=1),
}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    "expire-checkouts": {"task": "shop.tasks.expire_checkouts", "schedule": timedelta(minutes=1)},
    "reconcile-pix-charges": {"task": "payments.tasks.reconcile_pix_charges", "schedule": timedelta(minutes=1)},
    "expire-pix-charges": {"task": "payments.tasks.expire_pix_charges", "schedule": timedelta(minutes=1)},
    # Card payments left pending (timeout, lost webhook), card inbox rows and estornos left behind.
    "reconcile-card-payments": {"task": "payments.tasks.reconcile_card_payments", "schedule": timedelta(minutes=1)},
    "reconcile-received-pix": {"task": "payments.tasks.reconcile_received_pix", "schedule": crontab(minute=41)},
    "purge-idempotency-records": {
        "task": "bcp_app.tasks.purge_idempotency_records",
        "schedule": crontab(minute=17),
    },
    "retry-order-webhooks": {"task": "bcp_app.tasks.retry_order_webhooks", "schedule": timedelta(minutes=1)},
    # Buyer e-mails whose after-commit enqueue was lost (broker down) are sent by this sweep, still once.
    "send-pending-order-emails": {"task": "orders.tasks.send_pending_emails", "schedule": timedelta(minutes=5)},
    # Money side effects (refund requests) whose task was lost or failed: retried, each exactly once.
    "sweep-outbox": {"task": "orders.tasks.sweep_outbox", "schedule": timedelta(minutes=1)},
    "remind-abandoned-checkouts": {"task": "shop.tasks.remind_abandoned_checkouts", "schedule": timedelta(minutes=10)},
    # NF-e jobs: provider retries, polls of notes in processing, jobs and webhooks lost in a crash.
    "sweep-fiscal": {"task": "fiscal.tasks.sweep_fiscal", "schedule": timedelta(minutes=1)},
    "sweep-fiscal-requests": {"task": "shop.tasks.sweep_fiscal_requests", "schedule": timedelta(minutes=5)},
}

# `make run` only (no broker): run the interval sweeps above in a thread of the web process (shop/ops/scheduler.py).
SHOP_INPROCESS_SCHEDULER = env_bool("SHOP_INPROCESS_SCHEDULER", default=False)

# --- Shop ---------------------------------------------------------------------------------------------
SHOP_NAME = env_str("SHOP_NAME", "Loja Exemplo")  # default trade name of the store settings row
# The buyer e-mails' header/footer context comes from the store settings (orders imports nothing of ours).
ORDERS_EMAIL_CONTEXT_PROVIDER = "shop.store.email_context"
# CEP → address lookup (ViaCEP's JSON shape; "{cep}" is replaced by the 8 digits). Empty: offline UF table only.
CEP_PROVIDER_URL = env_str("CEP_PROVIDER_URL", "https://viacep.com.br/ws/{cep}/json/")
CEP_PROVIDER_TIMEOUT_MS = env_int("CEP_PROVIDER_TIMEOUT_MS", 2500, minimum=100)
CEP_CACHE_SECONDS = env_int("CEP_CACHE_SECONDS", 7 * 24 * 3600, minimum=0)
# Sections the shop adds to the order pages (orders imports nothing of ours): the NF-e box.
ORDERS_ADMIN_PANELS = [
    "shop.fiscal.panels.admin_panel",
    "shop.checkout.panels.consent_admin_panel",
    "bcp_app.ap2_store.admin_panel",
]
ORDERS_PERMALINK_PANELS = ["shop.fiscal.panels.permalink_panel"]
# Members the DRF API adds to an order and buyer e-mails receive as `extras` (the NF-e and its DANFE link).
ORDERS_ORDER_EXTRAS = {"fiscal_documents": "shop.fiscal.selectors.fiscal_documents_for_order"}
SHOP_CHECKOUT_TTL_SECONDS = env_int("SHOP_CHECKOUT_TTL_SECONDS", 6 * 3600, minimum=60)
# How long a checkout's signed continue_url (agent hand-off, reminder e-mail) opens it, from its creation.
SHOP_CHECKOUT_LINK_MAX_AGE_SECONDS = env_int("SHOP_CHECKOUT_LINK_MAX_AGE_SECONDS", 7 * 24 * 3600, minimum=60)
# A cart (storefront or BCP cart capability) is kept this long after its last change.
SHOP_CART_TTL_SECONDS = env_int("SHOP_CART_TTL_SECONDS", 30 * 24 * 3600, minimum=60)
# Abandoned checkout (an e-mail, no order): one reminder this many minutes after the last change; 0 = never.
SHOP_CHECKOUT_REMINDER_MINUTES = env_int("SHOP_CHECKOUT_REMINDER_MINUTES", 120, minimum=0)

# --- Fiscal (NF-e) ------------------------------------------------------------------------------------
FISCAL_PROVIDER = env_str("FISCAL_PROVIDER", "sandbox")  # "sandbox" | "focusnfe"
FISCAL_ISSUE_ON = env_str("FISCAL_ISSUE_ON", "paid")  # "paid" | "shipped" | "off"
if FISCAL_PROVIDER not in ("sandbox", "focusnfe") or FISCAL_ISSUE_ON not in ("paid", "shipped", "off"):
    raise ConfigError("FISCAL_PROVIDER must be sandbox|focusnfe and FISCAL_ISSUE_ON paid|shipped|off")
FISCAL_FOCUSNFE_TOKEN = env_str("FISCAL_FOCUSNFE_TOKEN", "")
FISCAL_FOCUSNFE_BASE_URL = env_str("FISCAL_FOCUSNFE_BASE_URL", "")  # empty: Focus NFe's URL for the environment
FISCAL_WEBHOOK_SECRET = env_str("FISCAL_WEBHOOK_SECRET", "")

# --- Pix / payments -----------------------------------------------------------------------------------
BCP_PIX_SANDBOX = env_bool("BCP_PIX_SANDBOX", default=DEBUG)
BCP_PIX_SANDBOX_FORCE = env_bool("BCP_PIX_SANDBOX_FORCE", default=False)
if BCP_PIX_SANDBOX and not DEBUG and not BCP_PIX_SANDBOX_FORCE:
    raise ConfigError("BCP_PIX_SANDBOX is refused with DJANGO_DEBUG off (set BCP_PIX_SANDBOX_FORCE=true to insist)")
PIX_SANDBOX_WEBHOOK_SECRET = env_str("PIX_SANDBOX_WEBHOOK_SECRET", "sandbox-webhook-secret" if DEBUG else "")
PIX_HANDLER_ID = env_str("PIX_HANDLER_ID", "pix_recebedor_001")
PIX_EXPIRATION_SECONDS = env_int("PIX_EXPIRATION_SECONDS", 1800, minimum=60)
PIX_MERCHANT_NAME = env_str("PIX_MERCHANT_NAME", "LOJA EXEMPLO LTDA")
PIX_MERCHANT_CITY = env_str("PIX_MERCHANT_CITY", "SAO PAULO")
# Merchant name/city come from the store settings row (legal name, city) once it exists.
PIX_MERCHANT_PROVIDER = "shop.store.pix_merchant"
PIX_KEY = env_str("PIX_KEY", "7d9f0335-8dcc-4054-9bf9-0dbd61d36906")
PIX_MIN_AMOUNT = env_int("PIX_MIN_AMOUNT", 1, minimum=1)
PIX_MAX_AMOUNT = env_int("PIX_MAX_AMOUNT", 10_000_000, minimum=1)
PIX_PSP_BASE_URL = env_str("PIX_PSP_BASE_URL", "")
PIX_PSP_TOKEN_URL = env_str("PIX_PSP_TOKEN_URL", "")
PIX_PSP_CLIENT_ID = env_str("PIX_PSP_CLIENT_ID", "")
PIX_PSP_CLIENT_SECRET = env_str("PIX_PSP_CLIENT_SECRET", "")
PIX_PSP_CERT_FILE = env_str("PIX_PSP_CERT_FILE", "")
PIX_PSP_KEY_FILE = env_str("PIX_PSP_KEY_FILE", "")
PIX_PSP_CA_FILE = env_str("PIX_PSP_CA_FILE", "")
# Seconds past expires_at before a charge is expired locally (absorbs webhook latency, PIX.md §3.2).
PIX_EXPIRY_GRACE_SECONDS = env_int("PIX_EXPIRY_GRACE_SECONDS", 120, minimum=0)
# An agent checkout paid before complete waits this long for the platform's complete, then the shop
# completes it itself (PIX.md §3.1, §10 D1).
PIX_COMPLETION_GRACE_SECONDS = env_int("PIX_COMPLETION_GRACE_SECONDS", 900, minimum=0)
# Bacen PSPs: header the TLS proxy sets after verifying the PSP client certificate ("" = not checked).
PIX_WEBHOOK_MTLS_HEADER = env_str("PIX_WEBHOOK_MTLS_HEADER", "")
PIX_WEBHOOK_MTLS_VALUE = env_str("PIX_WEBHOOK_MTLS_VALUE", "SUCCESS")
# Sandbox: where it delivers webhooks (default {BCP_PUBLIC_URL}/payments/pix/webhook/pix); refunds settle at once.
PIX_SANDBOX_WEBHOOK_URL = env_str("PIX_SANDBOX_WEBHOOK_URL", "")
PIX_SANDBOX_REFUND_AUTOSETTLE = env_bool("PIX_SANDBOX_REFUND_AUTOSETTLE", True)
# Dotted path of the card gateway class; empty = sandbox gateway when BCP_PIX_SANDBOX, else none.
# Pagar.me API v5: "payments.card.pagarme.PagarmeGateway" with the PAGARME_* settings below.
PAYMENTS_CARD_GATEWAY = env_str("PAYMENTS_CARD_GATEWAY", "")
PAGARME_BASE_URL = env_str("PAGARME_BASE_URL", "https://api.pagar.me/core/v5")
PAGARME_SECRET_KEY = env_str("PAGARME_SECRET_KEY", "")  # sk_…: HTTP Basic user of every API call
PAGARME_PUBLIC_KEY = env_str("PAGARME_PUBLIC_KEY", "")  # pk_…: the browser tokenizer's appId (not a secret)
PAGARME_TIMEOUT_SECONDS = env_int("PAGARME_TIMEOUT_SECONDS", 15, minimum=1)
PAGARME_STATEMENT_DESCRIPTOR = env_str("PAGARME_STATEMENT_DESCRIPTOR", "")
# Basic credentials configured on the webhook in Pagar.me's dashboard; without them every delivery is refused.
PAGARME_WEBHOOK_USER = env_str("PAGARME_WEBHOOK_USER", "")
PAGARME_WEBHOOK_PASSWORD = env_str("PAGARME_WEBHOOK_PASSWORD", "")
if "pagarme" in PAYMENTS_CARD_GATEWAY:
    # The buyer's browser sends the card to Pagar.me's tokens API itself (static/shop/card_tokenizer.js).
    SECURE_CSP["connect-src"] = [*SECURE_CSP["connect-src"], "https://api.pagar.me"]

# --- BCP --------------------------------------------------------------------------------------------------
BCP_ALLOW_ANONYMOUS = env_bool("BCP_ALLOW_ANONYMOUS", default=True)
# Hosts or CIDRs the outbound client may reach although they are private/loopback (dev and tests).
BCP_OUTBOUND_ALLOWLIST = env_list("BCP_OUTBOUND_ALLOWLIST", [])
# PEM of the shop's ES256 signing key; development generates one under var/ when unset.
BCP_SIGNING_KEY_FILE = env_str("BCP_SIGNING_KEY_FILE", str(VAR_DIR / "bcp_signing_key.pem"))
BCP_SIGNING_KEY_ID = env_str("BCP_SIGNING_KEY_ID", "loja-2026-07")
# Refuse unsigned agent requests unless they carry an API key (RFC 9421 signatures are otherwise optional).
BCP_REQUIRE_SIGNATURES = env_bool("BCP_REQUIRE_SIGNATURES", default=False)
# Upper bound of cached platform profiles (Postgres rows); the oldest go first.
BCP_PROFILE_CACHE_MAX = env_int("BCP_PROFILE_CACHE_MAX", 10_000, minimum=10)
# Total deadline in seconds for fetching an agent profile (connect + headers + body; a drip cannot stretch it).
BCP_PROFILE_FETCH_TIMEOUT = env_int("BCP_PROFILE_FETCH_TIMEOUT", 5, minimum=1)
# The card handler advertised next to Pix (Google Pay style, seed 004) and the id instruments reference.
BCP_CARD_ENABLED = env_bool("BCP_CARD_ENABLED", default=True)
BCP_CARD_HANDLER_ID = env_str("BCP_CARD_HANDLER_ID", "gpay")
# AP2 mandates extension (PIX.md §7): offered in /.well-known/bcp and the A2A Agent Card when true.
BCP_AP2_ENABLED = env_bool("BCP_AP2_ENABLED", default=False)
# BCP §15 buy links at {BCP_PUBLIC_URL}/comprar/{sku}:{qty} (advertised in /.well-known/bcp).
BCP_PERMALINK_ENABLED = env_bool("BCP_PERMALINK_ENABLED", default=True)
BCP_MCP_ALLOWED_HOSTS = env_list("BCP_MCP_ALLOWED_HOSTS", ["127.0.0.1:*", "localhost:*"])
BCP_MCP_ALLOWED_ORIGINS = env_list("BCP_MCP_ALLOWED_ORIGINS", [])
# Rate limits of every BCP transport (bcp_app/ratelimit.py): operation class -> (per platform credential,
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
WEBHOOK_RATE_LIMITED_PATHS: tuple[str, ...] = ("/payments/pix/webhook", "/fiscal/webhooks/")
_all_limits = [*(text for pair in BCP_RATE_LIMITS.values() for text in pair), BCP_RATE_LIMIT_AUTH_FAILURES,
               WEBHOOK_RATE_LIMIT]
for _limit in (text for text in _all_limits if text):
    try:
        from limits import parse as _parse_limit

        _parse_limit(_limit)
    except ValueError as _exc:
        raise ConfigError(f"BCP_RATE_LIMIT_*/WEBHOOK_RATE_LIMIT: {_limit!r} is not a rate such as 60/minute") from _exc
# ASGI mounts are named by dotted path so the project package does not import the protocol app.
ASGI_MOUNTS: dict[str, str] = {
    "/bcp/mcp": "bcp_app.transports.mcp.asgi_app",
    "/bcp/a2a": "bcp_app.transports.a2a.asgi_app",
    "/.well-known/agent-card.json": "bcp_app.transports.a2a.asgi_app",
}
# Django paths that are APIs, not pages: served by a second Django handler without the storefront's static
# files, session, CSRF, auth and messages middleware (shop/asgi.py), which they never use.
ASGI_API_PREFIXES: tuple[str, ...] = ("/bcp/v1",)
ASGI_API_SKIPPED_MIDDLEWARE: frozenset[str] = frozenset({
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "axes.middleware.AxesMiddleware",  # no logins on the API
})

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
}

# Production logs are JSON, one object a line (python-json-logger); one line per request comes from
# shop/ops/access_log.py with request_id, platform, operation, status and duration_ms.
DJANGO_LOG_FORMAT = env_str("DJANGO_LOG_FORMAT", "plain" if DEBUG else "json")
if DJANGO_LOG_FORMAT not in {"plain", "json"}:
    raise ConfigError(f"DJANGO_LOG_FORMAT must be plain or json, not {DJANGO_LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": DJANGO_LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "INFO")},
    # uvicorn's own lines through the same handler (its access log is off: ours carries more).
    "loggers": {"uvicorn": {"handlers": ["console"], "level": "INFO", "propagate": False}},
}

# --- Error reporting ---------------------------------------------------------------------------------
# Sentry only when a DSN is configured; no personal data is sent.
SENTRY_DSN = env_str("SENTRY_DSN", "")
if SENTRY_DSN:
    import sentry_sdk

    sentry_sdk.init(
        dsn=SENTRY_DSN,
        environment=env_str("SENTRY_ENVIRONMENT", "production" if not DEBUG else "development"),
        release=env_str("SENTRY_RELEASE", "") or None,
        traces_sample_rate=env_int("SENTRY_TRACES_SAMPLE_PERCENT", 0, minimum=0) / 100,
        send_default_pii=False,
    )

os.makedirs(VAR_DIR, exist_ok=True)
