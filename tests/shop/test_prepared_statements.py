"""Server-side prepared statements on Postgres (`DATABASE_PREPARED_STATEMENTS`, issue 11): a statement run
twice on a connection is planned once for it; a pooler in transaction mode turns them off."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.db import connection

from shop.models import Variant
from tests.bcp_app.live import ROOT, subprocess_env
from tests.shop.checkout_factories import make_variant

pytestmark = pytest.mark.postgres

OPTIONS = (
    "import django, json; django.setup(); from django.conf import settings; "
    "options = settings.DATABASES['default']['OPTIONS']; "
    "print(json.dumps({k: options.get(k) for k in ('server_side_binding', 'prepare_threshold')}))"
)


def _options(**env: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", OPTIONS],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        env=subprocess_env(DJANGO_SETTINGS_MODULE="config.settings", **env),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_postgres_prepares_statements_unless_told_not_to() -> None:
    assert _options() == {"server_side_binding": True, "prepare_threshold": 2}
    assert _options(DATABASE_PREPARED_STATEMENTS="false") == {"server_side_binding": None, "prepare_threshold": None}


@pytest.mark.django_db
def test_a_statement_run_twice_is_prepared_on_its_connection() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are Postgres'")
    make_variant("SKU-PREP", price=1990, stock=3)

    def prepared() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
                ['%FROM "shop_variant" WHERE "shop_variant"."sku" = $1%'],
            )
            return cursor.fetchone()[0]

    before = prepared()
    for _ in range(3):
        assert Variant.objects.get(sku="SKU-PREP").stock == 3  # the same statement, a parameter bound server-side
    assert prepared() == before + 1
