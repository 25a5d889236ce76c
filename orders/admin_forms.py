"""Forms of the admin action pages (register shipment, mark delivered, refund, cancel, note, resend e-mail)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from django import forms
from django.core.validators import MaxValueValidator
from django.utils import formats, timezone
from django.utils.translation import gettext_lazy as _

from kernel.br_validation import phone_display, tax_id_text
from kernel.cep import cep_digits
from kernel.money import MoneyField, format_brl
from orders.errors import OrderError
from orders.extras import destination_notes
from orders.labels import fulfillment_method_label, line_items_text
from orders.models import EmailKind, FulfillmentExpectation, Order, OrderLine, ReturnCondition, ReturnRequest
from orders.selectors import failed_refunds_to_pay_outside
from orders.services._common import refund_count, refundable_amount
from orders.services.adjustments import refund_goes_through_psp
from orders.services.notes import DESTINATION_FIELDS, destination_clean, destination_refusal, email_kinds_sent
from orders.services.returns import (
    return_refund_includes_freight,
    return_refund_suggestion,
    return_units_net_values,
)
from orders.summary import current_tracking, expectation_units_to_send
from orders.types import LineQuantity


class OrderActionForm(forms.Form):
    """Base: knows its order; puts a service OrderError (its message is the staff's words) on the field it names."""

    line_limit_attr: str = ""  # "shipped" / "delivered": which quantity per line is still possible
    # A form whose choice is the action itself names it on its buttons: `submit_field` is posted with the value of
    # the pressed one of `submit_buttons` ((value, label)); empty: one button titled by the action.
    submit_field: str = ""
    submit_buttons: Sequence[tuple[str, str]] = ()
    required_css_class = "required"  # bold labels, like the rest of the admin

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.order = order
        self.lines: list[OrderLine] = list(order.lines.all()) if self.line_limit_attr else []
        in_transit = any(line.quantity_shipped > line.quantity_delivered for line in self.lines)
        for line in self.lines:
            if self.line_limit_attr == "returnable":
                remaining = line.quantity_delivered  # only what reached the buyer can come back
            elif self.line_limit_attr == "split":
                remaining = line.quantity_total
            else:
                remaining = max(0, line.quantity_total - getattr(line, f"quantity_{self.line_limit_attr}"))
            if self.line_limit_attr == "delivered" and order.fulfillment_method == "shipping":
                remaining = max(0, line.quantity_shipped - line.quantity_delivered)  # only what was shipped
            suggested = 0 if self.line_limit_attr in ("returnable", "split") else remaining
            if self.line_limit_attr == "delivered" and in_transit:
                suggested = line.quantity_shipped - line.quantity_delivered  # deliver what is on its way
            self.fields[f"qty_{line.public_id}"] = forms.IntegerField(
                label=f"{line.title} ({line.sku})",
                min_value=0,
                max_value=remaining,
                initial=suggested,
                required=False,
                help_text=_("até %(n)s") % {"n": remaining},
            )

    def full_clean(self) -> None:
        self._name_required_fields()  # here, not in __init__: a subclass may relabel a field after it
        super().full_clean()

    def _name_required_fields(self) -> None:
        """A required field left empty says which one and what to do: Django's "Este campo é obrigatório." under
        an unticked "Confirmo que o comprador retirou o pedido" read as if something else were missing (QA walk)."""
        default = str(forms.Field.default_error_messages["required"])
        for field in self.fields.values():
            if not field.required or str(field.error_messages.get("required", "")) != default:
                continue
            label = str(field.label or "")
            if isinstance(field, forms.BooleanField):
                message = _("Marque “%(label)s” para continuar.") % {"label": label}
            elif isinstance(field, forms.ChoiceField):
                message = _("Escolha “%(label)s”.") % {"label": label}
            else:
                message = _("Preencha “%(label)s”.") % {"label": label}
            field.error_messages["required"] = message

    def line_quantities(self) -> list[LineQuantity]:
        result = []
        for line in self.lines:
            quantity = self.cleaned_data.get(f"qty_{line.public_id}") or 0
            if quantity > 0:
                result.append(LineQuantity(line.public_id, quantity))
        return result

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.lines and not self.errors and not self.line_quantities():
            raise forms.ValidationError(_("Informe a quantidade de pelo menos um item."))
        return cleaned

    def add_service_error(self, error: OrderError) -> None:
        field = error.field
        if field.startswith("lines[") and "]" in field:
            index = int(field[6 : field.index("]")])
            chosen = self.line_quantities()
            if index < len(chosen):
                field = f"qty_{chosen[index].line_id}"
        self.add_error(field if field in self.fields else None, error.message)


class ShipmentForm(OrderActionForm):
    line_limit_attr = "shipped"
    tracking_number = forms.CharField(
        label=_("Código de rastreio"),
        max_length=64,
        required=False,
        help_text=_("Obrigatório nos Correios; vazio numa entrega sem rastreio (motoboy, entrega própria)."),
    )
    carrier = forms.CharField(label=_("Transportadora"), max_length=80, required=False)
    tracking_url = forms.URLField(
        label=_("Link de rastreio"),
        required=False,
        assume_scheme="https",
        help_text=_("Vazio: para os Correios o link é montado a partir do código."),
    )
    description = forms.CharField(label=_("Descrição"), max_length=255, required=False)

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        # The carrier of the method the buyer chose (empty: none named; a Correios-shaped code still names it).
        self.fields["carrier"].initial = order.fulfillment_carrier


class TrackingFixForm(OrderActionForm):
    """Correct a shipment's tracking code (the buyer gets the shipment e-mail again, once)."""

    event = forms.ChoiceField(label=_("Envio"))
    tracking_number = forms.CharField(label=_("Código de rastreio correto"), max_length=64)
    carrier = forms.CharField(
        label=_("Transportadora"),
        max_length=80,
        required=False,
        help_text=_("Vazio: a transportadora do envio continua a mesma."),
    )
    tracking_url = forms.URLField(
        label=_("Link de rastreio"),
        required=False,
        assume_scheme="https",
        help_text=_("Vazio: para os Correios o link é montado a partir do código."),
    )

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        events = list(order.fulfillment_events.order_by("occurred_at", "id"))
        choices = []
        for shipment in (e for e in events if e.type == "shipped" and e.tracking_number):
            now = current_tracking(shipment, events)  # the code as last corrected
            carrier = now.carrier or _("sem transportadora")  # outside the f-string: makemessages finds it there
            choices.append((shipment.public_id, f"{now.tracking_number} ({carrier})"))
        self.fields["event"].choices = choices


class PickupReadyForm(OrderActionForm):
    description = forms.CharField(
        label=_("Recado ao comprador"), max_length=255, required=False, initial="Pronto para retirada"
    )


class PickupDoneForm(OrderActionForm):
    confirm = forms.BooleanField(label=_("Confirmo que o comprador retirou o pedido"))


class DeliveredForm(OrderActionForm):
    line_limit_attr = "delivered"
    description = forms.CharField(label=_("Descrição"), max_length=255, required=False, initial="Entregue")


def refund_confirm_label(amount: int) -> str:
    return str(_("Confirmo o reembolso de %(amount)s")) % {"amount": format_brl(amount)}


def refund_confirm_missing(amount: int) -> str:
    return str(_("Marque “Confirmo o reembolso de %(amount)s” para reembolsar; nada foi reembolsado.")) % {
        "amount": format_brl(amount)
    }


def _posted_amount(form: forms.Form, name: str = "amount") -> int | None:
    """The amount a bound form carries, if it reads as one (the field's own parsing); None otherwise."""
    if not form.is_bound or name not in form.fields:
        return None
    try:
        value = form.fields[name].clean(form.data.get(name))
    except forms.ValidationError:
        return None
    return int(value) if value else None


def refund_payer_hint(order: Order) -> str:
    """Who sends the money back when no system does, said before staff refund (QA walk: a boleto order's refund page
    read as a Pix one's; only the message after it said the shop transfers the money). Empty for Pix and card."""
    if not refund_goes_through_psp(order):
        return str(
            _(
                "Pago fora da loja: nenhum sistema devolve o dinheiro; a loja o devolve ao comprador e depois usa "
                "“Marcar como reembolsado (fora da loja)”."
            )
        )
    if order.payment_type == "boleto":
        return str(
            _(
                "Boleto não tem estorno automático: a loja transfere o valor ao comprador e registra a transferência "
                "em Pagamentos → Devoluções de boleto."
            )
        )
    return ""


def within_refundable(order: Order, amount: int) -> int:
    """The amount of a money-back field, refused on the field above what is left to refund: said before the tick
    confirming it is asked (QA walk: R$ 999,00 was to be confirmed, then refused)."""
    if amount > (available := refundable_amount(order)):
        raise forms.ValidationError(
            _("Só %(amount)s do valor pago pode ser reembolsado.") % {"amount": format_brl(available)}
        )
    return amount


class RefundForm(OrderActionForm):
    amount = MoneyField(label=_("Valor (R$)"), allow_zero=False)
    reason = forms.CharField(label=_("Motivo"), max_length=255)
    # How many refunds the order had when the page was drawn: a refund a colleague registers meanwhile refuses this
    # one (order_refund compares it with the order locked) instead of sending the money twice.
    known_refunds = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)
    # Money leaves the shop: as "Cancelar pedido", a tick that names the sum (QA walk: one click refunded). Not
    # required by the field, so that clean() can say which amount it is about.
    confirm = forms.BooleanField(label=_("Confirmo o reembolso do valor informado acima"), required=False)

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        self.fields["known_refunds"].initial = refund_count(order)
        self._refundable_help()
        amount = _posted_amount(self)
        if amount:  # the page drawn again (an error): the tick names the sum typed
            self.fields["confirm"].label = refund_confirm_label(amount)

    def clean_amount(self) -> int:
        return within_refundable(self.order, self.cleaned_data["amount"])

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        amount = data.get("amount")
        if amount and not data.get("confirm"):
            self.add_error("confirm", refund_confirm_missing(amount))
        return data

    def _refundable_help(self) -> None:
        refundable = _("Reembolsável: %(amount)s") % {"amount": format_brl(refundable_amount(self.order))}
        self.fields["amount"].help_text = " ".join(filter(None, (str(refundable), refund_payer_hint(self.order))))

    def add_service_error(self, error: OrderError) -> None:
        if error.code != "refund_changed":
            super().add_service_error(error)
            return
        # The page is drawn again with the order as it is now: a second press is a decision taken knowingly.
        self.data = self.data.copy()
        self.data["known_refunds"] = str(refund_count(self.order))
        self._refundable_help()
        self.add_error(None, error.message)


class CancelForm(OrderActionForm):
    reason = forms.CharField(label=_("Motivo"), max_length=255)
    restock = forms.BooleanField(label=_("Devolver ao estoque o que não foi enviado"), initial=True, required=False)
    confirm = forms.BooleanField(label=_("Confirmo o cancelamento (o valor pago é reembolsado)"))

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        if any(line.quantity_fulfilled > 0 for line in order.lines.all()):
            # Part already left the shop: only the rest is cancelled and refunded (orders.services.order_cancel).
            self.fields["confirm"].label = _(
                "Confirmo o cancelamento do que não foi enviado (o valor desses itens é reembolsado)"
            )
        elif (amount := refundable_amount(order)) > 0:
            # Nothing left the shop: all that was paid goes back, freight included; staff confirm the sum they
            # will tell the buyer (the page named no amount).
            self.fields["confirm"].label = _("Confirmo o cancelamento e o reembolso de %(amount)s") % {
                "amount": format_brl(amount)
            }
        elif order.paid_amount > 0:
            # Paid, and all of it already went back (a refund, or the MED returned the Pix): no money moves now.
            self.fields["confirm"].label = _(
                "Confirmo o cancelamento (nada a reembolsar: o valor pago já foi devolvido)"
            )
        else:
            self.fields["confirm"].label = _("Confirmo o cancelamento (nada foi pago, nada a reembolsar)")


class NoteForm(OrderActionForm):
    text = forms.CharField(label=_("Nota interna"), widget=forms.Textarea(attrs={"rows": 4}), max_length=4000)


class ResendEmailForm(OrderActionForm):
    kind = forms.ChoiceField(label=_("E-mail"), choices=EmailKind.choices)

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        # Only what the buyer already got: "Pedido entregue" offered for an order never shipped told them it arrived.
        sent = email_kinds_sent(order) - {EmailKind.ORDER_LINK}
        self.fields["kind"].choices = [c for c in EmailKind.choices if c[0] in sent]


class RefundResultForm(OrderActionForm):
    """For refunds settled outside the Pix flow (e.g. a card gateway's dashboard): record the final result."""

    adjustment = forms.ChoiceField(label=_("Reembolso pendente"))
    status = forms.ChoiceField(label=_("Resultado"), choices=[("completed", _("Concluído")), ("failed", _("Falhou"))])

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        pending = order.adjustments.filter(type="refund", status="pending").order_by("occurred_at", "id")
        self.fields["adjustment"].choices = [
            (a.public_id, f"{format_brl(-a.amount)} — {a.description}") for a in pending
        ]


# How staff gave money back outside the shop (orders.services.adjustments.OFFLINE_REFUND_MEANS).
OFFLINE_MEANS = [
    ("pix", _("Pix")),
    ("dinheiro", _("Dinheiro")),
    ("transferencia", _("Transferência bancária")),
    ("outro", _("Outro")),
]


class RefundOfflineForm(OrderActionForm):
    """An order paid outside the shop is refunded outside it too: staff say how, and the refund is settled."""

    adjustment = forms.ChoiceField(label=_("Reembolso pendente"))
    means = forms.ChoiceField(label=_("Como o valor foi devolvido"), choices=OFFLINE_MEANS, widget=forms.RadioSelect)
    note = forms.CharField(
        label=_("Observação"),
        max_length=255,
        required=False,
        help_text=_("Só a loja vê (ex.: comprovante, conta de destino). Obrigatória com “Outro”."),
    )

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        pending = order.adjustments.filter(type="refund", status="pending").order_by("occurred_at", "id")
        self.fields["adjustment"].choices = [
            (a.public_id, f"{format_brl(-a.amount)} — {a.description}") for a in pending
        ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("means") == "outro" and not (cleaned.get("note") or "").strip():
            self.add_error("note", _("Conte como o valor foi devolvido."))
        return cleaned


class FailedRefundOfflineForm(RefundOfflineForm):
    """A refund the PSP refused, paid by the shop itself outside it (transfer, cash): staff say how, and a refund
    paid outside is recorded in its place (nothing goes to the PSP)."""

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        failed = failed_refunds_to_pay_outside(order)
        field = self.fields["adjustment"]
        field.label = _("Reembolso que falhou")
        field.choices = [(a.public_id, f"{format_brl(-a.amount)} — {a.description}") for a in failed]
        if len(failed) == 1:
            self.fields["means"].help_text = _(
                "Só depois de devolver %(amount)s ao comprador fora da loja: nada é enviado ao PSP."
            ) % {"amount": format_brl(-failed[0].amount)}


class FailedRefundRetryForm(OrderActionForm):
    """A refund the PSP refused, asked of it again: the same amount, reason and items (not a second refund), after
    the tick naming the sum, as every action that sends money does."""

    adjustment = forms.ChoiceField(label=_("Reembolso que falhou"))
    confirm = forms.BooleanField(label=_("Confirmo o reembolso do valor que falhou"), required=False)

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        self.failed = {a.public_id: a for a in failed_refunds_to_pay_outside(order)}
        self.fields["adjustment"].choices = [
            (a.public_id, f"{format_brl(-a.amount)} — {a.description}") for a in self.failed.values()
        ]
        self.fields["adjustment"].help_text = _(
            "O mesmo valor, pelo mesmo meio de pagamento do pedido; o reembolso que falhou continua registrado."
        )
        if len(self.failed) == 1:
            self.fields["confirm"].label = refund_confirm_label(-next(iter(self.failed.values())).amount)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        failed = self.failed.get(data.get("adjustment") or "")
        if failed is not None and not data.get("confirm"):
            self.add_error("confirm", refund_confirm_missing(-failed.amount))
        return data


class FailedRefundDropForm(OrderActionForm):
    """A refund the PSP refused that staff will not redo (the buyer was paid another way the shop does not record,
    or the shop decided not to refund): no money moves, after the tick saying so; the order may be refunded afresh."""

    adjustment = forms.ChoiceField(label=_("Reembolso que falhou"))
    reason = forms.CharField(
        label=_("Motivo"), max_length=255, help_text=_("Só a loja vê (ex.: comprador pago por outro meio).")
    )
    confirm = forms.BooleanField(label=_("Confirmo que este reembolso não será refeito (nada é devolvido agora)"))

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        self.fields["adjustment"].choices = [
            (a.public_id, f"{format_brl(-a.amount)} — {a.description}") for a in failed_refunds_to_pay_outside(order)
        ]
        self.fields["adjustment"].help_text = _(
            "O reembolso que falhou continua registrado; depois, “Reembolsar” volta a valer, até o valor pago."
        )


class BuyerContactForm(OrderActionForm):
    """The buyer's name, e-mail and phone as the order has them, for staff to correct a typo."""

    first_name = forms.CharField(label=_("Nome"), max_length=120)
    last_name = forms.CharField(label=_("Sobrenome"), max_length=120)
    email = forms.CharField(
        label=_("E-mail"), max_length=254, help_text=_("Os próximos e-mails do pedido vão para este endereço.")
    )
    phone = forms.CharField(label=_("Celular"), max_length=32, required=False)

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        self.fields["first_name"].initial = order.buyer_first_name
        self.fields["last_name"].initial = order.buyer_last_name
        self.fields["email"].initial = order.buyer_email
        self.fields["phone"].initial = phone_display(order.buyer_phone)  # as staff type it


class BuyerTaxIdForm(OrderActionForm):
    """The buyer's CPF/CNPJ, typed by staff (an agent's order came without it; the NF-e needs it)."""

    tax_id = forms.CharField(
        label=_("CPF ou CNPJ do comprador"),
        max_length=32,
        help_text=_("Com ou sem pontuação. Uma NF-e bloqueada pela falta do CPF é emitida em seguida."),
    )

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        self.fields["tax_id"].initial = tax_id_text(order.buyer_tax_id)  # as staff type it, not bare digits


class DestinationForm(OrderActionForm):
    """The delivery address as the order has it, for staff to correct (CEP, rua, número, complemento, bairro,
    cidade, UF). Every bad field is named at once, with the checkout's rules (orders.services.notes.destination_clean);
    what keeps the address from changing (shipped, a label bought) is said before staff type."""

    postal_code = forms.CharField(
        label=_("CEP"), max_length=12,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "postal-code", "placeholder": "00000-000",
                                      "size": 10}),
    )  # fmt: skip
    street = forms.CharField(label=_("Rua"), max_length=200, required=False)
    number = forms.CharField(
        label=_("Número"), max_length=20, required=False, widget=forms.TextInput(attrs={"size": 8})
    )
    complement = forms.CharField(label=_("Complemento"), max_length=100, required=False)
    neighborhood = forms.CharField(label=_("Bairro"), max_length=100, required=False)
    city = forms.CharField(label=_("Cidade"), max_length=100, required=False)
    state = forms.CharField(
        label=_("UF"), max_length=2, required=False, help_text=_("Vazia: a do CEP."),
        widget=forms.TextInput(attrs={"size": 3, "autocapitalize": "characters"}),
    )  # fmt: skip

    # A new CEP whose freight differs from what the buyer paid is said before anything is saved: the first POST
    # shows the difference and this tick (for that CEP: `freight_cep`); the second, ticked, saves.
    confirm_freight = forms.BooleanField(
        label=_("Salvar o endereço mesmo assim (a diferença de frete fica com a loja)"), required=False
    )
    freight_cep = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        destination = order.destination or {}
        for key in DESTINATION_FIELDS:
            self.fields[key].required = key == "postal_code"
            self.fields[key].initial = destination.get(key, "")
        self.refusal = destination_refusal(order)
        if not (self.is_bound and self.data.get("freight_cep")):
            del self.fields["confirm_freight"]  # asked only once a typed CEP changes the freight (clean)
        self.fields["freight_cep"].required = False

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.refusal:
            raise forms.ValidationError(self.refusal)
        address, errors = destination_clean({key: cleaned.get(key, "") for key in DESTINATION_FIELDS})
        for field, message in errors.items():
            if field not in self.errors:
                self.add_error(field, message)
        if not self.errors:
            self._ask_freight(address, cleaned)
        return cleaned

    def _ask_freight(self, address: dict[str, str], cleaned: dict[str, Any]) -> None:
        """The freight to a new CEP (orders.extras.destination_notes on an unsaved copy of the order: the same
        words staff read after the save), asked before saving; a tick given for another CEP does not count."""
        before = dict(self.order.destination or {})
        new = cep_digits(address["postal_code"]) or ""
        if new == (cep_digits(str(before.get("postal_code", ""))) or ""):
            return
        typed = copy.copy(self.order)
        typed.destination = {**before, **address}
        notes = destination_notes(typed, before)
        if not notes or (cleaned.get("confirm_freight") and cleaned.get("freight_cep") == new):
            return
        self.data = self.data.copy()  # the page drawn again carries the CEP asked about, the tick unticked
        self.data["freight_cep"] = new
        self.data.pop("confirm_freight", None)
        self.fields["confirm_freight"] = copy.deepcopy(self.base_fields["confirm_freight"])
        asked = _("Nada foi salvo ainda: confira e marque a caixa abaixo para salvar o endereço novo.")
        self.add_error("confirm_freight", [*notes, str(asked)])


class ExpectationForm(OrderActionForm):
    """Change what the buyer is promised: description and/or the date the items can ship (backorder)."""

    expectation = forms.ChoiceField(label=_("Previsão"))
    description = forms.CharField(label=_("Descrição"), max_length=255, required=False)
    fulfillable_on = forms.DateTimeField(
        label=_("Disponível em"), required=False, help_text=_("Vazio: disponível agora.")
    )

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        choices = _expectation_choices(order)
        self.fields["expectation"].choices = choices
        if choices:
            first = next(e for e in order.expectations.all() if e.public_id == choices[0][0])
            self.fields["description"].initial = first.description


RETURN_CONDITIONS = ReturnCondition.choices


REFUND_LABELS = {
    "pix": _("Reembolso por Pix (R$)"),
    "card": _("Reembolso no cartão (R$)"),
}


class ReturnForm(OrderActionForm):
    """The buyer sent items back: which, why, in what state; back to stock or not; money back or not."""

    line_limit_attr = "returnable"
    reason = forms.CharField(label=_("Motivo"), max_length=200)
    condition = forms.ChoiceField(label=_("Estado dos itens"), choices=RETURN_CONDITIONS)
    restock = forms.BooleanField(label=_("Devolver ao estoque"), initial=True, required=False)
    refund_amount = MoneyField(
        label=_("Reembolso por Pix (R$)"),
        required=False,
        help_text=_("Vazio: sem reembolso agora (por exemplo, troca por outro produto)."),
    )

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        # The suggestion (filled in as the units are marked, static/orders/return_refund.js): what was paid for
        # them, never more than is left after earlier refunds (QA walk: the field came empty, no hint of the value).
        refundable = refundable_amount(order)
        values = return_units_net_values(order, {line.public_id: line.quantity_delivered for line in self.lines})
        chosen = {line.public_id: self._initial_units(line) for line in self.lines}
        for line in self.lines:
            self.fields[f"qty_{line.public_id}"].widget.attrs["data-net-values"] = ",".join(
                str(value) for value in values[line.public_id]
            )
        refund = self.fields["refund_amount"]
        # The money goes back the way it came (QA walk: a card order's return said "Reembolso por Pix").
        refund.label = REFUND_LABELS.get(order.payment_type, _("Reembolso (R$)"))
        refund.widget.attrs.update({"data-refundable": str(refundable), "data-suggested-refund": ""})
        suggested = min(sum(values[key][units] for key, units in chosen.items()), refundable)
        if suggested:
            refund.initial = suggested
        refund.help_text = _(
            "Sugestão: o valor pago pelas unidades devolvidas (preço menos a parte dos descontos do pedido), até "
            "%(refundable)s (pago %(paid)s − já reembolsado %(refunded)s). Vazio: sem reembolso (troca)."
        ) % {
            "refundable": format_brl(refundable),
            "paid": format_brl(order.paid_amount),
            "refunded": format_brl(max(0, order.paid_amount - refundable)),
        }
        if posted := _posted_amount(self, "refund_amount"):  # the page drawn again: the tick names the sum typed
            self.fields["confirm"].label = refund_confirm_label(posted)

    def _initial_units(self, line: OrderLine) -> int:
        value = self.fields[f"qty_{line.public_id}"].initial or 0
        return min(int(value), line.quantity_delivered)

    credit_amount = MoneyField(
        label=_("Vale-troca (R$)"),
        required=False,
        help_text=_("Crédito na loja em vez de dinheiro de volta; aparece na página do pedido."),
    )
    # Money back moves money: the tick of "Reembolsar", asked only when a refund is filled in (a swap needs none).
    confirm = forms.BooleanField(label=_("Confirmo o reembolso do valor informado acima"), required=False)

    def _within_paid(self, name: str) -> int:
        return within_refundable(self.order, self.cleaned_data.get(name) or 0)

    def clean_refund_amount(self) -> int:
        return self._within_paid("refund_amount")

    def clean_credit_amount(self) -> int:
        return self._within_paid("credit_amount")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("refund_amount") and cleaned.get("credit_amount"):
            self.add_error("credit_amount", _("Escolha reembolso ou vale-troca, não os dois."))
        if (amount := cleaned.get("refund_amount")) and not cleaned.get("confirm"):
            self.add_error("confirm", refund_confirm_missing(amount))
        return cleaned


class SplitForm(OrderActionForm):
    """Move some items of a promise to a new one (e.g. a back-ordered item ships later)."""

    line_limit_attr = "split"
    expectation = forms.ChoiceField(label=_("Previsão de origem"))
    description = forms.CharField(label=_("Descrição da nova previsão"), max_length=255, required=False)
    fulfillable_on = forms.DateTimeField(label=_("Disponível em"), required=False, help_text=_("Vazio: agora."))

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        left = expectations_left(order)
        self.fields["expectation"].choices = _expectation_choices(order, left)
        # At most what an expectation still has to send of the line (not the line's remainder: the rest may be in
        # another expectation, or shipped); with two or more holding it, the help names each one's units.
        for line in self.lines:
            held = [
                (_expectation_label(e), int(item["quantity"]))
                for e, items in left
                for item in items
                if item["id"] == line.public_id
            ]
            field = self.fields[f"qty_{line.public_id}"]
            most = max((units for _name, units in held), default=0)
            field.max_value = most
            field.validators = [v for v in field.validators if not isinstance(v, MaxValueValidator)]
            field.validators.append(MaxValueValidator(most))
            field.widget.attrs["max"] = str(most)
            title = f"{line.title} ({line.sku})"
            if len(held) > 1:
                field.help_text = _("até %(n)s por previsão (a enviar: %(where)s)") % {
                    "n": most,
                    "where": ", ".join(
                        _("%(units)s em “%(expectation)s”") % {"units": units, "expectation": name}
                        for name, units in held
                    ),
                }
                too_many = _("Nenhuma previsão tem mais de %(n)s× %(line)s a enviar: informe até %(n)s.")
            elif held:
                field.help_text = _("até %(n)s") % {"n": most}
                too_many = _("A previsão “%(expectation)s” tem só %(n)s× %(line)s a enviar: informe até %(n)s.")
            else:
                field.help_text = _("nada a enviar")
                too_many = _("Nada de %(line)s falta enviar (já enviado ou cancelado): deixe 0.")
            field.error_messages["max_value"] = too_many % {
                "n": most,
                "line": title,
                "expectation": held[0][0] if held else "",
            }


class MergeForm(OrderActionForm):
    expectations = forms.MultipleChoiceField(
        label=_("Previsões a juntar"), widget=forms.CheckboxSelectMultiple, help_text=_("Marque pelo menos duas.")
    )

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        self.fields["expectations"].choices = _expectation_choices(order)

    def clean_expectations(self) -> list[str]:
        chosen = self.cleaned_data.get("expectations") or []
        if len(chosen) < 2:
            raise forms.ValidationError(_("Marque pelo menos duas previsões."))
        return chosen


def expectations_left(order: Order) -> list[tuple[FulfillmentExpectation, list[dict[str, Any]]]]:
    """The order's expectations with what each still has to send (the plan minus cancelled units and minus what
    was shipped or picked up: `expectation_units_to_send`); one with nothing left to send is not listed (nothing to
    change, split or merge)."""
    expectations = sorted(order.expectations.all(), key=lambda e: (e.position, e.pk))
    to_send = expectation_units_to_send(expectations, list(order.adjustments.all()), list(order.lines.all()))
    return [
        (e, [{"id": line_id, "quantity": units} for line_id, units in to_send[e.public_id].items()])
        for e in expectations
        if to_send[e.public_id]
    ]


def _expectation_label(expectation: FulfillmentExpectation) -> str:
    return expectation.description or str(fulfillment_method_label(expectation.method_type))


def _expectation_choices(
    order: Order, left: list[tuple[FulfillmentExpectation, list[dict[str, Any]]]] | None = None
) -> list[tuple[str, str]]:
    lines = {line.public_id: line for line in order.lines.all()}
    return [
        (e.public_id, f"{_expectation_label(e)} ({line_items_text(items, lines)})")
        for e, items in (expectations_left(order) if left is None else left)
    ]


class ReturnRequestStepForm(OrderActionForm):
    """The next step of a buyer's or agent's return request (orders.services.returns): one button per step the
    chosen request can take, labelled by what it does."""

    BUTTONS = {
        "approve": _("Aprovar devolução"),
        "reject": _("Recusar devolução"),
        "receive": _("Confirmar recebimento"),
        "refund": _("Reembolsar"),
        "retry": _("Tentar de novo"),
        "refund_offline": _("Marcar como pago por fora"),
    }
    # A refund that failed (the PSP refused it) is asked again, the same amount ("Tentar de novo": not a fresh
    # "Reembolsar", which read as a second refund), or recorded as paid by the shop outside it (transfer, cash: the
    # merchant often pays it so); a pending one waits for its answer.
    NEXT_STEPS = {
        "requested": ("approve", "reject"),
        "approved": ("receive", "reject"),
        "received": ("refund",),
        "refund_failed": ("retry", "refund_offline"),
    }
    STEP_FIELDS = {
        "approve": {"note"},
        "reject": {"note"},
        "receive": {"restock"},
        "refund": {"amount", "confirm"},
        "retry": {"confirm"},
        "refund_offline": {"means", "offline_note"},
    }
    submit_field = "step"
    request = forms.ChoiceField(label=_("Devolução"))
    step = forms.ChoiceField(label=_("Passo"), choices=list(BUTTONS.items()))
    note = forms.CharField(
        label=_("Resposta ao comprador"),
        max_length=255,
        required=False,
        help_text=_("Obrigatória ao recusar; o comprador e a plataforma leem."),
    )
    restock = forms.BooleanField(label=_("Devolver os itens recebidos ao estoque"), initial=True, required=False)
    amount = MoneyField(
        label=_("Valor a reembolsar (R$)"),
        required=False,
        help_text=_(
            "Vazio: o valor pago pelos itens, descontos do pedido rateados (na desistência de tudo, também o frete)."
        ),
    )
    # "Reembolsar" moves money: the same tick as the order's refund, naming the sum (clean() refuses without it).
    confirm = forms.BooleanField(label=_("Confirmo o reembolso do valor informado acima"), required=False)
    # "Marcar como pago por fora": how the shop paid the failed refund itself (the offline refund's fields).
    means = forms.ChoiceField(
        label=_("Como a loja devolveu o valor (por fora)"), choices=OFFLINE_MEANS, widget=forms.RadioSelect,
        required=False,
    )  # fmt: skip
    offline_note = forms.CharField(
        label=_("Observação do reembolso por fora"),
        max_length=255,
        required=False,
        help_text=_("Só a loja vê (ex.: comprovante, conta de destino). Obrigatória com “Outro”."),
    )

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, order=order, **kwargs)
        open_requests = list(ReturnRequest.objects.filter(order=order, status__in=tuple(self.NEXT_STEPS)))
        lines = {line.public_id: line for line in order.lines.all()}
        # What was asked, not the request's code: staff approved "ret_6a8c… · Solicitada" without the items or
        # the buyer's words, which only the order page's inline showed (QA walk).
        self.fields["request"].choices = [
            (
                r.public_id,
                f"{line_items_text(r.line_items, lines)} · {r.get_reason_code_display()} · {r.get_status_display()}",
            )
            for r in open_requests
        ]
        # The request staff came for (the queue's "Analisar" link passes ?request=), else the only open one.
        wanted = self.data.get("request") if self.is_bound else self.initial.get("request")
        chosen = next((r for r in open_requests if r.public_id == wanted), None)
        if chosen is None and len(open_requests) == 1:
            chosen = open_requests[0]
        if chosen is not None:
            self.fields["request"].initial = chosen.public_id
            self.fields["request"].help_text = _("%(who)s, em %(when)s%(words)s") % {
                "when": formats.date_format(timezone.localtime(chosen.created_at), "SHORT_DATETIME_FORMAT"),
                "who": chosen.get_requested_by_display(),
                "words": f": “{chosen.reason}”" if chosen.reason else "",
            }
        self.chosen = chosen
        steps = self.NEXT_STEPS[chosen.status] if chosen is not None else tuple(self.BUTTONS)
        self.submit_buttons = [(step, str(self.BUTTONS[step])) for step in steps]
        # Only the fields the offered steps read: an amount typed before "Reembolsar" would be dropped unseen (QA).
        # A value posted anyway (from a page that offered every step) stays, for clean() to refuse it.
        used: set[str] = set().union(*(self.STEP_FIELDS[step] for step in steps))
        for name in ("note", "restock", "amount", "confirm", "means", "offline_note"):
            if name not in used and not (self.is_bound and self.data.get(name)):
                del self.fields[name]
        if "means" in self.fields and chosen is not None and chosen.status == "refund_failed":
            self.fields["means"].help_text = _(
                "Só depois de devolver %(amount)s ao comprador fora da loja: nada é enviado ao PSP."
            ) % {"amount": format_brl(chosen.refund_amount)}
        if chosen is not None and chosen.status == "refund_failed" and "confirm" in self.fields:
            self.fields["confirm"].label = refund_confirm_label(chosen.refund_amount)  # the sum that failed
        if "amount" not in self.fields:
            return
        posted = _posted_amount(self)
        if "confirm" in self.fields and (amount := self._refund_amount(posted)):
            # The default named until staff type a sum (then the page drawn again names that one).
            label = refund_confirm_label(amount)
            self.fields["confirm"].label = (
                label if posted else _("%(label)s (ou do valor informado acima)") % {"label": label}
            )
        hint = self.fields["amount"].help_text
        if chosen is not None and chosen.status in ("received", "refund_failed"):
            suggestion = {"amount": format_brl(return_refund_suggestion(chosen, order))}
            hint = (
                _("Vazio: %(amount)s, tudo o que foi pago (itens e frete: todos os itens voltaram).")
                if return_refund_includes_freight(chosen, order)
                else _("Vazio: %(amount)s, o valor pago pelos itens (descontos do pedido rateados).")
            ) % suggestion
        self.fields["amount"].help_text = _("%(hint)s Reembolsável: %(amount)s") % {
            "hint": hint,
            "amount": format_brl(refundable_amount(order)),
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        # Every step is offered when no request is chosen: a typed amount must not vanish behind another step.
        if data.get("step") not in (None, "refund") and data.get("amount") is not None:
            self.add_error(
                "amount",
                _("O valor só vale no passo “Reembolsar”, depois de confirmar o recebimento; deixe vazio agora."),
            )
        if data.get("step") == "refund_offline":
            if not data.get("means"):
                self.add_error("means" if "means" in self.fields else None, _("Escolha como o valor foi devolvido."))
            elif data["means"] == "outro" and not (data.get("offline_note") or "").strip():
                self.add_error("offline_note", _("Conte como o valor foi devolvido."))
        if data.get("step") == "retry" and not data.get("confirm") and self.chosen is not None:
            self.add_error(
                "confirm" if "confirm" in self.fields else None, refund_confirm_missing(self.chosen.refund_amount)
            )
        if data.get("step") == "refund" and not data.get("confirm"):
            amount = self._refund_amount(data.get("amount"))
            if amount:  # nothing to confirm when no money moves ("Devolução encerrada sem reembolso")
                self.add_error("confirm" if "confirm" in self.fields else None, refund_confirm_missing(amount))
        return data

    def _refund_amount(self, typed: int | None) -> int:
        """What "Reembolsar" would give back: the sum typed, else the default of the chosen received request."""
        if typed is not None:
            return typed
        chosen = self.chosen
        if chosen is None or chosen.status not in ("received", "refund_failed"):
            return 0
        return return_refund_suggestion(chosen, self.order)
