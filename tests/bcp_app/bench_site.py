"""Settings for the REST benchmark's server process: the shop plus bare baseline views.

Used as `DJANGO_SETTINGS_MODULE=tests.bcp_app.bench_site` by tests/bench/test_rest_flow.py only.
"""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "tests.bcp_app.bench_urls"
BASELINE_TABLE = "bench_rest_baseline"
BARE_CHECKOUT = "bench_bare_checkout"
BARE_LINE = "bench_bare_line"
BARE_ORDER = "bench_bare_order"
BARE_TABLES_SQL = (
    f"CREATE TABLE IF NOT EXISTS {BASELINE_TABLE} (id bigserial primary key, payload jsonb)",
    f"CREATE TABLE IF NOT EXISTS {BARE_CHECKOUT} (id bigserial primary key, status text, total bigint, payload jsonb)",
    f"CREATE TABLE IF NOT EXISTS {BARE_LINE} (id bigserial primary key, checkout_id bigint, variant_id bigint,"
    " quantity int, price bigint)",
    f"CREATE INDEX IF NOT EXISTS {BARE_LINE}_checkout ON {BARE_LINE} (checkout_id)",
    f"CREATE TABLE IF NOT EXISTS {BARE_ORDER} (id bigserial primary key, checkout_id bigint unique, total bigint)",
)
BARE_TABLES = (BASELINE_TABLE, BARE_CHECKOUT, BARE_LINE, BARE_ORDER)
# The storefront bench renders pages: plain static URLs (no collectstatic manifest in a test run).
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
