"""The admin's technical lists (issue 33, minor): login lockouts (axes), API tokens, BCP platforms, idempotency
records, order webhooks, fiscal jobs and provider notifications, webhook inboxes sit under "Sistema", after the
merchant's sections, and only superusers see that section."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

pytestmark = pytest.mark.django_db

TECHNICAL = [
    "Tentativas de acesso",
    "Tokens",
    "Plataformas BCP",
    "Registros de idempotência",
    "Webhooks de pedido",
    "Tarefas fiscais",
    "Notificações do emissor",
    "Eventos de webhook Pix",
]


def _sections(html: str) -> dict[str, str]:
    """Caption → body of each app module on the admin home (the dashboard's app list)."""
    content = html.split('id="content-main"', 1)[1]
    return {
        re.sub(r"<[^>]+>", "", caption).strip(): body
        for caption, body in re.findall(r"<caption>(.*?)</caption>(.*?)</table>", content, re.S)
    }


def test_superusers_find_the_technical_lists_under_sistema_last(admin_client: Client) -> None:
    html = admin_client.get("/admin/").content.decode()
    sections = _sections(html)
    names = list(sections)
    assert names[-1] == "Sistema"
    assert "BCP" not in names and "Axes" not in names and "Token de autenticação" not in names
    assert all(f">{label}<" in sections["Sistema"] for label in TECHNICAL), sections["Sistema"]
    assert ">Tarefas fiscais<" not in sections["Notas fiscais"] and ">Notas fiscais<" in sections["Notas fiscais"]
    assert ">Cobranças Pix<" in sections["Pagamentos"] and ">Eventos de webhook Pix<" not in sections["Pagamentos"]
    page = admin_client.get("/admin/sistema/")
    assert page.status_code == 200 and ">Plataformas BCP<" in page.content.decode()


def test_staff_who_are_not_superusers_see_no_sistema(client: Client) -> None:
    staff = User.objects.create_user("caixa", "caixa@example.com.br", "senha-forte-123", is_staff=True)
    staff.user_permissions.set(Permission.objects.all())  # even with every permission: out of the way
    client.force_login(staff)
    sections = _sections(client.get("/admin/").content.decode())
    assert "Sistema" not in sections and "BCP" not in sections
    assert "Pedidos" in sections
    assert client.get("/admin/sistema/").status_code == 403
