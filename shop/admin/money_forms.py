"""Admin ModelForms whose centavos fields are typed and shown in reais ("35,90"), for any model."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django import forms
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from kernel.money import MoneyField, format_brl
from shop.admin.br_fields import UF_INVALID
from shop.checkout.fulfillment import UFS
from shop.models import Checkout

COUPON_CODE = re.compile(r"[A-Z0-9_-]+")

CHECKOUT_STATUS_LABELS = dict(Checkout.STATUS_CHOICES)  # BCP's status codes in the merchant's words


def money_model_form(
    model: type[models.Model],
    *money_fields: str,
    rules: Callable[[forms.ModelForm, dict[str, Any]], None] | None = None,
    fields: dict[str, forms.Field] | None = None,
) -> type[forms.ModelForm]:
    """A ModelForm of `model` where each named integer-centavos field is a MoneyField labelled in R$.

    `rules` checks the model's constraints first, on the right field, so nobody reads a constraint name;
    `fields` replaces other form fields (e.g. a CEP typed as "01000-000").
    """
    attrs: dict[str, Any] = dict(fields or {})
    for name in money_fields:
        field = model._meta.get_field(name)
        label = str(field.verbose_name).replace(" (centavos)", "")
        attrs[name] = MoneyField(
            label=f"{label[:1].upper()}{label[1:]} (R$)",
            required=not (field.null or field.has_default()),
            help_text=field.help_text,
        )

    def clean(self: forms.ModelForm) -> dict[str, Any]:
        cleaned = forms.ModelForm.clean(self)
        for name in money_fields:
            field = model._meta.get_field(name)
            if cleaned.get(name) is None and field.has_default() and not field.null:
                cleaned[name] = field.get_default()  # an empty optional amount means its default (e.g. 0)
        if rules is not None:
            rules(self, cleaned)
        return cleaned

    meta = type("Meta", (), {"model": model, "exclude": ()})
    return type(f"{model.__name__}MoneyForm", (forms.ModelForm,), {**attrs, "Meta": meta, "clean": clean})


def brl_column(name: str, description: str) -> Any:
    """A changelist column showing an integer-centavos field as "R$ 1.234,56"."""

    def column(self: Any, obj: Any) -> str:
        value = getattr(obj, name)
        return format_brl(value) if value is not None else "—"

    column.short_description = description  # type: ignore[attr-defined]
    column.admin_order_field = name  # type: ignore[attr-defined]
    return column


def coupon_rules(form: forms.ModelForm, cleaned: dict[str, Any]) -> None:
    """The rule of the `coupon_kind_value` constraint, said on the field."""
    if cleaned.get("code"):
        # Coupon.save() upper-cases the code: the unique check must see it so ("maria10" beside "MARIA10" was a 500).
        cleaned["code"] = cleaned["code"].strip().upper()
        # A buyer types it: a space or a sign inside ("QA 5!") is a code nobody types back the same way.
        if not COUPON_CODE.fullmatch(cleaned["code"]):
            form.add_error(
                "code", _("Use só letras sem acento, números, hífen ou sublinhado, sem espaços (ex.: BEMVINDO10).")
            )
    starts, ends = cleaned.get("starts_at"), cleaned.get("ends_at")
    if starts is not None and ends is not None and ends <= starts:
        form.add_error("ends_at", _("O fim da validade deve ser depois do início."))
    elif ends is not None and "ends_at" in form.changed_data and ends <= timezone.now():
        # A mistyped year or month saved a coupon no buyer could use; an old coupon's past end still saves.
        form.add_error(
            "ends_at",
            _("O fim da validade (%(ends)s) já passou: o cupom não valeria para ninguém. Escolha uma data futura.")
            % {"ends": timezone.localtime(ends).strftime("%d/%m/%Y %H:%M")},
        )
    kind, percent, amount = cleaned.get("kind"), cleaned.get("percent"), cleaned.get("amount")
    if kind == "percent":
        if percent is None or not 1 <= percent <= 100:
            form.add_error("percent", _("Informe um percentual de 1 a 100."))
        if amount is not None:
            form.add_error("amount", _("Cupom percentual não tem valor em reais: deixe vazio."))
    elif kind == "fixed":
        if not amount:
            form.add_error("amount", _("Informe o valor do desconto, ex.: 10,00."))
        if percent is not None:
            form.add_error("percent", _("Cupom de valor fixo não tem percentual: deixe vazio."))


def shipping_rules(form: forms.ModelForm, cleaned: dict[str, Any]) -> None:
    days_min, days_max = cleaned.get("days_min"), cleaned.get("days_max")
    if days_min is not None and days_max is not None and days_max < days_min:
        form.add_error("days_max", _("O prazo máximo não pode ser menor que o mínimo."))


def shipping_rate_rules(form: forms.ModelForm, cleaned: dict[str, Any]) -> None:
    """One UF or one CEP range per rate (constraint shipping_rate_uf_xor_cep_range), said on the field: the
    merchant read 'Restrição "shipping_rate_uf_xor_cep_range" foi violada.'"""
    shipping_rules(form, cleaned)
    uf = (cleaned.get("uf") or "").strip().upper()
    start, end = cleaned.get("cep_start"), cleaned.get("cep_end")
    if uf:
        cleaned["uf"] = uf
        if uf not in UFS:
            form.add_error("uf", UF_INVALID)
        elif start is not None or end is not None:
            form.add_error("uf", _("Informe a UF ou a faixa de CEP, não as duas."))
    elif start is None and end is None:
        form.add_error("uf", _("Informe a UF ou a faixa de CEP (inicial e final)."))
    elif start is None or end is None:
        form.add_error("cep_start" if start is None else "cep_end", _("Informe o CEP inicial e o final da faixa."))
    elif end < start:
        form.add_error("cep_end", _("O CEP final não pode ser menor que o inicial."))
