"""Shared fixtures. Tests run on real Postgres (see scripts/run_tests.py for the SQLite fallback)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings
from django.core.cache import caches

from shop.celery import app as celery_app


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if settings.USING_POSTGRES:
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (SQLite fallback run)")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _shop_signing_key() -> None:
    # The test runner turns DEBUG off, where a missing signing key is (rightly) a configuration error.
    # A fresh clone has none yet: create the development key once, as `make run` would.
    from bcp_app.keys import ensure_signing_key

    ensure_signing_key()


@pytest.fixture(autouse=True)
def _test_settings(settings: pytest.FixtureRequest) -> Iterator[None]:
    # Unit tests run Celery tasks in-process; e2e tests start a real worker and override this.
    # Celery caches its config when first read, so the app's own flag is set too, and reset after
    # every test: a real-worker test that turns it off can never leak that into the next test.
    settings.CELERY_TASK_ALWAYS_EAGER = True
    celery_app.conf.task_always_eager = True
    # Never the real CEP service: tests that need one start a fake on loopback (tests/shop/test_cep_lookup.py).
    settings.CEP_PROVIDER_URL = ""
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    yield
    celery_app.conf.task_always_eager = True


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    # Every cache the shop uses (rate-limit counters, cached profiles and catalog data) starts empty and is
    # emptied after the test: no test can see what an earlier one cached, whatever the order they run in.
    for cache in caches.all():
        cache.clear()
    yield
    for cache in caches.all():
        cache.clear()
