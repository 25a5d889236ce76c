"""Logs (JSON in production) and opt-in error reporting."""

from __future__ import annotations

from config.settings.base import DEBUG
from kernel.env import ConfigError, env_int, env_str

# Production logs are JSON, one object a line (python-json-logger); one line per request comes from
# kernel/ops/access_log.py with request_id, platform, operation, status and duration_ms.
DJANGO_LOG_FORMAT = env_str("DJANGO_LOG_FORMAT", "plain" if DEBUG else "json")
if DJANGO_LOG_FORMAT not in {"plain", "json"}:
    raise ConfigError(f"DJANGO_LOG_FORMAT must be plain or json, not {DJANGO_LOG_FORMAT!r}")
# Paths whose next segment is a bearer secret (order permalink, sign-in link, reminder opt-out, subscription page,
# DANFE/XML link): logged cut to four characters (kernel/ops/access_log.py, BCP-SEC-04).
LOG_SECRET_PATH_PREFIXES = ("/orders/", "/conta/entrar/", "/lembretes/sair/", "/assinaturas/", "/fiscal/d/")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"secret_paths": {"()": "kernel.ops.access_log.RedactSecretPaths"}},
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
    "loggers": {
        "uvicorn": {"handlers": ["console"], "level": "INFO", "propagate": False},
        # Named, so that this configuration leaves it as `--no-access-log` set it: applied after uvicorn's own
        # logging setup, dictConfig reset an unnamed child of "uvicorn" to propagate, and uvicorn (which asks
        # `hasHandlers()` per connection) formatted and wrote its access line for every request beside ours
        # (issue 34: about 4 % of the web process's CPU on the REST flow, measured with py-spy under `make bench`).
        "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        # The stateless MCP transport's only INFO line is "Terminating session: None", once per request:
        # noise next to the access log, and formatting it cost every MCP call (issue 11).
        "mcp.server.streamable_http": {"level": "WARNING"},
        # "Not Found: /orders/<token>" and the request it carries (redacted, see LOG_SECRET_PATH_PREFIXES).
        "django.request": {"filters": ["secret_paths"]},
        "django.server": {"filters": ["secret_paths"]},
    },
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
