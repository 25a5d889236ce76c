"""A small in-process scheduler for `make run` only: the periodic sweeps of beat, without a broker.

On a bare machine (`make run`: no broker, tasks eager) nothing runs Celery beat, so expired Pix
charges and abandoned checkouts would never be released. With `SHOP_INPROCESS_SCHEDULER=true` (the
Makefile's `run` sets it) one daemon thread of the web process runs the interval entries of
`CELERY_BEAT_SCHEDULE` in-process (`Task.apply`). Crontab entries (hourly reconciliations) are left
to a real beat. It refuses to start when a broker is configured: production runs beat.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from config.celery import app

logger = logging.getLogger(__name__)

TICK_SECONDS = 15


class InProcessScheduler:
    def __init__(self, schedule: Mapping[str, Mapping[str, Any]], started_at: datetime) -> None:
        self.entries = {
            name: (entry["task"], entry["schedule"])
            for name, entry in schedule.items()
            if isinstance(entry["schedule"], timedelta)
        }
        self.last_run = dict.fromkeys(self.entries, started_at)

    def tick(self, now: datetime) -> list[str]:
        """Run every entry whose interval has passed since its last run; returns their names."""
        app.loader.import_default_modules()  # the apps' tasks modules (autodiscovery is lazy)
        ran = []
        for name, (task_name, interval) in self.entries.items():
            if now - self.last_run[name] < interval:
                continue
            self.last_run[name] = now
            try:
                app.tasks[task_name].apply(throw=True)
            except Exception:  # one failing sweep must not stop the others, nor the thread
                logger.exception("in-process scheduler: %s failed", task_name)
            ran.append(name)
        return ran


class SchedulerThread(threading.Thread):
    def __init__(self, scheduler: InProcessScheduler) -> None:
        super().__init__(name="shop-inprocess-scheduler", daemon=True)
        self.scheduler = scheduler
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(TICK_SECONDS):
            try:
                self.scheduler.tick(timezone.now())
            finally:
                close_old_connections()  # this thread's own connection, between ticks

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=TICK_SECONDS * 4)


def start_if_enabled() -> SchedulerThread | None:
    if not getattr(settings, "SHOP_INPROCESS_SCHEDULER", False):
        return None
    if settings.CELERY_BROKER_URL:
        # QA walk: with a broker and no worker, a sandbox Pix waited forever on "Aguardando pagamento…"
        logger.warning(
            "SHOP_INPROCESS_SCHEDULER ignored: a broker is configured (CELERY_BROKER_URL). Start `make worker` and"
            " `make beat` beside this server, or payments, e-mails, NF-e and webhooks wait in the queue."
        )
        return None
    thread = SchedulerThread(InProcessScheduler(settings.CELERY_BEAT_SCHEDULE, timezone.now()))
    thread.start()
    logger.info("in-process scheduler started (%d periodic sweeps)", len(thread.scheduler.entries))
    return thread
