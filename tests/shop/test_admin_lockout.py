"""Admin login lockout after repeated failures (issue 13 §13, django-axes on Postgres).

Before: 30 wrong admin passwords in a row were 30 ordinary login pages, no lockout.
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


def test_wrong_passwords_lock_the_login_and_a_correct_one_works_after_the_cooloff(
    admin_user: User, settings
) -> None:
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


def test_a_locked_address_does_not_lock_another(admin_user: User, settings) -> None:
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    for n in range(settings.AXES_FAILURE_LIMIT):
        attacker.post(LOGIN, {"username": "dono", "password": f"errada-{n}"})
    assert _login(attacker, "senha-correta-123") == 429
    owner = Client(REMOTE_ADDR="198.51.100.7")
    assert owner.post(LOGIN, {"username": "dono", "password": "senha-correta-123"}).status_code == 302
