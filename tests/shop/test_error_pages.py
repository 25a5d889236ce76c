"""404, 405, 403 (CSRF) and 500 are pages of the shop (its header, a way back), never a blank or Django's bare page."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_unknown_address_is_a_styled_404_with_the_shop_header(client, settings):
    settings.DEBUG = False
    response = client.get("/nao-existe/")
    html = response.content.decode()
    assert response.status_code == 404
    assert 'class="site-header"' in html and settings.SHOP_NAME in html
    assert "<h1>Página não encontrada</h1>" in html
    assert 'action="/produtos/"' in html  # a search box to carry on
    assert '<meta name="robots" content="noindex">' in html


@pytest.mark.parametrize("path", ["/nao-existe/", "/carrinho/nao-existe", "/checkout/checkout_nope"])
def test_with_debug_on_unknown_addresses_are_the_shops_404_too(client, settings, path):
    """Issue 33: under `make run` (DEBUG) Django's English technical 404 listed every route."""
    settings.DEBUG = True
    response = client.get(path)
    html = response.content.decode()
    assert response.status_code == 404
    assert "<h1>Página não encontrada</h1>" in html and 'class="site-header"' in html
    assert "Using the URLconf" not in html and "NOARCHIVE" not in html


def test_unknown_order_token_is_the_styled_404_without_hint(client, settings):
    response = client.get("/orders/" + "x" * 32)
    html = response.content.decode()
    assert response.status_code == 404
    assert 'class="site-header"' in html
    assert "Confira o link que você recebeu por e-mail." in html
    assert "Pedido" not in html


def test_opening_add_to_cart_in_the_browser_is_a_styled_405(client):
    response = client.get("/carrinho/adicionar", HTTP_ACCEPT="text/html,application/xhtml+xml")
    html = response.content.decode()
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert 'class="site-header"' in html
    assert "Esta ação não pode ser aberta como página" in html
    assert 'href="/carrinho/"' in html


def test_api_clients_keep_the_plain_405(client):
    response = client.get("/carrinho/adicionar", HTTP_ACCEPT="application/json")
    assert (response.status_code, response.content) == (405, b"")


def test_405_page_in_english(client):
    client.cookies["django_language"] = "en"
    html = client.get("/carrinho/adicionar").content.decode()
    assert "This action cannot be opened as a page" in html


@pytest.mark.urls("tests.shop.error_urls")
def test_a_bug_is_a_styled_500_that_says_nothing_was_charged(client, settings):
    settings.DEBUG = False
    client.raise_request_exception = False
    response = client.get("/falha/")
    html = response.content.decode()
    assert response.status_code == 500
    assert 'class="site-header"' in html and settings.SHOP_NAME in html
    assert "Algo deu errado do nosso lado" in html
    assert "RuntimeError" not in html and "Traceback" not in html


def test_a_stale_form_gets_a_portuguese_page_in_the_shop_layout() -> None:
    """A form whose CSRF cookie is gone (another tab logged out, cookies cleared) gets the shop's own page."""
    strict = Client(enforce_csrf_checks=True)
    response = strict.post("/pedido", {"email": "ana@example.com.br", "number": "1001"})
    assert response.status_code == 403
    html = response.content.decode()
    assert "Não foi possível enviar o formulário" in html and "recarregue a página" in html
    assert 'data-testid="error-page"' in html and 'class="site-header' in html
    assert "Forbidden" not in html and "Help" not in html and "CSRF" not in html
