"""Shared fixtures. Tests run on real Postgres (see scripts/run_tests.py for the SQLite fallback)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator

import pytest
from celery._state import _set_task_join_will_block
from django.conf import settings
from django.core.cache import caches

from config.celery import app as celery_app
from tests.payments.fake_bacen import bacen  # noqa: F401 (the fake Pix PSP fixture, for every package)
from tests.payments.fake_pagarme import pagarme  # noqa: F401 (the fake card gateway fixture, for every package)


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
    from bcp_app.protocol.keys import ensure_signing_key

    ensure_signing_key()


@pytest.fixture(scope="session", autouse=True)
def _fast_flush() -> Iterator[None]:
    """Empty the tables after a transactional test with DELETE instead of Django's one TRUNCATE.

    TRUNCATE of the ~90 tables rewrites every table's files and waits for an exclusive lock on each: about
    0.5 s per transactional test, over a thousand times a run. The tables hold a few rows each, so DELETE
    with foreign-key triggers off for the flush's transaction (`SET LOCAL session_replication_role`, superuser
    only) empties them in milliseconds. Same tables, same end state; anything else (sequence resets, a
    non-superuser role) keeps Django's own statement.
    """
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush
    superuser: dict[str, bool] = {}

    def sql_flush(
        self: DatabaseOperations,
        style: object,
        tables: list[str],
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        alias = self.connection.alias
        if alias not in superuser:
            with self.connection.cursor() as cursor:
                cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
                row = cursor.fetchone()
            superuser[alias] = bool(row and row[0])
        if reset_sequences or not tables or not superuser[alias]:
            return truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        # execute_sql_flush runs these in one transaction: SET LOCAL ends with it, whatever happens.
        return ["SET LOCAL session_replication_role = replica;"] + [
            f"DELETE FROM {self.quote_name(table)};"  # noqa: S608 (Django's own table names, quoted)
            for table in tables
        ]

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]
    yield
    DatabaseOperations.sql_flush = truncate  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def _media_root() -> Iterator[str]:
    # Uploaded photos and demo photos go to a directory of this run, removed at its end.
    path = tempfile.mkdtemp(prefix="shop-media-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def _test_settings(settings: pytest.FixtureRequest, _media_root: str) -> Iterator[None]:
    # Unit tests run Celery tasks in-process; e2e tests start a real worker and override this.
    # Celery caches its config when first read, so the app's own flag is set too, and reset after
    # every test: a real-worker test that turns it off can never leak that into the next test.
    settings.CELERY_TASK_ALWAYS_EAGER = True
    celery_app.conf.task_always_eager = True
    _allow_eager_result_get()
    settings.MEDIA_ROOT = _media_root
    # PBKDF2's 1.2 M iterations cost ~0.4 s per staff user a test creates; what is tested is who may log in.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Never the real CEP service: tests that need one start a fake on loopback (tests/shop/test_cep_lookup.py).
    settings.CEP_PROVIDER_URL = ""
    # Every BCP body the shop builds is checked against its output model (and MCP outputSchema) before it leaves.
    settings.BCP_CHECK_OUTPUT = True
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    # (the cached store settings row goes with every cache in _fresh_caches)
    yield
    celery_app.conf.task_always_eager = True
    _allow_eager_result_get()


def _allow_eager_result_get() -> None:
    # Celery marks "inside a task" in one process-global flag that every eager task sets and then restores.
    # Threads running eager tasks at once (concurrency tests, live servers) can restore it in the wrong order
    # and leave it set, after which any `.apply().get()` in a later test raises "Never call result.get()
    # within a task!" — found by running the suite in random order (issue 19).
    _set_task_join_will_block(False)


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    # Every cache the shop uses (rate-limit counters, cached profiles and catalog data) starts empty and is
    # emptied after the test: no test can see what an earlier one cached, whatever the order they run in.
    for cache in caches.all():
        cache.clear()
    yield
    for cache in caches.all():
        cache.clear()


@pytest.fixture(autouse=True)
def _default_language() -> Iterator[None]:
    # A request in English (LocaleMiddleware activates per request, per thread) must not leave later tests
    # reading English messages: every test starts and ends in the shop's default language.
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)
