"""Settings for the REST benchmark's server process: the shop plus a bare one-insert JSON view.

Used as `DJANGO_SETTINGS_MODULE=tests.bcp_app.bench_site` by tests/bench/test_rest_flow.py only.
"""

from shop.settings import *  # noqa: F403

ROOT_URLCONF = "tests.bcp_app.bench_urls"
BASELINE_TABLE = "bench_rest_baseline"
