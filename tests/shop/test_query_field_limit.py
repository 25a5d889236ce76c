"""A query string with thousands of parameters is refused first, in every mode (issue 31: with DEBUG on, 5,000
parameters cost 14–25 s of CPU in Django's technical error page and ended as a 500)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def _query(count: int) -> str:
    return "&".join(f"p{i}=x" for i in range(count))


@pytest.mark.parametrize("debug", [True, False])
def test_five_thousand_parameters_are_a_short_400_in_portuguese(settings: Any, debug: bool) -> None:
    # given the shop in development (DEBUG, `make run`) or production mode
    settings.DEBUG = debug
    # when a page is asked for with 5,000 query parameters
    response = Client(raise_request_exception=False).get(f"/?{_query(5000)}")
    # then it is refused before any page is built, saying why
    assert response.status_code == 400
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == "Parâmetros demais no endereço: no máximo 1000."


def test_the_rest_api_answers_its_json_error(settings: Any) -> None:
    settings.DEBUG = True

    response = Client(raise_request_exception=False).get(f"/bcp/v1/catalog/search?{_query(5000)}")

    assert response.status_code == 400
    assert response.json() == {"code": "invalid_request", "content": "Parâmetros demais no endereço: no máximo 1000."}


def test_up_to_the_limit_the_page_is_served(settings: Any) -> None:
    settings.DEBUG = True
    client = Client(raise_request_exception=False)

    assert client.get(f"/?{_query(1000)}").status_code == 200
    assert client.get(f"/?{_query(1001)}").status_code == 400
