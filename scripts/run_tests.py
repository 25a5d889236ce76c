"""Run the test suite on PostgreSQL, or on SQLite with a loud banner when Postgres is unreachable.

Under CI=true the SQLite fallback is refused: CI must prove the Postgres-only behaviour
(row locks, conditional updates, full-text search).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
# Most of the suite's time is spent waiting (live servers starting, a Celery worker, a browser, an 8-s Pix):
# workers overlap those waits. Each worker has its own test database and Redis database (tests/parallel.py).
DEFAULT_WORKERS = "3"

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/postgres"
DEFAULT_BROKER_URL = "redis://127.0.0.1:6379/0"


def postgres_reachable(url: str) -> str | None:
    try:
        psycopg.connect(url.replace("postgres://", "postgresql://", 1), connect_timeout=3).close()
    except psycopg.Error as exc:
        return str(exc).strip() or exc.__class__.__name__
    return None


def main(argv: list[str]) -> int:
    env = os.environ
    env.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    env.setdefault("CELERY_BROKER_URL", DEFAULT_BROKER_URL)
    env.setdefault("DATABASE_POOL_MIN", "1")  # live servers and workers are many small processes
    in_ci = env.get("CI", "").lower() in {"1", "true", "yes"}
    pytest_args = list(argv)
    # The whole suite runs on workers; a few named test files run in this process (a worker's start, its own
    # test database migrated, costs more than they do), unless TEST_WORKERS says otherwise.
    names_tests = any(Path(arg.split("::")[0]).exists() for arg in argv if not arg.startswith("-"))
    workers = env.get("TEST_WORKERS", "1" if names_tests else DEFAULT_WORKERS)
    if workers not in {"", "0", "1"} and not any(arg.startswith(("-n", "--numprocesses")) for arg in argv):
        # loadfile: a module's tests stay on one worker, so a module-scoped live server starts once.
        pytest_args = ["-n", workers, "--dist", "loadfile", *pytest_args]
    # The workers import the plugin by name: from the project root, which they inherit with sys.path.
    sys.path.insert(0, str(ROOT))
    pytest_args = ["-p", "tests.parallel", *pytest_args]
    if env["DATABASE_URL"].startswith("postgres"):
        problem = postgres_reachable(env["DATABASE_URL"])
        if problem:
            if in_ci:
                print(f"\nERROR: CI=true and PostgreSQL is unreachable ({problem}).", file=sys.stderr)
                print("The SQLite fallback is refused in CI. Start Postgres or set DATABASE_URL.\n", file=sys.stderr)
                return 2
            bar = "!" * 78
            print(
                f"\n{bar}\n  PostgreSQL unreachable ({problem})\n  FALLING BACK TO SQLITE:"
                f" Postgres-only tests are SKIPPED. This is not a full run.\n{bar}\n",
                flush=True,
            )
            env["DATABASE_URL"] = "sqlite:///var/test.sqlite3"
            pytest_args = ["-m", "not postgres", *pytest_args]
            if "-n" in pytest_args:  # one SQLite file, one writer at a time: workers would only queue on it
                at = pytest_args.index("-n")
                pytest_args[at + 1] = "0"
    import pytest

    code = pytest.main(pytest_args)
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
