"""The checkout form shares its field declarations between instances (issue 34: no deep copy per view): each form
still has its own data, values, errors and bound fields, the fields are never changed by a form, and the CPF
label follows the setting."""

from __future__ import annotations

from typing import Any

from shop.checkout.web.forms import CONTROL_CHARACTER, CheckoutForm, reject_control_characters


def _validators_count(form: CheckoutForm) -> int:
    return sum(len(field.validators) for field in form.fields.values())


def test_each_form_keeps_its_own_data_values_and_errors() -> None:
    typed = CheckoutForm(data={"email": "ana@example.com", "first_name": "Ana", "uf": "SPX"})
    other = CheckoutForm(data={"email": "bia@example.com", "first_name": "Bia"})
    unbound = CheckoutForm(initial={"email": "cida@example.com"})
    assert not typed.is_valid()
    assert other.is_valid()
    typed.add_error("email", "E-mail recusado.")
    assert typed.errors["email"] == ["E-mail recusado."]
    assert "uf" in typed.errors
    assert not other.errors
    assert other["email"].value() == "bia@example.com" and other["first_name"].value() == "Bia"
    assert typed["email"].value() == "ana@example.com"
    assert unbound["email"].value() == "cida@example.com" and not unbound.errors
    assert other.cleaned_data["first_name"] == "Bia"
    assert typed["email"] is not other["email"]  # bound fields per form


def test_fields_are_shared_and_not_changed_by_a_form() -> None:
    first = CheckoutForm(data={"first_name": "Ana"})
    count = _validators_count(first)
    for _ in range(5):
        CheckoutForm(data={"first_name": "Ana\x00"}).is_valid()
    second = CheckoutForm()
    assert second.fields["email"] is first.fields["email"]  # no per-form copy
    assert second.fields is not first.fields  # but each form its own dict (Django lets a form reorder it)
    assert _validators_count(second) == count  # the validators are set once, not appended per form
    assert first.base_fields["email"] is not first.fields["email"]  # the declaration itself stays untouched
    assert reject_control_characters in first.fields["first_name"].validators
    refused = CheckoutForm(data={"first_name": "Ana\x00"})
    assert not refused.is_valid()
    assert refused.errors["first_name"] == [str(CONTROL_CHARACTER)]  # one message, not Django's NUL one too


def test_the_cpf_label_follows_the_setting(settings: Any) -> None:
    settings.FISCAL_ISSUE_ON = "paid"
    assert str(CheckoutForm()["tax_id"].label) == "CPF (para a nota fiscal)"
    settings.FISCAL_ISSUE_ON = "off"
    assert str(CheckoutForm()["tax_id"].label) == "CPF (opcional)"
    settings.FISCAL_ISSUE_ON = "paid"
    assert str(CheckoutForm()["tax_id"].label) == "CPF (para a nota fiscal)"
