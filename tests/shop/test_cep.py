"""CEP format and local CEP-prefix → UF table; CPF/CNPJ check digits."""

import pytest

from kernel.br_validation import cnpj_valid, cpf_valid, phone_normalize, phone_valid
from shop.checkout.fulfillment import cep_digits, cep_format, cep_uf


@pytest.mark.parametrize(
    ("raw", "digits"),
    [
        ("01310-100", "01310100"),
        ("01310100", "01310100"),
        (" 20040-002 ", "20040002"),
        ("0131-0100", None),
        ("abc", None),
        ("", None),
    ],
)
def test_cep_digits(raw, digits):
    assert cep_digits(raw) == digits


@pytest.mark.parametrize(
    ("cep", "uf"),
    [
        ("01310100", "SP"),
        ("19999999", "SP"),
        ("20040002", "RJ"),
        ("30130010", "MG"),
        ("40020000", "BA"),
        ("69900000", "AC"),
        ("70040010", "DF"),
        ("72800000", "GO"),
        ("73000000", "DF"),
        ("80010000", "PR"),
        ("88010000", "SC"),
        ("90010000", "RS"),
        ("00000000", None),
    ],
)
def test_cep_uf_table(cep, uf):
    assert cep_uf(cep) == uf


def test_cep_format():
    assert cep_format("01310100") == "01310-100"


@pytest.mark.parametrize(
    ("cpf", "valid"), [("52998224725", True), ("52998224724", False), ("11111111111", False), ("123", False)]
)
def test_cpf_check_digits(cpf, valid):
    assert cpf_valid(cpf) is valid


@pytest.mark.parametrize(
    ("cnpj", "valid"),
    [
        ("11222333000181", True),
        ("11222333000180", False),
        ("00000000000000", False),
        # alphanumeric CNPJ (Receita Federal example, valid from July 2026)
        ("12ABC34501DE35", True),
        ("12ABC34501DE36", False),
        ("12ABC34501DEX5", False),
    ],
)
def test_cnpj_check_digits(cnpj, valid):
    assert cnpj_valid(cnpj) is valid


@pytest.mark.parametrize(
    ("raw", "normalized", "valid"),
    [("(11) 98765-4321", "+5511987654321", True), ("+55 11 98765-4321", "+5511987654321", True), ("123", "123", False)],
)
def test_phone_normalize_and_validate(raw, normalized, valid):
    assert phone_normalize(raw) == normalized
    assert phone_valid(normalized) is valid
