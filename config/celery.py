"""Celery application; configuration is read from Django settings (CELERY_* names)."""

import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("shop")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
def _request_cache_begin(task_id: str, **_: Any) -> None:
    from kernel.ops.request_cache import task_scope_begin  # noqa: PLC0415 (the Celery app loads before Django's settings; the cache is read when a task runs)

    task_scope_begin(task_id)  # read-mostly cache entries once per task, as per request


@task_postrun.connect
def _request_cache_end(task_id: str, **_: Any) -> None:
    from kernel.ops.request_cache import task_scope_end  # noqa: PLC0415 (the Celery app loads before Django's settings; the cache is read when a task runs)

    task_scope_end(task_id)
