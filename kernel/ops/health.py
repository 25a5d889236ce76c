"""`/healthz` (liveness) and `/readyz` (readiness) answered by the first middleware.

A small middleware rather than django-health-check: probes come from the container runtime or the
load balancer with `Host: 127.0.0.1` (or a pod IP) over plain http, which `ALLOWED_HOSTS` and
`SECURE_SSL_REDIRECT` rightly refuse for every other path; answering before them keeps those checks
strict. The three dependency checks (database, broker, cache) are a few lines each.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from kombu import Connection

LIVENESS_PATH = "/healthz"
READINESS_PATH = "/readyz"
# Each check must answer within this many seconds, so a probe never outlives its own timeout.
CHECK_TIMEOUT_SECONDS = 2


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def check_broker() -> None:
    broker_url = settings.CELERY_BROKER_URL
    if not broker_url:
        return  # no broker: tasks run eagerly in-process (development), nothing to reach

    with Connection(broker_url, connect_timeout=CHECK_TIMEOUT_SECONDS) as conn:
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=CHECK_TIMEOUT_SECONDS)


def check_cache() -> None:
    key = f"readyz:{uuid.uuid4().hex}"
    cache.set(key, "1", timeout=5)
    try:
        if cache.get(key) != "1":
            raise RuntimeError("the value written was not read back")
    finally:
        cache.delete(key)


CHECKS: dict[str, Callable[[], None]] = {
    "database": check_database,
    "broker": check_broker,
    "cache": check_cache,
}


def readiness() -> tuple[bool, dict[str, str]]:
    results: dict[str, str] = {}
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:  # any failure means "not ready"; the probe names it
            results[name] = f"down: {exc.__class__.__name__}"
        else:
            results[name] = "ok"
    return all(value == "ok" for value in results.values()), results


class HealthMiddleware:
    """Answers the two probe paths before host validation, HTTPS redirect, sessions and CSRF."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == LIVENESS_PATH:
            return JsonResponse({"status": "ok"}, headers={"Cache-Control": "no-store"})
        if request.path == READINESS_PATH:
            ready, checks = readiness()
            down = [name for name, value in checks.items() if value != "ok"]
            body: dict[str, object] = {"status": "ok" if ready else "unavailable", "checks": checks}
            if down:
                body["down"] = down
            return JsonResponse(body, status=200 if ready else 503, headers={"Cache-Control": "no-store"})
        return self.get_response(request)
