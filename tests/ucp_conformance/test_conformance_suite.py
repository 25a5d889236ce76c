"""The official UCP conformance suite (vendored unmodified, tests/ucp_conformance/vendor) against the UCP face, run by
scripts/ucp_conformance.py on a live uvicorn over the test database with the flower_shop data loaded: every test in
baseline.json passed when it was written and must keep passing. The full per-file result is `make ucp-conformance`.

Two runs: the suite as it is, and the same files with a platform profile that names the capabilities the tests
use (complete-agent-profile.json): the suite's own profile names only `dev.ucp.shopping.order`, so by UCP
2026-01-11's intersection (overview.md "Intersection Algorithm") no checkout extension is active for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BASELINE: dict[str, dict[str, list[str]]] = json.loads((HERE / "baseline.json").read_text())

pytestmark = [pytest.mark.postgres, pytest.mark.e2e, pytest.mark.timeout(1200)]


def _database_url() -> str:
    s = connection.settings_dict
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgres://{s['USER']}{password}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def _run(tmp_path: Path, files: list[str], profile: str | None) -> dict[str, Any]:
    out = tmp_path / "results.json"
    command = [
        sys.executable,
        str(ROOT / "scripts" / "ucp_conformance.py"),
        "--skip-setup",
        "--json",
        str(out),
        "--only",
        *files,
    ]
    if profile:
        command += ["--agent-profile", str(HERE / profile)]
    env = {**os.environ, "DATABASE_URL": _database_url(), "CELERY_BROKER_URL": "", "CELERY_TASK_ALWAYS_EAGER": "true"}
    subprocess.run(command, cwd=ROOT, env=env, check=True, timeout=1100)
    return json.loads(out.read_text())["files"]


@pytest.mark.parametrize("mode", sorted(BASELINE))
def test_the_suites_passing_tests_keep_passing(mode: str, transactional_db: None, tmp_path: Path) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the live server reads the test database by URL: Postgres only")
    call_command("load_ucp_test_data")
    expected = BASELINE[mode]
    results = _run(tmp_path, sorted(expected), None if mode == "suite" else mode)
    for name, tests in expected.items():
        outcomes = results[name]["tests"]
        assert {t: outcomes.get(t) for t in tests} == dict.fromkeys(tests, "passed"), (name, outcomes)
