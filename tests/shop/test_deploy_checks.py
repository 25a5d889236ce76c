"""`check --deploy` refuses a mailer that prints e-mails (issue 13 §15): buyer PII must never reach
production logs. Development keeps the console backend (DEBUG on, where deploy checks do not apply).
"""

from __future__ import annotations

from typing import Any

from django.core.checks import run_checks


def deploy_errors() -> set[str]:
    return {message.id for message in run_checks(include_deployment_checks=True)}


def test_console_or_file_mailer_fails_the_deploy_check(settings: Any) -> None:
    for backend in (
        "django.core.mail.backends.console.EmailBackend",
        "django.core.mail.backends.filebased.EmailBackend",
    ):
        settings.MAILERS = {"default": {"BACKEND": backend}}
        assert "shop.E001" in deploy_errors(), backend


def test_smtp_mailer_passes(settings: Any) -> None:
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.smtp.EmailBackend"}}
    assert "shop.E001" not in deploy_errors()
