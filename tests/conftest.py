"""Shared fixtures. Tests run on real Postgres (see scripts/run_tests.py for the SQLite fallback)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if settings.USING_POSTGRES:
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (SQLite fallback run)")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _test_settings(settings: pytest.FixtureRequest) -> None:
    # Unit tests run Celery tasks in-process; e2e tests start a real worker and override this.
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture
def on_postgres() -> bool:
    return connection.vendor == "postgresql"
