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


WEB_PROCESS = """
import django
django.setup()
from django.core import checks
ran = []

@checks.register()
def counted(app_configs, **kwargs):
    ran.append(1)
    return []

from kernel.tasks import task_named
import config.celery  # noqa: F401
from celery import current_app
task_named("fiscal.tasks.run_fiscal_job")  # the first enqueue of a web process
task_named("bcp_app.tasks.deliver_order_webhook")
print("checks", len(ran), "tasks", sum(1 for name in current_app.tasks if not name.startswith("celery.")))
"""


def test_the_first_enqueue_in_a_web_process_loads_the_tasks_without_running_the_system_checks() -> None:
    """Issue 34: the first enqueue of each web process ran every Django system check again (Celery's Django fixup,
    through `import_default_modules`): about a second of CPU for the first buyer after a deploy."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_LOG_FORMAT": "plain"}
    done = subprocess.run(
        [sys.executable, "-c", WEB_PROCESS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    checks, tasks = done.stdout.split()[1], int(done.stdout.split()[3])
    assert checks == "0"
    assert tasks > 20  # every app's tasks module was loaded, not only the two named


PUBLISH_SETTINGS = """
import sys
import django
django.setup()
import config.celery  # noqa: F401
from celery import current_app
from kernel.tasks import task_named
task_named("fiscal.tasks.run_fiscal_job")  # the first enqueue of a process
misses = []
monitoring = sys.monitoring
monitoring.use_tool_id(3, "misses")
monitoring.register_callback(3, monitoring.events.RAISE, lambda code, offset, exc: misses.append(type(exc).__name__))
monitoring.set_events(3, monitoring.events.RAISE)
names = ("task_default_queue", "task_send_sent_event", "task_repr_maxlevels", "broker_pool_acquire_timeout")
values = [getattr(current_app.conf, name) for name in names]
monitoring.set_events(3, 0)
print(repr(values), sorted(set(misses)))
"""


def test_the_settings_read_by_every_publish_are_resolved_once() -> None:
    """Issue 34: Celery read each of these on every publish through Django's settings, where none is set: every
    read raised and caught an AttributeError there before reaching Celery's defaults. Same values, no such miss."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_LOG_FORMAT": "plain"}
    done = subprocess.run(
        [sys.executable, "-c", PUBLISH_SETTINGS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['celery', False, 3, None] ['KeyError']"
