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
            from shop.asgi import django_app

            app = django_app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, lifespan=lifespan, log_level="warning", access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
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


class CeleryWorker:
    """`celery -A shop worker` (solo pool) with the given environment; stopped by its own pid."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = {**os.environ, **env}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = ROOT / "var" / f"e2e-worker-{os.getpid()}.log"

    def start(self) -> CeleryWorker:
        celery = str(Path(sys.executable).parent / "celery")
        subprocess.run([celery, "-A", "shop", "purge", "-f"], env=self.env, cwd=ROOT, check=False,
                       capture_output=True, timeout=60)
        self.log.parent.mkdir(exist_ok=True)
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [celery, "-A", "shop", "worker", "-P", "solo", "-c", "1", "--without-mingle", "--without-gossip",
                 "--without-heartbeat", "-n", f"bcp-e2e-{os.getpid()}@%h", "--loglevel=INFO"],
                env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while b"ready." not in self.log.read_bytes():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("celery worker did not start:\n" + self.log.read_text()[-3000:])
            time.sleep(0.2)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def wait_for(predicate: Callable[[], Any], *, timeout: float = 60, interval: float = 0.3) -> Any:
    """Poll until `predicate()` is truthy (an eventually-consistent outcome, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(interval)


@contextmanager
def pix_settlement_stack(settings: Any, *, secret: str, extra_env: dict[str, str] | None = None,
                         server: LiveServer | None = None, webhook_path: str = ""
                         ) -> Iterator[tuple[LiveServer, CeleryWorker]]:
    """A live uvicorn plus a real Celery worker, with the sandbox PSP delivering webhooks over HTTP.

    Nothing runs eagerly: the live server's threads enqueue to the broker and the worker settles.
    `server`: an already started server to use (the caller stops it); otherwise one is started here.
    `webhook_path`: deliver webhooks to `<server><webhook_path>` (PIX_SANDBOX_WEBHOOK_URL) instead of the default.
    """
    from django.conf import settings as django_settings

    from shop.celery import app

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
    worker = CeleryWorker({
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": str(app.conf.broker_url),
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "DJANGO_DEBUG": "true",
        "BCP_PUBLIC_URL": server.url,
        "BCP_SIGNING_KEY_FILE": str(django_settings.BCP_SIGNING_KEY_FILE),
        "BCP_PIX_SANDBOX": "true",
        "PIX_SANDBOX_WEBHOOK_SECRET": secret,
        "PIX_SANDBOX_WEBHOOK_URL": webhook_url,
        **(extra_env or {}),
    })
    try:
        worker.start()
        yield server, worker
    finally:
        app.conf.task_always_eager = True
        worker.stop()
        app.control.purge()  # nothing this test enqueued is left for the next worker
        if owned:
            server.stop()
