"""The shop's LOGGING as a uvicorn worker applies it (Django's setup, after uvicorn configured its own loggers)."""

from __future__ import annotations

import logging
import logging.config
from collections.abc import Iterator

import pytest
from django.conf import settings

from config.celery import app as celery_app


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
