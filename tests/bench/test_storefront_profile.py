"""Where the web process's CPU goes on the storefront pages (issue 34), printed by `make bench`: cProfile over
RENDERS views of each of the home, product, cart and checkout pages (the pages of test_storefront_pages.py, on its
1,000-product catalog) through Django's test client in this process, in steady state (caches warm). Run with
`REDIS_URL` set to see the shared cache's cost as production pays it.

Printed, never asserted: per page, the CPU per view and the share of a few landmarks (template rendering, SQL,
context processors, session, CSRF, messages, money formatting, photo URLs, cache) in the inclusive time, then the
top functions by own time and our own functions by inclusive time.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import time
from pathlib import Path
from typing import Any

import pytest
from django.template.base import Template
from django.test import Client
from django.test.utils import _TestState

from tests.bcp_app.bcp_fixtures import bcp_settings  # noqa: F401
from tests.bench.test_storefront_pages import bench_pages

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

OURS = r"/wt-[^/]+/(shop|orders|kernel|config|templates)/"
RENDERS = 200
# (label, substring of the file, function) whose inclusive time is printed as a share of the whole
LANDMARKS = (
    ("view (inclusive)", "/django/core/handlers/base.py", "_get_response"),
    ("template render", "django/template/base.py", "_render"),
    ("  {% cache %} fragment", "django/templatetags/cache.py", "render"),
    ("context processors", "django/template/context.py", "bind_template"),
    ("SQL execute (CursorWrapper)", "django/db/backends/utils.py", "_execute"),
    ("SQL compile", "django/db/models/sql/compiler.py", "as_sql"),
    ("model init", "django/db/models/base.py", "__init__"),
    ("session load", "django/contrib/sessions/backends/base.py", "_get_session"),
    ("session save (middleware)", "django/contrib/sessions/middleware.py", "process_response"),
    ("CSRF token", "django/middleware/csrf.py", "get_token"),
    ("messages", "django/contrib/messages/storage/base.py", "__iter__"),
    ("money (format_brl)", "kernel/money.py", "format_brl"),
    ("photo URLs (alias_url)", "shop/models/catalog.py", "alias_url"),
    ("cache get", "django/core/cache/backends", "get"),
    ("gettext", "django/utils/translation/trans_real.py", "gettext"),
    ("reverse()", "django/urls/base.py", "reverse"),
)


def _report(title: str, profile: cProfile.Profile, calls: int) -> None:
    if folder := os.environ.get("BENCH_PROFILE_DIR"):  # for pstats / snakeviz: `BENCH_PROFILE_DIR=var/prof`
        Path(folder).mkdir(parents=True, exist_ok=True)
        profile.dump_stats(Path(folder) / f"storefront_{title.split(' ×')[0].replace(' ', '_')}.pstats")
    stats = pstats.Stats(profile)
    total = stats.total_tt  # type: ignore[attr-defined]
    print(f"\n{title}: {total / calls * 1000:.2f} ms of CPU per view under cProfile (inflated: read the shares)")
    for label, file_part, function in LANDMARKS:
        inclusive = sum(
            ct
            for (path, _, name), (_, _, _, ct, _) in stats.stats.items()  # type: ignore[attr-defined]
            if file_part in path and name == function
        )
        print(f"   {label:<30} {min(inclusive / total, 9.99):6.1%}")
    if os.environ.get("BENCH_PROFILE_VERBOSE"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(25)
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[-3000:])
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(OURS, 30)
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[-4000:])


@pytest.mark.timeout(900)
def test_storefront_pages_profile(
    bcp_settings: Any,  # noqa: F811
    thousand_products: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Django's test setup wraps every template render to record its context (a copy per template): production
    # renders without it, so the profile does too.
    monkeypatch.setattr(Template, "_render", _TestState.saved_data.template_render)

    pages = bench_pages()
    for name, (path, session) in pages.items():
        # a session's pages with the CSRF cookie their first answer set, as a browser (and the pages bench) sends
        client = Client(headers={"Cookie": session} if session else {})
        csrf = client.get(path).cookies.get("csrftoken")
        if session and csrf is not None:
            client = Client(headers={"Cookie": f"{session}; csrftoken={csrf.value}"})
        for _ in range(3):  # steady state: templates compiled, caches warm
            assert client.get(path).status_code == 200
        started = time.process_time()
        for _ in range(RENDERS):
            client.get(path)
        plain = (time.process_time() - started) / RENDERS * 1000
        profile = cProfile.Profile(time.process_time)
        profile.enable()
        for _ in range(RENDERS):
            client.get(path)
        profile.disable()
        _report(f"{name} × {RENDERS} ({plain:.2f} ms of CPU per view without the profiler)", profile, RENDERS)
