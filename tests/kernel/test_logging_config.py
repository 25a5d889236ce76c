"""The shop's LOGGING as a uvicorn worker applies it (Django's setup, after uvicorn configured its own loggers)."""

from __future__ import annotations

import asyncio
import logging
import logging.config
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings

from config.celery import app as celery_app
from kernel.ops.access_log import AccessLog


@pytest.fixture
def restored_logging() -> Iterator[None]:
    names = ("uvicorn", "uvicorn.access", "uvicorn.error")
    kept = {
        name: (logger.handlers[:], logger.propagate, logger.level)
        for name in names
        if (logger := logging.getLogger(name))
    }
    yield
    for name, (handlers, propagate, level) in kept.items():
        logger = logging.getLogger(name)
        logger.handlers, logger.propagate = handlers, propagate
        logger.setLevel(level)


@pytest.mark.usefixtures("restored_logging")
def test_uvicorns_access_log_stays_off_after_djangos_logging_setup() -> None:
    """The shop's access log line (kernel.ops.access_log) carries more than uvicorn's; the image runs uvicorn with
    `--no-access-log`. uvicorn turns its access logger off before the app loads; Django's setup then applied
    LOGGING, which reset that logger (a child of the configured "uvicorn") to propagate to "uvicorn"'s console
    handler, and uvicorn wrote its own line for every request anyway (issue 34: formatting it was about 4 % of
    the web process's CPU per purchase)."""
    access = logging.getLogger("uvicorn.access")
    access.handlers, access.propagate = [], False  # what uvicorn's Config.configure_logging does for --no-access-log
    logging.config.dictConfig(settings.LOGGING)  # what django.setup() does next, in the worker
    assert not access.hasHandlers()
    assert logging.getLogger("uvicorn.error").hasHandlers()  # uvicorn's other lines still go to the console


def test_what_a_task_prints_is_logged_as_info_not_as_a_warning() -> None:
    """Celery logs a task's stdout at WARNING by default: under `make worker` every development e-mail (the console
    backend prints it) became a warning line, burying the real ones."""
    assert celery_app.conf.worker_redirect_stdouts_level == "INFO"


def _logged_lines(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(f"{record.getMessage()} {vars(record)}" for record in caplog.records)


@pytest.mark.parametrize(
    "path",
    [
        "/orders/Zk3vQm9XyT2pLr8sWn4uAa1bCc5dEe6f",
        "/orders/Zk3vQm9XyT2pLr8sWn4uAa1bCc5dEe6f/devolver",
        "/conta/entrar/Zk3vQm9XyT2pLr8sWn4uAa1bCc5dEe6f",
        "/fiscal/d/Zk3vQm9XyT2pLr8sWn4uAa1bCc5dEe6f/danfe",
    ],
)
def test_the_access_log_never_writes_a_bearer_link_whole_bcp_sec_04(
    path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An order permalink, a sign-in link or a DANFE link opens the buyer's data to whoever has it: a log reader
    must not (BCP-SEC-04, LGPD). The line keeps four characters, enough to tell two requests apart."""

    async def page(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        return None

    caplog.set_level(logging.INFO, logger="shop.access")
    scope = {"type": "http", "method": "GET", "path": path, "headers": [], "client": ("203.0.113.9", 1)}
    asyncio.run(AccessLog(page)(scope, receive, send))

    (record,) = [r for r in caplog.records if r.name == "shop.access"]
    assert "Zk3vQm9XyT2pLr8sWn4uAa1bCc5dEe6f" not in _logged_lines(caplog)
    assert record.path == path.replace("Zk3vQm9XyT2pLr8sWn4uAa1bCc5dEe6f", "Zk3v…")  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_djangos_not_found_line_cuts_the_permalink_too_bcp_sec_04(
    client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Django logs every 4xx with its path and attaches the request (the JSON formatter writes its repr)."""
    caplog.set_level(logging.WARNING, logger="django.request")
    token = "Zk3vQm9XyT2pLr8sWn4uAa1bCc5dEe6f"

    assert client.get(f"/orders/{token}").status_code == 404
    assert client.get(f"/bcp/v1/orders/ord_{token}").status_code in (400, 401, 404)

    lines = _logged_lines(caplog)
    assert "Not Found: /orders/Zk3v…" in lines
    assert f"/orders/{token}" not in lines and f"'/orders/{token}'" not in lines
