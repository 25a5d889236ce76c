"""Celery tasks of the fiscal app: thin, take ids, call a service, idempotent."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task

from fiscal import services


@shared_task(name="fiscal.tasks.run_fiscal_job", ignore_result=True)
def run_fiscal_job(job_id: int) -> str:
    return services.job_run(job_id=job_id)


@shared_task(name="fiscal.tasks.process_fiscal_webhook", ignore_result=True)
def process_fiscal_webhook(webhook_id: int) -> str:
    return services.webhook_process(webhook_id=webhook_id)


@shared_task(name="fiscal.tasks.sweep_fiscal", ignore_result=True)
def sweep_fiscal() -> int:
    """Beat: re-drive due jobs (retries after the provider was down, polls, jobs lost in a crash) and
    notifications whose after-commit task never ran."""
    count = 0
    for job_id in services.jobs_due():
        services.job_run(job_id=job_id)
        count += 1
    for webhook_id in services.webhooks_unprocessed(older_than=timedelta(minutes=1)):
        services.webhook_process(webhook_id=webhook_id)
        count += 1
    return count
