"""Per-worker resources when the suite runs on several pytest-xdist workers (`make test`, scripts/run_tests.py).

Loaded with `-p tests.parallel`, so it is imported while pytest parses its arguments: before pytest-django reads the
settings. The test database is already per worker (pytest-django suffixes it with the worker id); the Redis database
is not, and it carries the Celery broker a test's real worker consumes from and the keys the production smoke test
counts, so each xdist worker takes the broker's database number plus its index (gw0 keeps it).
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

REDIS_DATABASES = 16  # Redis' default `databases`


def worker_broker_url(base: str, worker: str) -> str:
    index = int(worker.removeprefix("gw"))
    parts = urlsplit(base)
    number = int(parts.path.lstrip("/") or 0) + index
    if number >= REDIS_DATABASES:
        raise RuntimeError(f"xdist worker {worker} needs Redis database {number}: fewer workers or a lower base")
    return urlunsplit(parts._replace(path=f"/{number}"))


_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
_broker = os.environ.get("CELERY_BROKER_URL", "")
if _worker.startswith("gw") and _broker.startswith("redis://"):
    os.environ["CELERY_BROKER_URL"] = worker_broker_url(_broker, _worker)
