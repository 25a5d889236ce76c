"""The embedded SQLite store (`make run` without DATABASE_URL) under concurrent buyers.

SQLite cannot make a transaction that began by reading wait for another writer: its write answers
"database is locked" at once, which the shop served as a 500 (an agent trying `make run` with 8 parallel
checkouts got one on 6 requests of 16). The settings begin every transaction with the write lock (waiting up
to the timeout for it) and keep the file in WAL mode. CI refuses SQLite in its own process, so this test runs
the checkout engine on a SQLite file in a subprocess: 8 threads, each creating and updating checkouts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.conf import settings

THREADS, ROUNDS = 8, 5


def _hammer() -> dict[str, object]:
    """In the subprocess: migrate the SQLite file, then THREADS threads × ROUNDS checkouts created and updated."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from shop.checkout.services import checkout_create, checkout_update
    from shop.checkout.types import LineInput
    from shop.models import Checkout
    from tests.shop.checkout_factories import full_input, make_shipping, make_variant

    call_command("migrate", verbosity=0)
    for index in range(THREADS):
        make_variant(f"SKU-{index}", stock=1000)
    make_shipping()
    errors: list[str] = []

    def buyer(index: int) -> None:
        try:
            for _ in range(ROUNDS):
                created = checkout_create(data=full_input(LineInput(f"SKU-{index}", 1)))
                checkout_update(checkout_id=created.checkout.public_id, data=full_input(LineInput(f"SKU-{index}", 2)))
        except Exception as exc:  # what a request would have answered as a 500
            errors.append(f"{exc.__class__.__name__}: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=buyer, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        journal = cursor.fetchone()[0]
    return {"vendor": connection.vendor, "errors": errors, "checkouts": Checkout.objects.count(), "journal": journal}


@pytest.mark.postgres  # the driver: it needs no database of its own, but CI's process is on Postgres
def test_concurrent_buyers_on_the_embedded_sqlite_store_get_no_database_is_locked(tmp_path: Path) -> None:
    # given a SQLite file, as `make run` uses without DATABASE_URL
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "DATABASE_URL"}}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'shop.sqlite3'}",
        SHOP_VAR_DIR=str(tmp_path / "var"),
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    # when 8 buyers create and update checkouts at once
    result = subprocess.run(
        [sys.executable, "-m", "tests.shop.test_sqlite_concurrency"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    # then none of them is refused with "database is locked", and every checkout was written
    assert outcome == {"vendor": "sqlite", "errors": [], "checkouts": THREADS * ROUNDS, "journal": "wal"}


if __name__ == "__main__":
    print(json.dumps(_hammer()))
