"""CEP → address through the provider boundary (`shop/checkout/fulfillment.py`), against a fake ViaCEP on loopback:
found, not found, timeout, garbage, wrong shape, HTTP error, cache; the `/cep/<cep>` JSON and the no-JavaScript
autofill.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kernel.http import verified_tls_context
from shop.checkout.fulfillment import CepAddress, cep_cache_forget, cep_lookup
from shop.models import Checkout
from tests.bcp_app.drip import DripServer
from tests.shop.checkout_factories import make_shipping, make_variant
from tests.shop.fake_cep import (
    ERROR_CEP,
    FOUND_CEP,
    GARBAGE_CEP,
    NOT_FOUND_CEP,
    RIO_CEP,
    SLOW_CEP,
    WRONG_SHAPE_CEP,
    FakeCep,
    fake_cep_provider,
)

ALL_CEPS = (FOUND_CEP, RIO_CEP, NOT_FOUND_CEP, SLOW_CEP, GARBAGE_CEP, WRONG_SHAPE_CEP, ERROR_CEP)
PAULISTA = CepAddress(cep="01310-100", uf="SP", city="São Paulo", neighborhood="Bela Vista", street="Avenida Paulista")


@pytest.fixture
def provider(settings) -> Iterator[FakeCep]:
    with fake_cep_provider() as fake:
        settings.CEP_PROVIDER_URL = fake.url
        settings.CEP_PROVIDER_TIMEOUT_MS = 300
        for cep in ALL_CEPS:
            cep_cache_forget(cep)
        yield fake
        for cep in ALL_CEPS:
            cep_cache_forget(cep)


def test_found_cep_gives_street_bairro_city_and_uf_then_comes_from_the_cache(provider) -> None:
    assert cep_lookup("01310-100") == PAULISTA
    assert cep_lookup("01310100") == PAULISTA
    assert provider.hits[FOUND_CEP] == 1  # the second answer came from the cache


def test_not_found_cep_is_said_so_and_cached(provider) -> None:
    assert cep_lookup("99999-999") == CepAddress(cep="99999-999", uf="", found=False)
    assert cep_lookup("99999-999").found is False
    assert provider.hits[NOT_FOUND_CEP] == 1


@pytest.mark.parametrize(
    ("cep", "uf"),
    [(SLOW_CEP, "MG"), (GARBAGE_CEP, "BA"), (WRONG_SHAPE_CEP, "PR"), (ERROR_CEP, "SC")],
    ids=["timeout", "garbage", "wrong-shape", "http-500"],
)
def test_provider_trouble_falls_back_to_the_offline_uf_table_uncached(provider, cep, uf) -> None:
    formatted = f"{cep[:5]}-{cep[5:]}"
    assert cep_lookup(cep) == CepAddress(cep=formatted, uf=uf, source="offline")
    # not cached: the next buyer asks the provider again (it may be back)
    assert cep_lookup(cep) == CepAddress(cep=formatted, uf=uf, source="offline")
    assert provider.hits[cep] == 2


def test_lookups_share_one_tls_context_per_process(provider, monkeypatch) -> None:
    """httpx loads the CA bundle into a new SSLContext for every client it builds without one (about 18 ms of
    CPU): the buyers' CEP lookups share the process's context instead (kernel/http.py)."""
    import ssl

    built: list[object] = []
    real = ssl.create_default_context

    def counted(*args: object, **kwargs: object) -> ssl.SSLContext:
        built.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)  # the standard library's: only counted
    verified_tls_context()  # the process's context exists before the lookups (any earlier call made it)
    built.clear()
    for cep in (FOUND_CEP, RIO_CEP, NOT_FOUND_CEP):
        assert cep_lookup(cep) is not None
    assert sum(provider.hits.values()) == 3  # three clients talked to the provider
    assert built == []  # and none built a context of its own


def test_unreachable_provider_falls_back_too(settings) -> None:
    settings.CEP_PROVIDER_URL = "http://127.0.0.1:9/ws/{cep}/json/"  # discard port: connection refused
    settings.CEP_PROVIDER_TIMEOUT_MS = 300
    cep_cache_forget(FOUND_CEP)
    assert cep_lookup(FOUND_CEP) == CepAddress(cep="01310-100", uf="SP", source="offline")


def test_a_dripping_provider_is_cut_at_the_total_timeout(settings) -> None:
    """Issue 31 §2: the timeout was per read, so a provider sending a byte a second held the buyer's request for
    as long as it kept sending. Now the whole lookup has one deadline (kernel/http.py)."""
    settings.CEP_PROVIDER_TIMEOUT_MS = 1000
    cep_cache_forget(FOUND_CEP)
    with DripServer(interval=0.3) as drip:
        settings.CEP_PROVIDER_URL = drip.url("/ws/{cep}/json/")
        assert cep_lookup(FOUND_CEP) == CepAddress(cep="01310-100", uf="SP", source="offline")
        assert drip.cut.wait(10)  # the provider saw the lookup hang up mid-answer
        assert drip.connections == 1


def test_no_provider_configured_uses_the_table_and_a_bad_format_is_none(settings) -> None:
    settings.CEP_PROVIDER_URL = ""
    assert cep_lookup("20040-002") == CepAddress(cep="20040-002", uf="RJ", source="offline")
    assert cep_lookup("00000-000") == CepAddress(cep="00000-000", uf="", found=False, source="offline")
    assert cep_lookup("123") is None


@pytest.mark.django_db
def test_cep_json_endpoint(client, provider) -> None:
    response = client.get("/cep/01310-100")
    assert (response.status_code, response.json()) == (
        200,
        {"cep": "01310-100", "uf": "SP", "city": "São Paulo", "neighborhood": "Bela Vista",
         "street": "Avenida Paulista", "found": True, "source": "provider"},
    )  # fmt: skip
    unknown = client.get("/cep/99999999")  # an answer, not a missing page (no console error in the browser)
    assert (unknown.status_code, unknown.json()["found"], unknown.json()["cep"]) == (200, False, "99999-999")
    slow = client.get(f"/cep/{SLOW_CEP}")
    assert (slow.status_code, slow.json()["uf"], slow.json()["source"], slow["Cache-Control"]) == (
        200,
        "MG",
        "offline",
        "no-store",
    )
    bad = client.get("/cep/12ab")
    assert (bad.status_code, bad.json()["message"]) == (400, "CEP inválido: use o formato 00000-000.")


@pytest.mark.django_db
def test_calcular_frete_without_javascript_fills_the_address_from_the_cep(client, provider) -> None:
    # given a cart and a checkout; the buyer has JavaScript off and types only the CEP and the number
    make_variant(price=4290, stock=10)
    make_shipping()
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    checkout_id = client.get("/checkout/")["Location"].rsplit("/", 1)[1]
    form = {"email": "ana@example.com.br", "first_name": "Ana", "last_name": "Souza", "method": "shipping"}
    response = client.post(
        f"/checkout/{checkout_id}", {"action": "shipping", **form, "cep": "01310-100", "number": "1000"}
    )
    # when "Calcular frete" is pressed, street, bairro, city and UF come back filled, with the options
    html = response.content.decode()
    for name, value in (("street", "Avenida Paulista"), ("neighborhood", "Bela Vista"), ("city", "São Paulo")):
        assert f'name="{name}" type="text" value="{value}"' in html
    assert 'name="uf" type="text" value="SP"' in html
    assert 'value="sedex"' in html
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.ship_street, checkout.ship_city, checkout.ship_uf) == ("Avenida Paulista", "São Paulo", "SP")
    # when the CEP changes to Rio, the UF follows and what the buyer typed (the street he chose) stays
    response = client.post(
        f"/checkout/{checkout_id}",
        {"action": "update", **form, "cep": "20040-002", "number": "1", "street": "Rua do Ouvidor", "uf": "SP"},
    )
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.ship_street, checkout.ship_neighborhood, checkout.ship_city, checkout.ship_uf) == (
        "Rua do Ouvidor",
        "Centro",
        "Rio de Janeiro",
        "RJ",
    )
