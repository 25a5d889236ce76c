"""Fiscal data on the store and the catalog: validation with messages naming the field (issue 18)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from shop.demo.seed import seed_catalog, seed_store_fiscal
from shop.models import Product, StoreSettings
from tests.shop.checkout_factories import make_variant

pytestmark = pytest.mark.django_db


def _errors(instance) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        instance.full_clean()
    return caught.value.message_dict


@pytest.mark.parametrize("ncm", ["6109100", "610910001", "6109.10.0A"])
def test_ncm_must_have_8_digits(ncm: str) -> None:
    product = make_variant().product
    product.ncm = ncm
    assert _errors(product) == {
        "ncm": ["NCM inválido: informe os 8 dígitos da classificação fiscal (ex.: 6109.10.00)."]
    }


@pytest.mark.parametrize("cfop", ["510", "51022", "9102"])
def test_cfop_must_have_4_digits_starting_1_to_7(cfop: str) -> None:
    product = make_variant().product
    product.ncm, product.cfop = "6109.10.00", cfop
    assert _errors(product) == {"cfop": ["CFOP inválido: informe 4 dígitos, começando de 1 a 7 (ex.: 5102)."]}


def test_valid_codes_with_punctuation_pass() -> None:
    product = make_variant().product
    product.ncm, product.cfop = "6109.10.00", "5102"
    product.full_clean()


def test_store_fiscal_fields_are_validated() -> None:
    store = StoreSettings(state_registration="12-AB", cnae="47814", nfe_series=900)
    errors = _errors(store)
    assert errors["state_registration"] == ["Inscrição estadual inválida: use só números (até 14) ou ISENTO."]
    assert errors["cnae"] == ["CNAE inválido: informe os 7 dígitos da atividade (ex.: 4781-4/00)."]
    assert errors["nfe_series"] == ["Série da NF-e inválida: use um número de 0 a 889."]


def test_demo_seed_gives_every_product_an_ncm_and_the_store_its_fiscal_identity() -> None:
    seed_catalog()
    assert Product.objects.filter(ncm="").count() == 0
    assert Product.objects.get(slug__startswith="cafe", variants__sku="SKU-CAFE-500G").ncm == "09012100"
    assert seed_store_fiscal() is True
    store = StoreSettings.objects.get()
    assert (store.cnpj, store.state_registration, store.cnae) == ("11.222.333/0001-81", "110042490114", "4781400")
    assert seed_store_fiscal() is False  # idempotent, never overwrites
