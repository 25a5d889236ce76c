"""`/healthz` and `/readyz`: answered before host and HTTPS checks; readiness names what is down."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from django.test import Client


@pytest.fixture
def dead_port() -> Iterator[int]:
    # A bound socket that never listens: connecting to it is refused at once, and no one else gets the port.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


@pytest.fixture
def production_client(settings: pytest.FixtureRequest) -> Client:
    settings.ALLOWED_HOSTS = ["loja.example.com.br"]
    settings.SECURE_SSL_REDIRECT = True
    return Client()


def test_healthz_answers_a_probe_on_a_host_and_scheme_the_shop_refuses_elsewhere(production_client: Client) -> None:
    response = production_client.get("/healthz", HTTP_HOST="10.0.0.7:8000")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"
    # The same host on any other path is still refused: the probe path is the only exemption.
    assert production_client.get("/", HTTP_HOST="10.0.0.7:8000").status_code == 400


@pytest.mark.django_db
def test_readyz_is_ok_when_database_broker_and_cache_answer(production_client: Client, settings) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/15"

    response = production_client.get("/readyz", HTTP_HOST="127.0.0.1:8000")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok", "cache": "ok"}}


@pytest.mark.django_db
def test_readyz_answers_503_naming_a_dead_broker(production_client: Client, settings, dead_port: int) -> None:
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{dead_port}/0"

    response = production_client.get("/readyz", HTTP_HOST="127.0.0.1:8000")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["down"] == ["broker"]
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["cache"] == "ok"
    assert body["checks"]["broker"].startswith("down: ")


@pytest.mark.django_db
def test_readyz_names_a_dead_cache(production_client: Client, settings, dead_port: int) -> None:
    settings.CELERY_BROKER_URL = ""
    settings.CACHES = {
        "default": {
            "BACKEND": "kernel.ops.redis_cache.KeptClientRedisCache",
            "LOCATION": f"redis://127.0.0.1:{dead_port}/0",
        }
    }

    response = production_client.get("/readyz", HTTP_HOST="127.0.0.1:8000")

    assert response.status_code == 503
    assert response.json()["down"] == ["cache"]


def test_no_probe_or_webhook_path_lies_under_an_api_prefix() -> None:
    """The API handler (config/asgi.py) skips the health and webhook-limit middleware: safe only while none of
    their paths is served by it."""
    from django.conf import settings

    from kernel.ops.health import LIVENESS_PATH, READINESS_PATH

    assert "kernel.ops.health.HealthMiddleware" in settings.ASGI_API_SKIPPED_MIDDLEWARE
    for path in (LIVENESS_PATH, READINESS_PATH, *settings.WEBHOOK_RATE_LIMITED_PATHS):
        assert not path.startswith(tuple(settings.ASGI_API_PREFIXES)), path
