"""Run the test suite on PostgreSQL, or on SQLite with a loud banner when Postgres is unreachable.

Under CI=true the SQLite fallback is refused: CI must prove the Postgres-only behaviour
(row locks, conditional updates, full-text search).
"""

from __future__ import annotations

import os
import sys

import psycopg

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
    import pytest

    code = pytest.main(pytest_args)
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
