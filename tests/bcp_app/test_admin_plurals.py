"""Merchant-facing counts in the BCP admin and the agents' field errors read as proper Portuguese plurals
(ngettext), never "plataforma(s)" or "caractere(s)" (QA walk)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from bcp_app.models import Platform
from bcp_app.protocol.field_errors import describe
from bcp_app.service.platforms import platform_create


@pytest.mark.django_db
def test_revoking_platforms_says_how_many_in_the_singular_or_the_plural(admin_client) -> None:
    one = platform_create(name="Agente Um").platform
    page = admin_client.post(
        "/admin/bcp_app/platform/", {"action": "revoke", "_selected_action": [one.pk]}, follow=True
    ).content.decode()
    assert "1 plataforma revogada." in page and "(s)" not in page
    both = [platform_create(name="Agente Dois").platform.pk, platform_create(name="Agente Três").platform.pk]
    page = admin_client.post(
        "/admin/bcp_app/platform/", {"action": "revoke", "_selected_action": both}, follow=True
    ).content.decode()
    assert "2 plataformas revogadas." in page
    assert not Platform.objects.filter(pk__in=[one.pk, *both], active=True).exists()


class _Limits(BaseModel):
    code: str = Field(min_length=1)
    name: str = Field(min_length=2, max_length=1)
    tags: list[str] = Field(min_length=1)
    lines: list[int] = Field(min_length=2)


def test_length_errors_count_in_the_singular_or_the_plural() -> None:
    with pytest.raises(ValidationError) as error:
        _Limits(code="", name="abc", tags=[], lines=[1])
    _, problems = describe(error.value)
    assert problems == {
        "$.code": "precisa de pelo menos 1 caractere",
        "$.name": "aceita no máximo 1 caractere",
        "$.tags": "precisa de pelo menos 1 item",
        "$.lines": "precisa de pelo menos 2 itens",
    }
    with pytest.raises(ValidationError) as error:
        _Limits(code="x", name="a", tags=["a"], lines=[1, 2])
    assert describe(error.value)[1] == {"$.name": "precisa de pelo menos 2 caracteres"}
