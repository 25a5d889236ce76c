"""Inscrição estadual by UF (kernel/state_registration.py): each state's worked example of the SEFAZ routines
published by SINTEGRA ("Conferência de Inscrições Estaduais") passes, and the same number with its last check digit
changed fails."""

from __future__ import annotations

import pytest

from kernel.state_registration import RULES, state_registration_valid

# UF → valid IEs (as SINTEGRA's pages print them, punctuation included).
EXAMPLES = {
    "AC": ["01.004.823/001-12"],
    "AL": ["240000048"],
    "AP": ["030123459"],
    "AM": ["99.999.999-0"],
    "BA": ["123456-63", "612345-57", "1000003-06"],
    "CE": ["06000001-5"],
    "DF": ["07300001001-09"],
    "ES": ["99999999-0"],
    "GO": ["10.987.654-7"],
    "MA": ["120000385"],
    "MT": ["0013000001-9"],
    "MS": ["28315530-2"],
    "MG": ["062.307.904/0081"],
    "PA": ["15-999999-5"],
    "PB": ["06000001-5"],
    "PR": ["123.45678-50"],
    "PE": ["0321418-40", "18.1.001.0000004-9"],
    "PI": ["012345679"],
    "RJ": ["99.999.99-3"],
    "RN": ["20.040.040-1", "20.0.040.040-0"],
    "RS": ["224/3658792"],
    "RO": ["0000000062521-3", "101.62521-3"],
    "RR": ["24006628-1"],
    "SC": ["251.040.852"],
    "SP": ["110.042.490.114", "P-01100424.3/002"],
    "SE": ["27123456-3"],
    "TO": ["29.01.022783-6", "29022783-6"],
}


def test_every_uf_has_a_rule_and_an_example() -> None:
    assert set(RULES) == set(EXAMPLES) and len(RULES) == 27


@pytest.mark.parametrize(("uf", "ie"), [(uf, ie) for uf, ies in EXAMPLES.items() for ie in ies])
def test_the_sintegra_example_passes_and_a_wrong_check_digit_fails(uf: str, ie: str) -> None:
    assert state_registration_valid(ie, uf)
    at = ie.rindex(".") + 1 if ie.startswith("P") else len(ie) - 1  # São Paulo's rural "P…": its check digit
    assert not state_registration_valid(ie[:at] + str((int(ie[at]) + 1) % 10) + ie[at + 1 :], uf)


@pytest.mark.parametrize("uf", sorted(RULES))
def test_123_is_no_ie_anywhere_and_isento_is_accepted_everywhere(uf: str) -> None:
    assert not state_registration_valid("123", uf)
    assert state_registration_valid("ISENTO", uf) and state_registration_valid("isento", uf)


def test_an_ie_of_one_uf_is_refused_for_another_and_an_unknown_uf_refuses_all() -> None:
    assert state_registration_valid("110042490114", "SP")
    assert not state_registration_valid("110042490114", "RJ")
    assert not state_registration_valid("P011004243002", "MG")  # the "P" of rural producers is São Paulo's
    assert not state_registration_valid("110042490114", "XX")
