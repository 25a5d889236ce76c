""" "Nova venda": staff enter a sale made on WhatsApp or at the counter. Everything goes through the
checkout engine (shop.checkout.services) like any other checkout: the buyer then pays by the Pix link (the
storefront Pix page, same settlement), or staff record a payment received elsewhere."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.admin import AdminSite
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from kernel.br_validation import phone_normalize, phone_valid, tax_id_invalid, tax_id_normalize, tax_id_valid
from kernel.money import format_brl
from orders.models import Order
from payments.due import local_date
from payments.selectors import pix_charge_active_for_reference
from shop.admin.br_fields import check_cep_in_uf, clean_cep, clean_uf
from shop.checkout.selectors import checkout_continue_url
from shop.checkout.services import (
    CheckoutCreateImpossible,
    checkout_cancel,
    checkout_complete,
    checkout_complete_paid_elsewhere,
    checkout_complete_pix_due,
    checkout_create,
)
from shop.checkout.types import (
    STATUS_COMPLETED,
    STATUS_IN_PROGRESS,
    STATUS_READY,
    AddressInput,
    BuyerInput,
    CheckoutInput,
    CheckoutInputError,
    CheckoutMessage,
    CompleteInput,
    FulfillmentInput,
    FulfillmentMethodInput,
    GroupInput,
    InstrumentInput,
    LineInput,
    PaymentInput,
)
from shop.models import PickupLocation, ShippingMethod, Variant

# Lines offered; the page shows the first one and those filled, "Adicionar item" reveals the next.
ITEM_ROWS = 20
DATE = forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")
PAID_METHODS = [
    ("dinheiro", _("Dinheiro")),
    ("transferencia", _("Transferência bancária")),
    ("maquininha", _("Cartão na maquininha")),
    ("pix_direto", _("Pix direto na conta")),
]
# Engine message paths → the field that shows them.
_PATHS = {
    "$.buyer.email": "email",
    "$.buyer.first_name": "first_name",
    "$.buyer.last_name": "last_name",
    "$.buyer.phone_number": "phone",
    "$.buyer.tax_id": "tax_id",
    "$.discounts.codes[0]": "coupon",
}
# The last part of an engine message's address path → the field of this form that shows it (CEP under CEP).
_ADDRESS_PATHS = {
    "postal_code": "postal_code",
    "street_address": "street",
    "street": "street",
    "number": "number",
    "extended_address": "complement",
    "complement": "complement",
    "neighborhood": "neighborhood",
    "address_locality": "city",
    "address_region": "state",
}
PHONE_HINT = _("Ex.: (11) 98765-4321")
# Which fields each choice needs (the page shows only those; `clean` requires them only then).
DELIVERY_FIELDS = {
    "pickup": ("location",),
    "shipping": ("option", "postal_code", "street", "number", "complement", "neighborhood", "city", "state"),
}
PAYMENT_FIELDS = {
    "paid": ("paid_method", "paid_reason"),
    "pix_due": (
        "due_date",
        "due_validity_days",
        "due_fine_percent",
        "due_interest_percent",
        "due_discount_percent",
        "due_discount_until",
    ),
}


class ManualOrderForm(forms.Form):
    required_css_class = "required"
    first_name = forms.CharField(label=_("Nome"), max_length=100)
    last_name = forms.CharField(label=_("Sobrenome"), max_length=100)
    email = forms.EmailField(label=_("E-mail"), help_text=_("O comprador recebe o pedido e o link por e-mail."))
    phone = forms.CharField(
        label=_("Celular/WhatsApp"),
        max_length=20,
        required=False,
        help_text=PHONE_HINT,
        widget=forms.TextInput(attrs={"inputmode": "tel", "autocomplete": "off", "placeholder": "(11) 98765-4321"}),
    )
    tax_id = forms.CharField(
        label=_("CPF/CNPJ"),
        max_length=20,
        required=False,
        help_text=_("Obrigatório para Pix com vencimento."),
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "off"}),
    )
    delivery = forms.ChoiceField(label=_("Entrega"), choices=[("pickup", _("Retirada")), ("shipping", _("Envio"))])
    location = forms.ChoiceField(label=_("Local de retirada"), required=False)
    option = forms.ChoiceField(label=_("Forma de envio"), required=False)
    postal_code = forms.CharField(
        label=_("CEP"),
        max_length=9,
        required=False,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "placeholder": "00000-000"}),
    )
    street = forms.CharField(label=_("Rua"), max_length=200, required=False)
    number = forms.CharField(label=_("Número"), max_length=20, required=False)
    complement = forms.CharField(label=_("Complemento"), max_length=100, required=False)
    neighborhood = forms.CharField(label=_("Bairro"), max_length=100, required=False)
    city = forms.CharField(label=_("Cidade"), max_length=100, required=False)
    state = forms.CharField(label=_("UF"), max_length=2, required=False)
    coupon = forms.CharField(label=_("Cupom de desconto"), max_length=40, required=False)
    payment = forms.ChoiceField(
        label=_("Pagamento"),
        choices=[
            ("pix", _("Enviar link Pix ao comprador")),
            ("pix_due", _("Pix com vencimento (pagar até a data, depois com multa e juros)")),
            ("paid", _("Já pago (fora da loja)")),
        ],
        widget=forms.RadioSelect,
    )
    paid_method = forms.ChoiceField(label=_("Como foi pago"), choices=PAID_METHODS, required=False)
    paid_reason = forms.CharField(label=_("Observação do pagamento"), max_length=200, required=False)
    # Pix com vencimento (API Pix `cobv`): due date, days still payable after it, fine, monthly interest, discount.
    due_date = forms.DateField(label=_("Vencimento"), required=False, widget=DATE)
    due_validity_days = forms.IntegerField(
        label=_("Aceita pagamento até (dias após o vencimento)"), min_value=0, max_value=365, initial=30, required=False
    )
    due_fine_percent = forms.DecimalField(
        label=_("Multa por atraso (%)"), min_value=0, max_value=100, decimal_places=2, initial=2, required=False
    )
    due_interest_percent = forms.DecimalField(
        label=_("Juros por atraso (% ao mês)"), min_value=0, max_value=100, decimal_places=2, initial=1, required=False
    )
    due_discount_percent = forms.DecimalField(
        label=_("Desconto por pagamento antecipado (%)"), min_value=0, max_value=100, decimal_places=2, required=False
    )
    due_discount_until = forms.DateField(label=_("Desconto válido até"), required=False, widget=DATE)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # One query: the sellable variants, for the product search (name or SKU) and the price shown per line.
        self.variants = {
            v.sku: v for v in Variant.objects.filter(active=True, product__active=True).select_related("product")
        }
        for row in range(ITEM_ROWS):
            self.fields[f"sku_{row}"] = forms.CharField(
                label=_("Produto %(n)d") % {"n": row + 1},
                max_length=64,
                required=False,
                widget=forms.TextInput(
                    attrs={
                        "list": "manual-order-variants",
                        "autocomplete": "off",
                        "placeholder": _("nome ou SKU"),
                        "class": "manual-line-sku",
                    }
                ),
            )
            self.fields[f"qty_{row}"] = forms.IntegerField(
                label=_("Quantidade %(n)d") % {"n": row + 1},
                min_value=1,
                max_value=999,
                required=False,
                widget=forms.NumberInput(attrs={"class": "manual-line-qty", "inputmode": "numeric"}),
            )
        self.fields["location"].choices = [("", "—")] + [
            (loc.public_id, loc.name) for loc in PickupLocation.objects.filter(active=True)
        ]
        self.fields["option"].choices = [("", "—")] + [
            (m.code, m.title) for m in ShippingMethod.objects.filter(active=True, kind="shipping")
        ]
        # Required only for one choice: the label says so (the page shows the field only for that choice).
        for fields in (DELIVERY_FIELDS["pickup"], PAYMENT_FIELDS["paid"], ("due_date",)):
            for name in fields:
                self.fields[name].required_when_shown = True  # type: ignore[attr-defined]
        for name in ("option", "postal_code", "street", "number", "city", "state"):
            self.fields[name].required_when_shown = True  # type: ignore[attr-defined]

    def variant_choices(self) -> list[dict[str, Any]]:
        """The product search's options and the prices the page adds up (JSON for the page's script)."""
        return [
            {
                "sku": sku,
                "label": f"{variant} — {format_brl(variant.price)}",
                "price": variant.price,
                "stock": variant.stock,
                "backorder": variant.allow_backorder,
            }
            for sku, variant in sorted(self.variants.items(), key=lambda item: str(item[1]))
        ]

    def item_rows(self) -> list[tuple[Any, Any]]:
        return [(self[f"sku_{row}"], self[f"qty_{row}"]) for row in range(ITEM_ROWS)]

    def item_lines(self) -> list[LineInput]:
        lines = []
        for row in range(ITEM_ROWS):
            sku, quantity = self.cleaned_data.get(f"sku_{row}"), self.cleaned_data.get(f"qty_{row}")
            if sku:
                lines.append(LineInput(sku, quantity or 1))
        return lines

    def clean(self) -> dict[str, Any]:
        """Every problem at once: the engine's checks of the buyer, address and stock are made here too, so staff
        never fix one round of errors to meet the next."""
        cleaned = super().clean()
        self._clean_lines(cleaned)
        self._clean_buyer(cleaned)
        if cleaned.get("delivery") == "pickup" and not cleaned.get("location"):
            self.add_error("location", _("Escolha o local de retirada."))
        if cleaned.get("delivery") == "shipping":
            self._clean_address(cleaned)
        if cleaned.get("payment") == "pix_due":
            self._clean_due(cleaned)
        if cleaned.get("payment") == "paid":
            if not cleaned.get("paid_method"):
                self.add_error("paid_method", _("Diga como foi pago."))
            if not (cleaned.get("paid_reason") or "").strip():
                self.add_error("paid_reason", _("Conte o motivo (ex.: pago em dinheiro no balcão)."))
        return cleaned

    def _clean_lines(self, cleaned: dict[str, Any]) -> None:
        seen: dict[str, int] = {}
        for row in range(ITEM_ROWS):
            typed = (cleaned.get(f"sku_{row}") or "").strip()
            if not typed:
                continue
            variant = self.variants.get(typed) or self.variants.get(typed.upper())
            if variant is None:
                self.add_error(
                    f"sku_{row}",
                    _("Produto “%(typed)s” não encontrado: digite parte do nome ou o SKU e escolha na lista.")
                    % {"typed": typed[:40]},
                )
                continue
            cleaned[f"sku_{row}"] = variant.sku
            if variant.sku in seen:
                self.add_error(
                    f"sku_{row}",
                    _("Este produto já está no item %(n)d: some as quantidades lá.") % {"n": seen[variant.sku] + 1},
                )
                continue
            seen[variant.sku] = row
            quantity = cleaned.get(f"qty_{row}") or 1
            if quantity > variant.stock and not variant.allow_backorder:
                message = _("Esgotado.") if variant.stock <= 0 else _("Só há %(n)d em estoque.") % {"n": variant.stock}
                self.add_error(f"qty_{row}" if variant.stock > 0 else f"sku_{row}", message)
        if not seen and not any(f"sku_{row}" in self.errors for row in range(ITEM_ROWS)):
            self.add_error("sku_0", _("Escolha pelo menos um produto."))

    def _clean_buyer(self, cleaned: dict[str, Any]) -> None:
        for name, message in (
            ("first_name", _("Informe o nome com letras.")),
            ("last_name", _("Informe o sobrenome com letras.")),
        ):
            value = cleaned.get(name)
            if value and not any(ch.isalpha() for ch in value):
                self.add_error(name, message)
        phone = (cleaned.get("phone") or "").strip()
        if phone and not phone_valid(phone_normalize(phone)):
            self.add_error("phone", _("Celular inválido: informe DDD e número, ex.: (11) 98765-4321."))
        tax_id = (cleaned.get("tax_id") or "").strip()
        if tax_id and not tax_id_valid(tax_id_normalize(tax_id)):
            self.add_error("tax_id", tax_id_invalid())

    def _clean_address(self, cleaned: dict[str, Any]) -> None:
        for name in ("option", "postal_code", "street", "number", "city", "state"):
            if not cleaned.get(name):
                self.add_error(name, _("Obrigatório para envio."))
        for name, clean in (("postal_code", clean_cep), ("state", clean_uf)):
            if cleaned.get(name):
                try:
                    cleaned[name] = clean(cleaned[name])
                except forms.ValidationError as error:
                    self.add_error(name, error)
        if "postal_code" not in self.errors and "state" not in self.errors:
            check_cep_in_uf(self, cleaned, cep="postal_code", uf="state")

    def _clean_due(self, cleaned: dict[str, Any]) -> None:
        today = local_date(timezone.now())
        due = cleaned.get("due_date")
        if due is None:
            self.add_error("due_date", _("Informe o vencimento."))
        elif due < today:
            self.add_error("due_date", _("O vencimento não pode ser no passado."))
        if not (cleaned.get("tax_id") or "").strip():
            self.add_error("tax_id", _("O Pix com vencimento exige o CPF/CNPJ do comprador."))
        until, percent = cleaned.get("due_discount_until"), cleaned.get("due_discount_percent")
        if percent and until is None:
            self.add_error("due_discount_until", _("Diga até quando vale o desconto."))
        if until is not None and due is not None and not today <= until <= due:
            self.add_error("due_discount_until", _("O desconto vale de hoje até o vencimento, no máximo."))

    def due_terms(self) -> dict[str, Any]:
        """Keyword arguments of `checkout_complete_pix_due` (percentages as basis points)."""
        data = self.cleaned_data

        def bp(name: str) -> int:
            return int((data.get(name) or Decimal("0")) * 100)

        discount = bp("due_discount_percent")
        return {
            "due_date": data["due_date"],
            "validity_days": 30 if data.get("due_validity_days") is None else data["due_validity_days"],
            "fine_bp": bp("due_fine_percent"),
            "interest_bp": bp("due_interest_percent"),
            "discount_bp": discount,
            "discount_until": data.get("due_discount_until") if discount else None,
        }

    def checkout_input(self) -> CheckoutInput:
        data = self.cleaned_data
        phone = phone_normalize(data.get("phone", ""))
        buyer = BuyerInput(data["first_name"], data["last_name"], data["email"], phone, data.get("tax_id", ""))
        if data["delivery"] == "pickup":
            method = FulfillmentMethodInput(
                type="pickup",
                selected_destination_id=data["location"],
                groups=(GroupInput(selected_option_id=_pickup_option()),),
            )
        else:
            address = AddressInput(
                first_name=data["first_name"],
                last_name=data["last_name"],
                street=data["street"],
                number=data["number"],
                complement=data.get("complement", ""),
                neighborhood=data.get("neighborhood", ""),
                address_locality=data["city"],
                address_region=data["state"].upper(),
                postal_code=data["postal_code"],
                address_country="BR",
            )
            method = FulfillmentMethodInput(
                type="shipping", destinations=(address,), groups=(GroupInput(selected_option_id=data["option"]),)
            )
        codes = (data["coupon"].strip(),) if data.get("coupon", "").strip() else ()
        # A Pix link selects Pix now, so the total staff see is the Pix total (the shop's Pix discount included)
        # and the charge is issued for it at once; the other ways choose their instrument at completion.
        payment = PaymentInput(instruments=(_pix(),)) if data["payment"] == "pix" else None
        return CheckoutInput(
            lines=tuple(self.item_lines()),
            buyer=buyer,
            fulfillment=FulfillmentInput(methods=(method,)),
            discount_codes=codes,
            payment=payment,
        )

    def attach(self, errors: list[CheckoutMessage]) -> None:
        for message in errors:
            field = _PATHS.get(message.path or "")
            if field is None and (message.path or "").startswith("$.line_items["):
                field = f"sku_{int(message.path.split('[')[1].split(']')[0])}"
            if field is None and (message.path or "").startswith("$.fulfillment"):
                if self.cleaned_data.get("delivery") == "pickup":
                    field = "location"
                else:  # under the address field it names: a CEP problem under CEP
                    last = (message.path or "").rsplit(".", 1)[-1]
                    field = _ADDRESS_PATHS.get(last, "option" if "option" in last or "groups" in last else "street")
            self.add_error(field if field in self.fields else None, message.content)


def _pix() -> InstrumentInput:
    return InstrumentInput(id="instr_manual", handler_id=settings.PIX_HANDLER_ID, type="pix")


def _pickup_option() -> str:
    method = ShippingMethod.objects.filter(active=True, kind="pickup").first()
    return method.code if method else "retirada"


def manual_order_view(site: AdminSite, request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm("orders.add_order") and not request.user.is_superuser:
        raise PermissionDenied
    form = ManualOrderForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        actor = request.user.get_username()
        checkout = None
        try:
            result = checkout_create(data=form.checkout_input(), session_key=f"admin:{request.user.pk}")
        except CheckoutInputError as error:
            form.add_error(None, error.content)
        except CheckoutCreateImpossible as impossible:  # every item sold out or unknown: nothing was created
            form.attach(impossible.messages)
        else:
            checkout = result.checkout
            # Staff see every adjustment the engine made (quantity capped to stock, coupon refused) as a
            # refusal: a sale typed by a person must not silently differ from what they typed.
            errors = [
                m
                for m in result.messages
                if m.type == "error"
                or (m.type == "warning" and (m.path or "").startswith(("$.line_items", "$.discounts")))
            ]
            if checkout.status != STATUS_READY or errors:
                form.attach(errors or list(result.messages))
            elif form.cleaned_data["payment"] == "paid":
                done = checkout_complete_paid_elsewhere(
                    checkout_id=checkout.public_id,
                    method=form.cleaned_data["paid_method"],
                    reason=form.cleaned_data["paid_reason"],
                    actor=actor,
                )
                if done.checkout.status == STATUS_COMPLETED:
                    messages.success(request, _("Venda registrada e paga: pedido criado."))
                    return HttpResponseRedirect(_order_change_url(done.checkout.order_id))
                form.attach([m for m in done.messages if m.type == "error"])
            else:
                if form.cleaned_data["payment"] == "pix_due":
                    done = checkout_complete_pix_due(checkout_id=checkout.public_id, **form.due_terms())
                else:
                    done = checkout_complete(
                        checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(_pix(),)))
                    )
                if done.checkout.status == STATUS_IN_PROGRESS:
                    link = checkout_continue_url(checkout, page="checkout:pix")
                    return TemplateResponse(
                        request,
                        "admin/shop/manual_order_link.html",
                        {
                            **site.each_context(request),
                            "title": _("Link Pix da venda"),
                            "link": link,
                            "checkout": done.checkout,
                            "charge": pix_charge_active_for_reference(checkout.public_id),
                        },
                    )
                form.attach([m for m in done.messages if m.type == "error"])
        if form.errors and checkout is not None:
            # A refused sale leaves no open checkout behind (no stock held, not an "abandoned cart").
            checkout_cancel(checkout_id=checkout.public_id)
    context = {
        **site.each_context(request),
        "title": _("Nova venda (WhatsApp, balcão)"),
        "form": form,
        "groups": _groups(form),
        "variants": form.variant_choices(),
    }
    return TemplateResponse(request, "admin/shop/manual_order.html", context)


def _groups(form: ManualOrderForm) -> list[dict[str, Any]]:
    """The page's sections; `when` = "field=value" shows a section only for that choice (the page's script)."""

    def fields(*names: str) -> list[Any]:
        return [form[name] for name in names]

    groups: list[dict[str, Any]] = [
        {
            "id": "buyer",
            "title": _("Comprador"),
            "fields": fields("first_name", "last_name", "email", "phone", "tax_id"),
        },
        {"id": "items", "title": _("Itens"), "is_lines": True},
        {"id": "delivery", "title": _("Entrega"), "fields": fields("delivery")},
    ]
    groups += [
        {"id": f"delivery-{choice}", "when": f"delivery={choice}", "fields": fields(*names)}
        for choice, names in DELIVERY_FIELDS.items()
    ]
    groups += [
        {"id": "coupon", "fields": fields("coupon")},
        {"id": "payment", "title": _("Pagamento"), "fields": fields("payment")},
    ]
    groups += [
        {"id": f"payment-{choice}", "when": f"payment={choice}", "fields": fields(*names)}
        for choice, names in PAYMENT_FIELDS.items()
    ]
    return groups


def _order_change_url(order_public_id: str) -> str:
    order = Order.objects.get(public_id=order_public_id)
    return reverse("admin:orders_order_change", args=[order.pk])
