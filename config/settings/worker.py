"""Celery: broker, delivery guarantees and the beat schedule of the sweeps."""

from __future__ import annotations

from datetime import timedelta

from celery.schedules import crontab

from kernel.env import env_bool, env_int, env_str

# --- Celery -------------------------------------------------------------------------------------------
# No broker: tasks run eagerly in-process (embedded default for `make run`).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", "") or None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", default=not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
# Every task is idempotent (unique keys, conditional updates), so a task whose worker died is run again:
# acknowledged only after it ran, re-queued when its worker process is lost. A task left unacknowledged
# by a killed worker goes back to the queue once it is older than the visibility timeout, which must be
# longer than any task may run (the hard time limit) or a running task would be handed out twice.
# Beat (`celery -A config beat`) must run in production: its sweeps re-drive whatever is still stranded.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 300, minimum=1)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3 * CELERY_TASK_TIME_LIMIT, minimum=1),
}
# A broker that cannot be reached costs a request at most about a second before the enqueue gives up (kernel/tasks.py
# logs it and the row's sweep runs it later): a PSP webhook is answered before the PSP's own timeout.
CELERY_BROKER_CONNECTION_TIMEOUT = 1.0
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# What a task prints (the console e-mail backend of development prints each e-mail) is logged at INFO, not as the
# WARNING Celery defaults to: a warning line per e-mail hid the real warnings of `make worker`.
CELERY_WORKER_REDIRECT_STDOUTS_LEVEL = "INFO"
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    "expire-checkouts": {"task": "shop.tasks.expire_checkouts", "schedule": timedelta(minutes=1)},
    "reconcile-pix-charges": {"task": "payments.tasks.reconcile_pix_charges", "schedule": timedelta(minutes=1)},
    "expire-pix-charges": {"task": "payments.tasks.expire_pix_charges", "schedule": timedelta(minutes=1)},
    # Card payments left pending (timeout, lost webhook), card inbox rows and estornos left behind.
    "reconcile-card-payments": {"task": "payments.tasks.reconcile_card_payments", "schedule": timedelta(minutes=1)},
    # Boletos (issue 37): a lost `charge.paid` asked at the gateway; unpaid past due + grace canceled there.
    "sweep-boletos": {"task": "payments.tasks.sweep_boletos", "schedule": timedelta(minutes=5)},
    # Pix Automático `/rec` notices whose processing was never enqueued or died (issue 38).
    "reprocess-recurrence-webhooks": {
        "task": "payments.tasks.reprocess_recurrence_webhooks",
        "schedule": timedelta(minutes=1),
    },
    # Pix Automático cycles: `/cobr` notices left behind, charges past due never notified; the shop's cycle
    # sweep schedules the next charges ahead and re-drives what a crash left half done.
    "reconcile-recurring-charges": {
        "task": "payments.tasks.reconcile_recurring_charges",
        "schedule": timedelta(minutes=1),
    },
    "sweep-subscription-cycles": {"task": "shop.tasks.sweep_subscription_cycles", "schedule": timedelta(minutes=5)},
    "reconcile-received-pix": {"task": "payments.tasks.reconcile_received_pix", "schedule": crontab(minute=41)},
    "purge-idempotency-records": {
        "task": "bcp_app.tasks.purge_idempotency_records",
        "schedule": crontab(minute=17),
    },
    "retry-order-webhooks": {"task": "bcp_app.tasks.retry_order_webhooks", "schedule": timedelta(minutes=1)},
    # A2A tasks of Pix completes whose checkout ended without a settlement (Pix expired): ended, pushed (issue 35).
    "reconcile-a2a-tasks": {"task": "bcp_app.tasks.reconcile_a2a_tasks", "schedule": timedelta(minutes=1)},
    # Buyer e-mails whose after-commit enqueue was lost (broker down) are sent by this sweep, still once.
    "send-pending-order-emails": {"task": "orders.tasks.send_pending_emails", "schedule": timedelta(minutes=5)},
    # Money side effects (refund requests) whose task was lost or failed: retried, each exactly once.
    "sweep-outbox": {"task": "orders.tasks.sweep_outbox", "schedule": timedelta(minutes=1)},
    "remind-abandoned-checkouts": {"task": "shop.tasks.remind_abandoned_checkouts", "schedule": timedelta(minutes=10)},
    "sweep-boleto-notices": {"task": "shop.tasks.sweep_boleto_notices", "schedule": timedelta(minutes=10)},
    # NF-e jobs: provider retries, polls of notes in processing, jobs and webhooks lost in a crash.
    "sweep-fiscal": {"task": "fiscal.tasks.sweep_fiscal", "schedule": timedelta(minutes=1)},
    "sweep-fiscal-requests": {"task": "shop.tasks.sweep_fiscal_requests", "schedule": timedelta(minutes=5)},
    # MED disputes: notifications whose task was lost, staff answers not delivered to the PSP yet.
    "sweep-infractions": {"task": "payments.tasks.sweep_infractions", "schedule": timedelta(minutes=1)},
    # Correios tracking (no webhook): each bought label's history every 30 minutes, until delivered or returned.
    "poll-carrier-tracking": {"task": "shop.tasks.poll_carrier_tracking", "schedule": timedelta(minutes=10)},
    # "Minha conta" sign-in e-mails whose after-commit enqueue was lost, while the link is still valid.
    "resend-account-links": {"task": "shop.tasks.resend_account_links", "schedule": timedelta(minutes=1)},
}

# `make run` only (no broker): run the interval sweeps above in a thread of the web process (config/scheduler.py).
SHOP_INPROCESS_SCHEDULER = env_bool("SHOP_INPROCESS_SCHEDULER", default=False)
