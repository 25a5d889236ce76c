"""scripts/run_tests.py: Postgres unreachable → loud SQLite fallback skipping Postgres-only tests; refused under CI.

Each case runs the real script in a subprocess against a tiny generated test file, so it stays fast.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from django.conf import settings

PROBE = """
import pytest
from django.conf import settings


def test_probe_runs_on_sqlite():
    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"


@pytest.mark.postgres
def test_probe_needs_postgres():
    raise AssertionError("a Postgres-only test ran on the SQLite fallback")
"""


def _unused_port() -> int:
    # Bind then close: nothing listens there afterwards, so connecting is refused at once.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(tmp_path: Path, *, ci: bool) -> subprocess.CompletedProcess[str]:
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "DATABASE_URL"}}
    env["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:{_unused_port()}/unreachable"
    env["SHOP_VAR_DIR"] = str(tmp_path / "var")
    if ci:
        env["CI"] = "true"
    base = Path(settings.BASE_DIR)
    args = [str(probe), "-q", "-p", "no:cacheprovider", "--rootdir", str(base), "-c", str(base / "pyproject.toml")]
    return subprocess.run(
        [sys.executable, str(base / "scripts" / "run_tests.py"), *args],
        cwd=base,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_unreachable_postgres_outside_ci_falls_back_to_sqlite_with_banner(tmp_path: Path) -> None:
    # given Postgres unreachable and CI unset; when the test runner starts
    result = _run(tmp_path, ci=False)
    # then it prints the banner, runs on SQLite and deselects the Postgres-only test
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FALLING BACK TO SQLITE" in result.stdout
    assert "Postgres-only tests are SKIPPED" in result.stdout
    assert "1 passed, 1 deselected" in result.stdout


def test_unreachable_postgres_under_ci_is_refused(tmp_path: Path) -> None:
    # given CI=true; when Postgres is unreachable; then exit code 2 with the refusal message and no test run
    result = _run(tmp_path, ci=True)
    assert result.returncode == 2
    assert "CI=true and PostgreSQL is unreachable" in result.stderr
    assert "The SQLite fallback is refused in CI." in result.stderr
    assert "passed" not in result.stdout
