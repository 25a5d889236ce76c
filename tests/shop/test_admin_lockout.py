"""Admin login lockout after repeated failures (issue 13 §13, issue 31 §1; django-axes on Postgres).

Before: 30 wrong admin passwords in a row were 30 ordinary login pages, no lockout. Then (issue 31) the
lockout counted per client IP only, and with a forged X-Forwarded-For each attempt was a new IP: 40 wrong
passwords, no lockout, then the right one logged in. Now a username is locked too, from any address.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db
LOGIN = "/admin/login/?next=/admin/"


@pytest.fixture
def admin_user() -> User:
    return User.objects.create_superuser("dono", "dono@example.com.br", "senha-correta-123")


def _login(client: Client, password: str) -> int:
    return client.post(LOGIN, {"username": "dono", "password": password}).status_code


def test_wrong_passwords_lock_the_login_and_a_correct_one_works_after_the_cooloff(admin_user: User, settings) -> None:
    client = Client()
    limit = settings.AXES_FAILURE_LIMIT
    # when one address tries wrong passwords up to the limit
    before = [_login(client, f"errada-{n}") for n in range(limit - 1)]
    locking = client.post(LOGIN, {"username": "dono", "password": "errada-final"})
    # then the first ones are the login form again, and the last is the Portuguese lockout page
    assert before == [200] * (limit - 1)
    assert locking.status_code == 429
    page = locking.content.decode()
    assert "Acesso bloqueado temporariamente" in page
    assert f"por {settings.AXES_COOLOFF_TIME.seconds // 60} minutos" in page
    assert locking["Retry-After"] == str(settings.AXES_COOLOFF_TIME.seconds)
    # and while locked even the correct password is refused
    assert _login(client, "senha-correta-123") == 429
    assert "_auth_user_id" not in client.session
    # when the cooloff has passed (the attempts are older than it)
    AccessAttempt.objects.update(attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1))
    # then the correct password logs in and the admin opens
    response = client.post(LOGIN, {"username": "dono", "password": "senha-correta-123"})
    assert (response.status_code, response["Location"]) == (302, "/admin/")
    assert client.get("/admin/").status_code == 200
    # and the count starts over: one new mistake is just the form again
    assert _login(Client(), "errada-de-novo") == 200


def test_a_locked_address_does_not_lock_another_user(admin_user: User, settings) -> None:
    User.objects.create_superuser("gerente", "gerente@example.com.br", "outra-senha-456")
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    for n in range(settings.AXES_FAILURE_LIMIT):
        attacker.post(LOGIN, {"username": "dono", "password": f"errada-{n}"})
    assert _login(attacker, "senha-correta-123") == 429
    colleague = Client(REMOTE_ADDR="198.51.100.7")
    assert colleague.post(LOGIN, {"username": "gerente", "password": "outra-senha-456"}).status_code == 302


def test_one_username_guessed_from_many_addresses_is_locked(admin_user: User, settings) -> None:
    # Before: 40 wrong passwords from 40 addresses were 40 login forms, then the right password logged in.
    limit = settings.AXES_FAILURE_LIMIT
    tries = [
        Client(REMOTE_ADDR=f"203.0.113.{n}").post(LOGIN, {"username": "dono", "password": f"errada-{n}"}).status_code
        for n in range(1, 41)
    ]
    assert tries == [200] * (limit - 1) + [429] * (41 - limit)
    # and from yet another address even the right password is refused while the username is locked
    assert _login(Client(REMOTE_ADDR="198.51.100.7"), "senha-correta-123") == 429
