"""Settings for the benchmarks' server process: the shop plus bare baseline views and bare MCP/A2A servers.

Used as `DJANGO_SETTINGS_MODULE=tests.bcp_app.bench_site` by the benches' servers (tests/bench/live_proc.py).
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
# The Get Order bench's per-protocol floors (tests/bcp_app/bench_protocols.py), beside the shop's own transports.
ASGI_MOUNTS = {
    **ASGI_MOUNTS,  # noqa: F405
    "/_bench/mcp": "tests.bcp_app.bench_protocols.bare_mcp",
    "/_bench/a2a": "tests.bcp_app.bench_protocols.bare_a2a",
}
