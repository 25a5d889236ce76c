"""Django core settings: apps, middleware, database, caches, auth, i18n, static and media, e-mail, security."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _

from kernel.env import ConfigError, env_bool, env_int, env_list, env_str, parse_database_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent
# Templates, static sources and locale: top-level folders of the source tree; a non-editable install
# (`pip install .`, the image) carries them as package data under config/_site (setup.py).
_INSTALLED_SITE_DIR = Path(__file__).resolve().parent.parent / "_site"
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
    "django.contrib.sitemaps",  # the sitemap.xml templates (shop/storefront/discovery.py)
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
    "kernel.ops.query_limits.QueryFieldLimitMiddleware",  # before anything reads request.GET (DEBUG's error page)
    "kernel.ops.health.HealthMiddleware",
    "kernel.ops.request_cache.RequestCacheMiddleware",  # read-mostly cache entries once per request
    "django.middleware.security.SecurityMiddleware",
    "kernel.ops.webhook_limits.WebhookRateLimitMiddleware",
    "kernel.ops.csp.ContentSecurityPolicyMiddleware",  # the policy without a nonce built once
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "kernel.ops.locale.LocaleMiddleware",  # Django's, without the URL-prefix work (no i18n_patterns)
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.error_pages.MethodNotAllowedPage",
    "config.error_pages.NotFoundPage",  # DEBUG (`make run`): the shop's 404, not Django's technical page
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out login into the lockout page
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

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
                "shop.storefront.context_processors.shop",
                "shop.storefront.context_processors.store",
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
    from config.db_pool import check_connection

    # Server-side prepared statements: a statement run twice on a connection is planned once for it (the pool
    # keeps connections, so every hot statement is prepared after the first requests). Postgres' CPU per
    # purchase fell by about 40 % (issue 11). Off for a pooler in transaction mode (PgBouncer), which cannot
    # keep a connection's prepared statements.
    if env_bool("DATABASE_PREPARED_STATEMENTS", default=True):
        DATABASES["default"]["OPTIONS"].update({"server_side_binding": True, "prepare_threshold": 2})
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "check": check_connection,
        "min_size": env_int("DATABASE_POOL_MIN", 4, minimum=0),
        "max_size": env_int("DATABASE_POOL_MAX", 10, minimum=1),
        "timeout": env_int("DATABASE_POOL_TIMEOUT", 10, minimum=1),
    }
else:
    # The embedded store (`make run` without DATABASE_URL) serves several requests at once too. A transaction
    # that reads, then writes, cannot wait for another writer in SQLite (SQLITE_BUSY at once: "database is
    # locked", a 500), so each one takes the write lock when it begins and waits up to `timeout` seconds for
    # it; WAL lets readers go on beside the writer (tests/shop/test_sqlite_concurrency.py).
    DATABASES["default"]["OPTIONS"].setdefault("timeout", 20)
    DATABASES["default"]["OPTIONS"].setdefault("transaction_mode", "IMMEDIATE")
    DATABASES["default"]["OPTIONS"].setdefault("init_command", "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
USING_POSTGRES = _db.engine.endswith("postgresql")
# Threads of a web process's event-loop executor: every request (site, API, MCP, A2A) runs its sync work on
# one. A thread waiting on the network (PSP, card gateway, a platform's profile, CEP) has handed its database
# connection back to the pool first, so the threads outnumber the connections: with only as many threads as
# connections, that many Pix completes hanging at a PSP stalled every page of the process until the PSP
# client gave up (tests/bcp_app/test_hanging_psp.py). Calls beyond the pool wait for a connection instead.
WEB_THREADS = env_int(
    "WEB_THREADS", 4 * DATABASES["default"]["OPTIONS"]["pool"]["max_size"] if USING_POSTGRES else 32, minimum=1
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "")
CACHES = {
    "default": (
        # Django's Redis backend, its client kept between operations and an unreachable Redis a miss
        # (kernel/ops/redis_cache.py says why); a Redis that answers nothing costs a request at most a second.
        {
            "BACKEND": "kernel.ops.redis_cache.KeptClientRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# --- Auth, i18n, static -----------------------------------------------------------------------------
# Admin login lockout (django-axes): after SHOP_ADMIN_LOGIN_FAILURE_LIMIT failed logins from one client IP,
# or for one username from any number of IPs (a botnet, forged X-Forwarded-For), the login answers 429 with
# a Portuguese page for SHOP_ADMIN_LOGIN_COOLOFF_MINUTES; a correct login after that resets the count.
# Attempts are rows in the database (AxesDatabaseHandler), so every web process sees them. The IP is
# REMOTE_ADDR, which uvicorn sets from X-Forwarded-For only for the proxies in FORWARDED_ALLOW_IPS.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_FAILURE_LIMIT = env_int("SHOP_ADMIN_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("SHOP_ADMIN_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"]  # each one on its own, not the pair
AXES_CLIENT_IP_CALLABLE = "shop.admin.lockout.client_ip"  # REMOTE_ADDR, whatever django-ipware may be installed
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
# Pillow only: easy-thumbnails' SVG reader needs reportlab and svglib, which the shop does not install; without
# them it warned on every SVG (the demo's hero), which is shown as uploaded anyway (shop.catalog.images).
THUMBNAIL_SOURCE_GENERATORS = ("easy_thumbnails.source_generators.pil_image",)
SHOP_THUMBNAIL_OPTIONS = {"size": (480, 480), "crop": "smart", "quality": 85}  # the admin's thumbnail
# What the storefront shows (product cards, the product gallery, cart lines), each at 1× and 2× for srcset.
# Made once when a photo is saved (shop.catalog.images); pages read the stored names, never render one.
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
# The proxies whose X-Forwarded-For/-Proto uvicorn (`--proxy-headers`) believes; it reads the variable itself,
# the settings only to check it (shop/checks.py: "*" lets any client pick the IP the limits count).
FORWARDED_ALLOW_IPS = env_list("FORWARDED_ALLOW_IPS", ["127.0.0.1", "::1"])
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
# Database sessions (a cart survives a Redis flush), read with one hand-written statement (shop/storefront/sessions.py).
SESSION_ENGINE = "shop.storefront.sessions"
SECURE_REFERRER_POLICY = "same-origin"
# Content Security Policy (Django's built-in CSP) for the storefront, buyer pages and admin: scripts and
# styles come from our static files; the few inline <style>/<script> blocks carry `nonce="{{ csp_nonce }}"`;
# no page uses style="…" attributes (classes instead), so none are allowed.
# Images may be https (product photos on a CDN) or data: (Pix QR codes). The protocol mounts get the
# SecurityMiddleware headers from the ASGI router (kernel/ops/asgi_guard.py).
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


REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
}
