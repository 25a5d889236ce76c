"""The checkout form shares its field declarations between instances (issue 34: no deep copy per view): each form
still has its own data, values, errors and bound fields, the fields are never changed by a form, and the CPF
label follows the setting."""

from __future__ import annotations

from typing import Any

from django.template import Context, Template
from django.utils import translation

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


FIELD = Template('{% load storefront %}{% checkout_field field=form.tax_id inputmode="numeric" %}')


def test_a_kept_field_markup_follows_the_value_the_errors_the_language_and_the_cpf_setting(settings: Any) -> None:
    settings.FISCAL_ISSUE_ON = "paid"
    with translation.override("pt-br"):
        first = FIELD.render(Context({"form": CheckoutForm(initial={"tax_id": "529.982.247-25"})}))
        assert '<label for="id_tax_id">CPF (para a nota fiscal)</label>' in first
        assert 'value="529.982.247-25" inputmode="numeric" maxlength="20">' in first
        other = FIELD.render(Context({"form": CheckoutForm(initial={"tax_id": '"><b>'})}))
        assert 'value="&quot;&gt;&lt;b&gt;"' in other  # each form's own value, escaped
        invalid = CheckoutForm(data={"tax_id": "1"})
        invalid.is_valid()
        invalid.add_error("tax_id", "CPF inválido.")
        shown = FIELD.render(Context({"form": invalid}))
        assert 'aria-invalid="true"' in shown and "CPF inválido." in shown and 'class="field field-invalid"' in shown
        assert "field-invalid" not in FIELD.render(Context({"form": CheckoutForm()}))  # errors are not kept
    with translation.override("en"):
        assert '<label for="id_tax_id">CPF (for the invoice)</label>' in FIELD.render(Context({"form": CheckoutForm()}))
    settings.FISCAL_ISSUE_ON = "off"
    with translation.override("pt-br"):
        assert '<label for="id_tax_id">CPF (opcional)</label>' in FIELD.render(Context({"form": CheckoutForm()}))
