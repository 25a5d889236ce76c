"""Chave de acesso: layout and módulo 11 check digit (MOC 7.0 §5.4), against keys published elsewhere."""

from __future__ import annotations

import pytest

from fiscal import access_key

PUBLISHED_KEYS = [
    "13181017921427000125650010000000309887251170",  # NFC-e AM, invoisys.com.br example
    "41150876497338001649650010000005351770691965",  # NFC-e PR, Focus NFe's example answer
    "43171207364617000135550000000120141000120146",  # NF-e RS, "Dígito Verificador da Chave de Acesso"
]


@pytest.mark.parametrize("key", PUBLISHED_KEYS)
def test_published_keys_are_valid(key: str) -> None:
    assert access_key.is_valid(key) is True
    assert access_key.check_digit(key[:43]) == int(key[43])


@pytest.mark.parametrize("key", PUBLISHED_KEYS)
def test_any_changed_digit_is_caught(key: str) -> None:
    for position in (0, 10, 25, 42):
        changed = key[:position] + str((int(key[position]) + 1) % 10) + key[position + 1 :]
        assert access_key.is_valid(changed) is False


def test_remainder_zero_or_one_gives_zero() -> None:
    # 43 zeros sum to 0 → remainder 0 → digit 0; "1" + 42 zeros: weight of the leftmost digit is 2 + 42 % 8 = 4,
    # remainder 4 → 11 - 4 = 7.
    assert access_key.check_digit("0" * 43) == 0
    assert access_key.check_digit("1" + "0" * 42) == 7


def test_build_lays_out_the_fields() -> None:
    key = access_key.build(
        access_key.KeyParts(
            uf="RS", year_month="1712", cnpj="07364617000135", series=0, number=12014, numeric_code=12014
        )
    )
    assert key == "43171207364617000135550000000120141000120146"


@pytest.mark.parametrize("bad", ["", "1" * 43, "1" * 45, "4317120736461700013555000000012014100012014A", None])
def test_malformed_keys_are_invalid(bad: object) -> None:
    assert access_key.is_valid(bad) is False  # type: ignore[arg-type]


def test_build_refuses_unknown_uf() -> None:
    with pytest.raises(ValueError, match="unknown UF"):
        access_key.build(
            access_key.KeyParts(uf="XX", year_month="2612", cnpj="1" * 14, series=1, number=1, numeric_code=1)
        )
