"""Enqueue a Celery task by its registered name: services never import a `tasks` module.

Tasks import the services they run; a service that needs a task run after its transaction names it here, so
the dependency points one way (tasks → services) and no import circle hides behind a function-level import.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from functools import cache
from typing import Any

from celery import Task, current_app
from django.apps import apps as django_apps
from django.db import transaction

from kernel.task_publish import publish

logger = logging.getLogger(__name__)


_loading = threading.Lock()


@cache
def _import_tasks() -> None:
    # A web process imports no tasks module by itself: load them all (Celery's autodiscovery), once. Under a
    # lock: autodiscovery hands its pending packages to the first caller, so a second thread arriving while the
    # first still imports them would find nothing left to import and a registry without them (NotRegistered,
    # a 500 on the first concurrent completes of a fresh process; seen by `make bench`).
    with _loading:
        # Each installed app's `tasks` module, as Celery's autodiscovery finds them, but not through
        # `import_default_modules`: its import signal also runs the Django fixup's `validate_models`, every system
        # check again (~1 s of CPU, paid by the first buyer of each web process after a deploy; issue 34).
        loader = current_app.loader
        loader.autodiscover_tasks([app.name for app in django_apps.get_app_configs()])
        for module in loader.default_modules:
            loader.import_task_module(module)


# Read by Celery on every publish (routing, the task message, the producer pool) and set neither in the app's own
# changes nor in Django's settings: each read looked for CELERY_<NAME> and <name> in both before the defaults, each
# miss in Django's settings an AttributeError caught twice (about a quarter of a publish's CPU, one publish per
# purchase; issue 34). Nothing changes them while a process runs: resolved once into the app's own changes, where
# a read finds them at its second try. `task_always_eager` is left alone: it is set in Django's settings, found there
# at once, and tests switch it there.
PINNED_PUBLISH_SETTINGS = (
    "task_default_queue",
    "task_send_sent_event",
    "task_repr_maxlevels",
    "broker_pool_acquire_timeout",
)


@cache
def _pin_publish_settings() -> None:
    conf = current_app.conf
    conf.update({name: conf[name] for name in PINNED_PUBLISH_SETTINGS})


def task_named(name: str) -> Task:
    _pin_publish_settings()
    tasks = current_app.tasks
    if name not in tasks:
        # Only where the task is not registered yet (a web process): a worker imported every task at start, and
        # importing again there runs Celery's Django fixup, whose `django.setup()` re-applies LOGGING while
        # sys.stderr is the worker's LoggingProxy, so every later log line and console e-mail of that worker
        # process was swallowed (QA walk: e-mails stopped after the first NF-e was asked for).
        _import_tasks()
    return tasks[name]


def enqueue(name: str, *args: Any, countdown: float | None = None) -> None:
    """Send now. A broker error propagates: the caller has nothing durable that a sweep would find."""
    task_named(name).apply_async(args=args, countdown=countdown)


class _SendAfterCommit:
    """The after-commit send `enqueue_on_commit` registers; `tag` is the caller's, for `pending_sends`."""

    __slots__ = ("args", "countdown", "name", "tag", "task")

    def __init__(self, task: Task, name: str, args: tuple[Any, ...], countdown: float | None, tag: object) -> None:
        self.task, self.name, self.args, self.countdown, self.tag = task, name, args, countdown, tag

    def __call__(self) -> None:
        try:
            # one LPUSH where that is all Celery's publish would write (kernel/task_publish.py; issue 34)
            if self.countdown is not None or not publish(current_app, self.task, self.args):
                self.task.apply_async(args=self.args, countdown=self.countdown)
        except Exception:  # broker down: the row stays pending and its sweep sends it
            logger.warning("task %s%r not enqueued; its sweep will run it", self.name, self.args, exc_info=True)


def enqueue_on_commit(name: str, *args: Any, countdown: float | None = None, tag: object = None) -> None:
    """Send after the current transaction commits (at once outside one).

    What the transaction wrote is durable by then and a beat sweep re-drives it, so a broker that cannot be
    reached is logged, never raised: the committed change must not turn into an error for the caller (a PSP
    webhook answered 500 is sent again and again although its event is stored).
    `tag`: anything the caller wants to find this send by again while its transaction is open (`pending_sends`).
    """
    transaction.on_commit(_SendAfterCommit(task_named(name), name, args, countdown, tag))


def pending_sends(name: str) -> Iterator[object]:
    """The tags of the sends of task `name` that `enqueue_on_commit` registered in the current transaction and
    that are still due: a rolled-back savepoint took its own sends away with what it wrote (Django drops their
    callbacks), and one released before this call (a placement inside the caller's transaction) left its sends
    to the transaction, due at its commit. Nothing outside a transaction."""
    connection = transaction.get_connection()
    if not connection.in_atomic_block:
        return
    mine = _transaction_savepoint(connection)
    current = set(connection.savepoint_ids)
    for savepoints, callback, _robust in connection.run_on_commit:
        if not isinstance(callback, _SendAfterCommit) or callback.name != name:
            continue
        if mine is _EVERY or (savepoints <= current if mine is None else mine in savepoints):
            yield callback.tag


_EVERY = "every callback waiting for the commit"


def _transaction_savepoint(connection: Any) -> str | None:
    """The savepoint that stands for the current transaction: `_EVERY` in a real transaction (Django runs or drops
    all its callbacks when it ends, so every one waiting is this transaction's).

    Under a test case's atomic blocks (Django's TestCase, pytest-django) nothing commits: the first block inside
    them is the transaction, as Django's own `durable` check counts it, and the callbacks of earlier ones (run by
    `captureOnCommitCallbacks`, which leaves them in the list) are not this transaction's. None when that block
    has no savepoint (`savepoint=False`): then only this savepoint's and those around it count."""
    blocks = connection.atomic_blocks
    first = next((at for at, block in enumerate(blocks) if not getattr(block, "_from_testcase", False)), len(blocks))
    if first == 0:
        return _EVERY
    # The outermost block has no savepoint: savepoint_ids[i] is atomic_blocks[i + 1]'s.
    ids = connection.savepoint_ids
    return ids[first - 1] if first - 1 < len(ids) else None
