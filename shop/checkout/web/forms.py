"""Storefront checkout form: raw buyer input → `CheckoutInput`; engine messages → errors next to fields.

The form itself only bounds lengths: every business rule (required fields, CEP, CPF, options) is
decided by the checkout engine, and its messages are attached back to the fields by their BCP
JSONPath, so buyers and agents see the same rules in the same words.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import ProhibitNullCharactersValidator
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from kernel.br_validation import phone_display, tax_id_text
from kernel.json_limits import control_in
from shop.checkout.fulfillment import DEST0, M0, SEL_DEST, SEL_OPT, CepAddress, cep_digits, cep_lookup
from shop.checkout.selectors import CheckoutView
from shop.checkout.types import (
    AddressInput,
    BuyerInput,
    CheckoutMessage,
    FulfillmentInput,
    FulfillmentMethodInput,
    GroupInput,
)

# Most specific first: the first prefix that matches a message path names the field.
PATH_TO_FIELD: list[tuple[str, str]] = [
    ("$.buyer.email", "email"),
    ("$.buyer.first_name", "first_name"),
    ("$.buyer.last_name", "last_name"),
    ("$.buyer.phone_number", "phone"),
    ("$.buyer.tax_id", "tax_id"),
    (f"{DEST0}.postal_code", "cep"),
    (f"{DEST0}.address_region", "uf"),
    (f"{DEST0}.address_locality", "city"),
    (f"{DEST0}.street_address", "street"),
    (f"{DEST0}.address_country", "cep"),
    (DEST0, "cep"),
    (f"{M0}.destinations", "cep"),
    (SEL_DEST, "pickup_location"),
    (SEL_OPT, "shipping_option"),
    (f"{M0}.type", "method"),
    ("$.fulfillment", "method"),
    ("$.discounts.codes", "coupon"),
]


PHONE_HINT = _("Celular inválido: informe DDD e número, como (11) 98765-4321.")


def field_for_path(path: str) -> str | None:
    for prefix, field in PATH_TO_FIELD:
        if path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "["):
            return field
    return None


CONTROL_CHARACTER = _("Este campo tem um caractere invisível que não é aceito: apague o campo e digite de novo.")


def reject_control_characters(value: str) -> None:
    # Postgres refuses U+0000 (a 500 otherwise) and no field of a form holds a control character. The buyer reads
    # what to do, not the character's code point.
    if control_in(value):
        raise ValidationError(CONTROL_CHARACTER, code="control_character")


def _refuse_control_characters(fields: dict[str, forms.Field]) -> None:
    for field in fields.values():
        if isinstance(field, forms.CharField):
            kept = [v for v in field.validators if not isinstance(v, ProhibitNullCharactersValidator)]
            field.validators = [*kept, reject_control_characters]


class NoControlCharactersMixin:
    """Every text field of the form refuses control characters (tab and line feed aside), with one field error
    (Django's own NUL validator, which would add a second message, is replaced by this one)."""

    fields: dict[str, forms.Field]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        _refuse_control_characters(self.fields)


def cpf_needed() -> bool:
    """The shop issues an NF-e for each paid order, and an NF-e names its buyer by CPF (or CNPJ): without it the
    order's NF-e is blocked, so the storefront asks for it before paying."""
    return settings.FISCAL_ISSUE_ON != "off"


class _SharedFields(dict[str, forms.Field]):
    """A form's declared fields, deep-copied (and adjusted by `prepare`) once per `key()` value instead of once per
    form: Django's `BaseForm.__init__` deep-copies `base_fields` so that an instance may change its fields, and
    the checkout form, built on every view of the page, never does (errors, data and bound fields live on the
    form). Its seventeen copies were a twelfth of the page's CPU (issue 34). Only for a form that changes no
    field after `__init__` (tests/shop/test_checkout_form_fields.py)."""

    def __init__(self, declared: dict[str, forms.Field], key: Any, prepare: Any) -> None:
        super().__init__(declared)
        self._key = key
        self._prepare = prepare
        self._prepared: dict[object, dict[str, forms.Field]] = {}

    def __deepcopy__(self, memo: dict[int, object]) -> dict[str, forms.Field]:
        key = self._key()
        prepared = self._prepared.get(key)
        if prepared is None:  # two threads may both prepare: the same fields, either kept
            prepared = copy.deepcopy(dict(self))
            self._prepare(prepared, key)
            self._prepared[key] = prepared
        return dict(prepared)  # the form's own dict of the shared (never changed) fields


# Too long, said with the field's name (Django's "Certifique-se de que o valor tenha no máximo 100 caracteres (ele
# possui 161)." named none: QA walk, a very long name pasted on a phone).
TOO_LONG = _("no máximo %(limit_value)d caracteres (você digitou %(show_value)d).")


def _checkout_fields(fields: dict[str, forms.Field], with_cpf: object) -> None:
    _refuse_control_characters(fields)
    if with_cpf:
        fields["tax_id"].label = _("CPF (para a nota fiscal)")
    for field in fields.values():
        if isinstance(field, forms.CharField) and field.max_length is not None:
            field.error_messages = {**field.error_messages, "max_length": format_lazy("{}: {}", field.label, TOO_LONG)}


# The delivery address inputs of the form (kept on the page while the buyer tries store pickup).
ADDRESS_FIELDS = ("cep", "street", "number", "complement", "neighborhood", "city", "uf")


class CheckoutForm(forms.Form):
    email = forms.CharField(label=_("E-mail"), max_length=254, required=False)
    first_name = forms.CharField(label=_("Nome"), max_length=100, required=False)
    last_name = forms.CharField(label=_("Sobrenome"), max_length=100, required=False)
    phone = forms.CharField(label=_("Celular"), max_length=20, required=False)  # the engine's limit
    tax_id = forms.CharField(label=_("CPF (opcional)"), max_length=20, required=False)
    method = forms.ChoiceField(
        label=_("Entrega"),
        choices=[("shipping", _("Receber em casa")), ("pickup", _("Retirar na loja"))],
        required=False,
    )
    cep = forms.CharField(label=_("CEP"), max_length=12, required=False)
    street = forms.CharField(label=_("Rua"), max_length=200, required=False)
    number = forms.CharField(label=_("Número"), max_length=20, required=False)
    complement = forms.CharField(label=_("Complemento"), max_length=100, required=False)
    neighborhood = forms.CharField(label=_("Bairro"), max_length=100, required=False)
    city = forms.CharField(label=_("Cidade"), max_length=100, required=False)
    uf = forms.CharField(label=_("UF"), max_length=2, required=False)
    shipping_option = forms.CharField(label=_("Forma de entrega"), max_length=60, required=False)
    pickup_location = forms.CharField(label=_("Loja"), max_length=60, required=False)
    coupon = forms.CharField(label=_("Cupom de desconto"), max_length=200, required=False)
    # LGPD: an explicit, optional choice, unchecked unless the buyer ticked it.
    marketing_consent = forms.BooleanField(
        label=_("Quero receber ofertas e novidades da loja por e-mail."), required=False, initial=False
    )

    def buyer(self, previous: BuyerInput | None = None) -> BuyerInput:
        """The buyer as typed; the marketing answer joins the consent already given for other purposes."""
        d = self.cleaned_data
        others = tuple(item for item in ((previous.consent or ()) if previous else ()) if item[0] != "marketing")
        return BuyerInput(
            first_name=d["first_name"],
            last_name=d["last_name"],
            email=d["email"],
            phone_number=d["phone"],
            tax_id=d["tax_id"],
            consent=(*others, ("marketing", bool(d.get("marketing_consent")))),
            consent_captured_by="storefront",
        )

    def autofill_from_cep(self, *, previous_cep: str, asked: bool) -> None:
        """Look the CEP up when it is new or "Calcular frete" was pressed, and fill what it tells (works without JS).

        The provider call (short timeout, cached) happens before any transaction, so it never holds a lock.
        """
        digits = cep_digits(self.cleaned_data.get("cep", ""))
        if digits is None or self.cleaned_data.get("method") == "pickup":
            return
        new_cep = digits != cep_digits(previous_cep or "")
        if not asked and not new_cep:
            return
        address = cep_lookup(digits)
        if address is not None and address.found:
            self.autofill_address(address, replace_uf=new_cep)

    def autofill_address(self, address: CepAddress, *, replace_uf: bool = True) -> None:
        """Fill street, bairro and city the buyer left empty from a CEP lookup (also without JS); the UF too,
        replacing the old one when the CEP is new (a UF typed for the same CEP stays, and the engine checks it)."""
        values = {"street": address.street, "neighborhood": address.neighborhood, "city": address.city}
        changed = {name: value for name, value in values.items() if value and not self.cleaned_data[name].strip()}
        if address.uf and (replace_uf or not self.cleaned_data["uf"].strip()):
            changed["uf"] = address.uf
        if not changed:
            return
        self.cleaned_data.update(changed)
        self.data = self.data.copy()
        for name, value in changed.items():
            self.data[self.add_prefix(name)] = value

    def clean_coupon(self) -> str:
        # The engine's limits (`$.discounts.codes`): at most 20 codes of at most 40 characters each.
        value: str = self.cleaned_data["coupon"]
        codes = self._split_codes(value)
        if len(codes) > 20:
            raise ValidationError(_("No máximo 20 cupons."), code="too_many")
        if any(len(code) > 40 for code in codes):
            raise ValidationError(_("Cada cupom tem no máximo 40 caracteres."), code="too_long")
        return value

    @staticmethod
    def _split_codes(value: str) -> tuple[str, ...]:
        return tuple(code.strip() for code in value.replace(";", ",").split(",") if code.strip())

    def discount_codes(self, applied: tuple[str, ...] = (), remove: str = "") -> tuple[str, ...]:
        """The codes already applied (less the one the buyer removed) and the new ones typed, each once.

        The field is for a new code: typing a second (wrong) one used to replace the applied one.
        """
        codes: dict[str, str] = {}
        for code in (*applied, *self._split_codes(self.cleaned_data["coupon"])):
            if code.upper() != remove.strip().upper():
                codes.setdefault(code.upper(), code)
        return tuple(codes.values())

    def fulfillment(
        self, *, pickup_option_id: str, with_option: bool = True, previous_cep: str = ""
    ) -> FulfillmentInput:
        d = dict(self.cleaned_data)
        if previous_cep and cep_digits(d["cep"]) != cep_digits(previous_cep):
            # A new CEP: the UF shown was the old CEP's; the engine fills the new one from the CEP.
            d["uf"] = ""
        method = d["method"] or "shipping"
        if method == "pickup":
            location = d["pickup_location"] or None
            option = pickup_option_id if location else None
            return FulfillmentInput(
                methods=(
                    FulfillmentMethodInput(
                        type="pickup", selected_destination_id=location, groups=(GroupInput(selected_option_id=option),)
                    ),
                )
            )
        address_given = any(d[f] for f in ("cep", "street", "number", "city"))
        option = d["shipping_option"] if with_option else ""
        destinations = (
            (
                AddressInput(
                    first_name=d["first_name"],
                    last_name=d["last_name"],
                    postal_code=d["cep"],
                    address_region=d["uf"],
                    address_locality=d["city"],
                    street=d["street"],
                    number=d["number"],
                    complement=d["complement"],
                    neighborhood=d["neighborhood"],
                ),
            )
            if address_given
            else ()
        )
        return FulfillmentInput(
            methods=(
                FulfillmentMethodInput(
                    type="shipping", destinations=destinations, groups=(GroupInput(selected_option_id=option or None),)
                ),
            )
        )

    def attach_messages(
        self,
        messages: list[CheckoutMessage] | tuple[CheckoutMessage, ...],
        *,
        filled_only: bool = False,
        only_fields: tuple[str, ...] | None = None,
    ) -> list[CheckoutMessage]:
        """Put each error/warning next to its field; returns those that belong to no field.

        `filled_only` ("Calcular frete"): the buyer is midway, so fields left empty and the option not chosen
        yet are not reported; the CEP, which that button needs, always is. The final submit shows everything.
        `only_fields` ("Aplicar cupom"): report the messages of these fields and nothing else.
        """
        general: list[CheckoutMessage] = []
        for message in messages:
            if message.type == "info":
                continue
            field = field_for_path(message.path)
            if only_fields is not None and field not in only_fields:
                continue
            if field == "phone" and message.code == "field_invalid":
                # The engine's text shows E.164 for agents; a buyer types the number the Brazilian way.
                message = replace(message, content=str(PHONE_HINT))
            if field == "street" and message.code == "field_required" and self._filled("street"):
                field = "number"  # "Informe o número": BCP has one street line; the storefront a number field
            if field == "shipping_option" and self.data.get(self.add_prefix("method")) == "pickup":
                field = "pickup_location"  # a pickup's option is the store's: the buyer chose a store, not a rate
            if field is None or field not in self.fields:
                general.append(message)
                continue
            if filled_only and field != "cep" and (field == "shipping_option" or not self._filled(field)):
                continue
            if message.content not in self.errors.get(field, []):
                self.add_error(field, message.content)
        return general

    def _filled(self, field: str) -> bool:
        return bool(str(self.data.get(self.add_prefix(field), "")).strip())


# Control characters refused and the CPF label as NoControlCharactersMixin and the CPF setting say, once per value
# of the setting (tests change it); the form must not change its fields after construction.
CheckoutForm.base_fields = _SharedFields(CheckoutForm.base_fields, cpf_needed, _checkout_fields)


def standing_codes(codes: Iterable[str], messages: Iterable[CheckoutMessage]) -> tuple[str, ...]:
    """The checkout's coupon codes the engine did not refuse (a refused one is reported once, then dropped)."""
    refused = {m.path for m in messages if m.path.startswith("$.discounts.codes[") and m.type != "info"}
    return tuple(code for i, code in enumerate(codes) if f"$.discounts.codes[{i}]" not in refused)


def initial_from_view(view: CheckoutView) -> dict[str, str]:
    checkout = view.checkout
    return {
        "email": checkout.buyer_email,
        "first_name": checkout.buyer_first_name,
        "last_name": checkout.buyer_last_name,
        "phone": phone_display(checkout.buyer_phone),  # stored E.164, shown as a Brazilian buyer types it
        "tax_id": tax_id_text(checkout.buyer_tax_id),  # stored as digits, shown as typed: 529.982.247-25
        "method": checkout.fulfillment_type or "shipping",
        "cep": checkout.ship_cep,
        "street": checkout.ship_street,
        "number": checkout.ship_number,
        "complement": checkout.ship_complement,
        "neighborhood": checkout.ship_neighborhood,
        "city": checkout.ship_city,
        "uf": checkout.ship_uf,
        "shipping_option": checkout.selected_option_id if checkout.fulfillment_type == "shipping" else "",
        "pickup_location": checkout.selected_destination_id if checkout.fulfillment_type == "pickup" else "",
        "coupon": "",  # for a new code; the applied ones are listed (standing_codes), each with "Remover"
        "marketing_consent": dict(view.buyer.consent or ()).get("marketing", False) if view.buyer else False,
    }
