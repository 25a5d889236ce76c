"""Live servers for BCP end-to-end tests: uvicorn in a thread (sees the test database) and a real Celery
worker subprocess on the same broker and test database. Ports are chosen at runtime."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


class LiveServer:
    """uvicorn in a thread of the test process on a free 127.0.0.1 port; Django alone unless `app` is given.

    `lifespan="on"` is for apps whose lifespan starts something (the MCP session manager, A2A).
    """

    def __init__(self, app: Any = None, *, lifespan: str = "off") -> None:
        import uvicorn

        if app is None:
            from config.asgi import django_app

            app = django_app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        # A client's open MCP stream would hold a graceful shutdown until the join below gives up (10 s).
        config = uvicorn.Config(
            app, lifespan=lifespan, log_level="warning", access_log=False, timeout_graceful_shutdown=1
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url

    def start(self) -> LiveServer:
        require_committed_data("a live server")
        self.thread.start()
        # Generous: on a loaded 2-core machine the lifespan (MCP session manager, executor) has taken over 20 s.
        deadline = time.monotonic() + 90
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


def database_url() -> str:
    from django.db import connection

    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def require_committed_data(what: str) -> None:
    """Refuse to start `what` inside a test transaction.

    A server thread or subprocess uses its own connection: inside a test transaction it cannot see the
    test's rows, and what it writes is committed behind the rollback and leaks into later tests. With
    `transactional_db` both sides see the same committed data and Django flushes it after the test.
    """
    from django.db import connection

    if connection.in_atomic_block:
        raise RuntimeError(f"{what} needs the `transactional_db` fixture (or django_db(transaction=True))")


def subprocess_env(**overrides: str) -> dict[str, str]:
    """The environment of a subprocess that must behave as this test process is configured right now.

    Built from the live Django settings (which fixtures such as `bcp_settings` change), not from
    `os.environ`: a subprocess that allowed what the test process refused (or the other way round) would
    read the other's committed decisions, e.g. a profile-fetch failure cached with a backoff, and pass or
    fail with how fast it started.
    """
    from django.conf import settings

    from config.celery import app

    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": str(app.conf.broker_url),
        "BCP_OUTBOUND_ALLOWLIST": ",".join(settings.BCP_OUTBOUND_ALLOWLIST),
        "BCP_SIGNING_KEY_FILE": str(settings.BCP_SIGNING_KEY_FILE),
        "BCP_PUBLIC_URL": settings.BCP_PUBLIC_URL,
        "BCP_PIX_SANDBOX": "true" if settings.BCP_PIX_SANDBOX else "false",
        **overrides,
    }


class CeleryWorker:
    """`celery -A config worker` (solo pool) with the given environment; stopped by its own pid."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = subprocess_env(**env)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = ROOT / "var" / f"e2e-worker-{os.getpid()}.log"

    def start(self, *, purge: bool = True) -> CeleryWorker:
        """`purge=False` keeps what is queued (a worker restarted after a crash must find it)."""
        require_committed_data("a Celery worker")
        celery = str(Path(sys.executable).parent / "celery")
        if purge:
            subprocess.run(
                [celery, "-A", "config", "purge", "-f"],
                env=self.env,
                cwd=ROOT,
                check=False,
                capture_output=True,
                timeout=60,
            )
        self.log.parent.mkdir(exist_ok=True)
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    celery,
                    "-A",
                    "config",
                    "worker",
                    "-P",
                    "solo",
                    "-c",
                    "1",
                    "--without-mingle",
                    "--without-gossip",
                    "--without-heartbeat",
                    "-n",
                    f"bcp-e2e-{os.getpid()}@%h",
                    "--loglevel=INFO",
                ],
                env=self.env,
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while b"ready." not in self.log.read_bytes():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("celery worker did not start:\n" + self.log.read_text()[-3000:])
            time.sleep(0.2)
        return self

    def kill(self) -> None:
        """SIGKILL, as the OOM killer or a lost host would: no warm shutdown, nothing acknowledged."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def wait_for(
    predicate: Callable[[], Any], *, timeout: float = 60, interval: float = 0.3, log: Path | None = None
) -> Any:
    """Poll until `predicate()` is truthy (an eventually-consistent outcome, not a timing assertion).

    `log`: a worker's log file, whose tail is the failure message when the outcome never comes.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""
            raise AssertionError(f"condition not reached in time\n{tail}".rstrip())
        time.sleep(interval)


@contextmanager
def pix_settlement_stack(
    settings: Any,
    *,
    secret: str,
    extra_env: dict[str, str] | None = None,
    server: LiveServer | None = None,
    webhook_path: str = "",
) -> Iterator[tuple[LiveServer, CeleryWorker]]:
    """A live uvicorn plus a real Celery worker, with the sandbox PSP delivering webhooks over HTTP.

    Nothing runs eagerly: the live server's threads enqueue to the broker and the worker settles.
    `server`: an already started server to use (the caller stops it); otherwise one is started here.
    `webhook_path`: deliver webhooks to `<server><webhook_path>` (PIX_SANDBOX_WEBHOOK_URL) instead of the default.
    """
    from config.celery import app

    owned = server is None
    if server is None:
        server = LiveServer().start()
    webhook_url = f"{server.url}{webhook_path}" if webhook_path else ""
    settings.BCP_PUBLIC_URL = server.url
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_SECRET = secret
    settings.PIX_SANDBOX_WEBHOOK_URL = webhook_url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.task_always_eager = False
    worker = CeleryWorker(
        {
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "DJANGO_DEBUG": "true",
            "PIX_SANDBOX_WEBHOOK_SECRET": secret,
            "PIX_SANDBOX_WEBHOOK_URL": webhook_url,
            **(extra_env or {}),
        }
    )
    try:
        worker.start()
        yield server, worker
    finally:
        app.conf.task_always_eager = True
        worker.stop()
        app.control.purge()  # nothing this test enqueued is left for the next worker
        if owned:
            server.stop()
