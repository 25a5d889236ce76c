"""Enqueueing a task by name inside a Celery worker process leaves its logging alone (kernel/tasks.py).

A worker imports every task at start and redirects sys.stdout/sys.stderr to Celery's LoggingProxy. The first
`enqueue_on_commit` of a worker process used to import the task modules again, which runs Celery's Django fixup,
whose `django.setup()` re-applied LOGGING with the proxy as the console stream: every later log line (task
results, the console mailer's e-mails) of that process went nowhere. Here a real interpreter plays the worker
process (Django set up, tasks imported, standard streams redirected as Celery's worker does) and must still log.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

WORKER_PROCESS = """
import logging, sys
import django
django.setup()
from celery import current_app
from celery.utils.log import LoggingProxy
import config.celery  # noqa: F401  (the app, as `celery -A config` loads it)
current_app.loader.import_default_modules()  # what the worker does at start, before its pool runs tasks
proxy = LoggingProxy(logging.getLogger("celery.redirected"), logging.WARNING)
sys.stdout = sys.stderr = proxy  # worker_redirect_stdouts
from kernel.tasks import task_named
task_named("fiscal.tasks.run_fiscal_job")  # the first enqueue in this process
logging.getLogger("shop").warning("still logging after the enqueue")
print("a console e-mail after the enqueue")
"""


def test_the_first_enqueue_in_a_worker_process_keeps_its_log_lines() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_LOG_FORMAT": "plain"}
    done = subprocess.run(
        [sys.executable, "-c", WORKER_PROCESS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "still logging after the enqueue" in done.stderr
    assert "a console e-mail after the enqueue" in done.stderr  # stdout → LoggingProxy → the root's console
