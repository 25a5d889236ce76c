"""Admin action pages (each calls one service) and which of them an order may take, used by orders/admin.py."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from kernel.br_validation import tax_id_text
from kernel.money import format_brl
from orders import admin_forms as forms
from orders.extras import destination_notes, order_extras
from orders.models import Order, OrderStatus, ReturnRequest
from orders.selectors import failed_refunds_to_pay_outside, orders_sharing_tracking
from orders.services import (
    adjustment_failed_refund_drop,
    adjustment_failed_refund_offline,
    adjustment_mark_refund_result,
    adjustment_refund_retry,
    adjustment_settle_offline,
    expectation_merge,
    expectation_split,
    expectation_update,
    order_buyer_contact_set,
    order_buyer_tax_id_set,
    order_cancel,
    order_destination_set,
    order_email_resend,
    order_mark_delivered,
    order_note_add,
    order_pickup_done,
    order_pickup_ready,
    order_refund,
    order_return,
    order_ship,
    order_tracking_correct,
    return_request_approve,
    return_request_receive,
    return_request_refund,
    return_request_refund_offline,
    return_request_refund_retry,
    return_request_reject,
)
from orders.services._common import refundable_amount
from orders.services.adjustments import refund_goes_through_psp
from orders.services.handover import READY_FOR_PICKUP

ACTIONS: dict[str, tuple[str, str, type[forms.OrderActionForm]]] = {
    # slug: (permission, title, form)
    "ship": ("orders.ship_order", _("Registrar envio"), forms.ShipmentForm),
    "tracking-fix": ("orders.ship_order", _("Corrigir rastreio"), forms.TrackingFixForm),
    "deliver": ("orders.ship_order", _("Marcar como entregue"), forms.DeliveredForm),
    "pickup-ready": ("orders.ship_order", _("Pronto para retirada"), forms.PickupReadyForm),
    "pickup-done": ("orders.ship_order", _("Marcar como retirado"), forms.PickupDoneForm),
    "expectation": ("orders.ship_order", _("Alterar previsão"), forms.ExpectationForm),
    "split": ("orders.ship_order", _("Dividir previsão"), forms.SplitForm),
    "merge": ("orders.ship_order", _("Juntar previsões"), forms.MergeForm),
    "return": ("orders.refund_order", _("Registrar devolução"), forms.ReturnForm),
    "refund": ("orders.refund_order", _("Reembolsar"), forms.RefundForm),
    "refund-result": ("orders.refund_order", _("Resultado de reembolso"), forms.RefundResultForm),
    "refund-offline": ("orders.refund_order", _("Marcar como reembolsado (fora da loja)"), forms.RefundOfflineForm),
    # A refund the PSP refused: asked of it again (the same one, not a second refund), or paid by the shop itself
    # (transfer, cash).
    "refund-retry": ("orders.refund_order", _("Tentar de novo o reembolso"), forms.FailedRefundRetryForm),
    "refund-outside": ("orders.refund_order", _("Marcar como pago por fora"), forms.FailedRefundOfflineForm),
    # …or dropped: staff will not redo it (paid another way, or no refund after all); "Reembolsar" comes back.
    "refund-drop": ("orders.refund_order", _("Descartar reembolso recusado"), forms.FailedRefundDropForm),
    "cancel": ("orders.refund_order", _("Cancelar pedido"), forms.CancelForm),
    # A return the buyer (order page) or the platform (BCP order_actions) asked for: approve, receive, refund.
    "return-request": ("orders.refund_order", _("Devolução solicitada"), forms.ReturnRequestStepForm),
    "note": ("orders.change_order", _("Adicionar nota"), forms.NoteForm),
    "buyer-contact": ("orders.change_order", _("Corrigir dados do comprador"), forms.BuyerContactForm),
    "buyer-tax-id": ("orders.change_order", _("Corrigir CPF/CNPJ"), forms.BuyerTaxIdForm),
    "destination": ("orders.change_order", _("Corrigir endereço de entrega"), forms.DestinationForm),
    "resend-email": ("orders.change_order", _("Reenviar e-mail"), forms.ResendEmailForm),
}


def available_actions(order: Order) -> list[str]:
    """The action slugs that make sense for the order as it is now (the rest are neither offered nor run)."""
    lines = list(order.lines.all())
    events = {e.type for e in order.fulfillment_events.all()}
    canceled = order.status == "canceled"
    paid = order.payment_status in ("paid", "partially_refunded")
    method = order.fulfillment_method
    offered: list[str] = []
    if not canceled and method == "shipping" and paid and any(ln.quantity_total > ln.quantity_shipped for ln in lines):
        offered.append("ship")
    if not canceled and "shipped" in events and any(e.tracking_number for e in order.fulfillment_events.all()):
        offered.append("tracking-fix")
    if not canceled and method == "shipping" and any(ln.quantity_shipped > ln.quantity_delivered for ln in lines):
        offered.append("deliver")
    if not canceled and method == "digital" and any(ln.quantity_total > ln.quantity_delivered for ln in lines):
        offered.append("deliver")
    undelivered = any(ln.quantity_total > ln.quantity_delivered for ln in lines)
    if not canceled and method == "pickup" and paid and undelivered:
        offered.append("pickup-done" if READY_FOR_PICKUP in events else "pickup-ready")
    expectations = forms.expectations_left(order)  # what each still has to fulfil (cancelled units are off)
    if not canceled and order.status not in ("delivered", "returned") and expectations:
        offered.append("expectation")
        if any(sum(int(i["quantity"]) for i in items) >= 2 for _e, items in expectations):
            offered.append("split")
        if len(expectations) >= 2:
            offered.append("merge")
    waiting_request = ReturnRequest.objects.filter(order=order, status__in=("requested", "approved")).exists()
    if not canceled and any(ln.quantity_delivered > 0 for ln in lines) and not waiting_request:
        # Only what reached the buyer can come back (a parcel on the road cannot). While the buyer's request waits,
        # its "Itens recebidos" records the return: "Registrar devolução" left the request "Aprovada" for good and
        # its refund without the freight the request gives back (QA walk).
        offered.append("return")
    failed = bool(failed_refunds_to_pay_outside(order))
    return_failed = ReturnRequest.objects.filter(order=order, status="refund_failed").exists()
    if refundable_amount(order) > 0 and not failed and not return_failed:
        # While a refused refund waits for staff's decision, a fresh "Reembolsar" beside it read as a second refund
        # of the same money: the failed one is tried again or paid outside first (here, or on its return).
        offered.append("refund")
    if order.adjustments.filter(type="refund", status="pending").exists():
        # Paid outside the shop: no PSP answers, staff give the money back themselves and say how.
        offered.append("refund-result" if refund_goes_through_psp(order) else "refund-offline")
    if failed:
        offered += ["refund-retry", "refund-outside", "refund-drop"]
    if order.status in ("placed", "partially_shipped"):
        offered.append("cancel")
    if ReturnRequest.objects.filter(order=order, status__in=tuple(forms.ReturnRequestStepForm.NEXT_STEPS)).exists():
        offered.append("return-request")
    offered += ["note", "resend-email"]
    if not canceled:
        offered += ["buyer-contact", "buyer-tax-id"]
    if method == "shipping" and order.status == OrderStatus.PLACED:
        # As the service takes it: a return leaves no line counted as shipped, yet the parcel has come back
        # (a label bought for it is said on the page, destination_refusal).
        offered.append("destination")
    return offered


def action_refusal(order: Order, slug: str) -> str:
    """Why an action not offered (a typed URL, a stale page) does not apply, when the order's kind says it better
    than its situation; "" for the generic words. A pickup order has no shipment: staff looking for "Registrar
    envio" are told which steps it has instead."""
    if slug == "ship" and order.fulfillment_method == "pickup":
        return str(
            _("O pedido #%(n)s é para retirada na loja: use “Pronto para retirada” e “Marcar como retirado”.")
            % {"n": order.number}
        )
    return ""


def perform_action(
    slug: str, order: Order, form: forms.OrderActionForm, actor: str, warnings: list[str] | None = None
) -> str:
    """Run the action's service; returns the success message. `warnings` gets what staff should check although
    the action went through (a tracking code already on another order)."""
    data = form.cleaned_data
    warnings = [] if warnings is None else warnings
    if slug == "tracking-fix":
        event = order_tracking_correct(
            order_id=order.public_id,
            event_id=data["event"],
            tracking_number=data["tracking_number"],
            carrier=data.get("carrier", ""),
            tracking_url=data.get("tracking_url", ""),
            actor=actor,
        )
        warnings.extend(_tracking_warnings(event.tracking_number, order))
        return str(_("Código de rastreio corrigido: %(code)s. O comprador foi avisado.")) % {
            "code": event.tracking_number
        }
    if slug == "return":
        order_return(
            order_id=order.public_id,
            lines=form.line_quantities(),
            reason=data["reason"],
            condition=data["condition"],
            restock=data.get("restock", False),
            refund_amount=data.get("refund_amount") or 0,
            credit_amount=data.get("credit_amount") or 0,
            actor=actor,
        )
        if refund_amount := data.get("refund_amount"):
            # Say what the page did with the money too (QA walk: "Devolução registrada." and nothing of the refund).
            note = by_hand_refund_message(order, refund_amount) or _refund_requested(refund_amount)
            return f"{_('Devolução registrada.')} {note}"
        return str(_("Devolução registrada."))
    if slug == "split":
        when = data.get("fulfillable_on")
        expectation_split(
            order_id=order.public_id,
            expectation_id=data["expectation"],
            lines=form.line_quantities(),
            description=data.get("description") or None,
            fulfillable_on=when.isoformat() if when else None,
            actor=actor,
        )
        return str(_("Previsão dividida."))
    if slug == "merge":
        expectation_merge(order_id=order.public_id, expectation_ids=data["expectations"], actor=actor)
        return str(_("Previsões juntadas."))
    if slug == "pickup-ready":
        order_pickup_ready(order_id=order.public_id, description=data.get("description", ""), actor=actor)
        return str(_("Pedido pronto para retirada; o comprador foi avisado por e-mail."))
    if slug == "pickup-done":
        order_pickup_done(order_id=order.public_id, actor=actor)
        return str(_("Retirada registrada."))
    if slug == "ship":
        event = order_ship(
            order_id=order.public_id,
            tracking_number=data["tracking_number"],
            carrier=data.get("carrier", ""),
            tracking_url=data.get("tracking_url", ""),
            description=data.get("description", ""),
            lines=form.line_quantities(),
            actor=actor,
        )
        if not event.tracking_number:
            return str(_("Envio registrado (sem código de rastreio)."))
        warnings.extend(_tracking_warnings(event.tracking_number, order))
        return str(_("Envio registrado: %(code)s")) % {"code": event.tracking_number}
    if slug == "deliver":
        order_mark_delivered(
            order_id=order.public_id, lines=form.line_quantities(), description=data.get("description", ""), actor=actor
        )
        return str(_("Entrega registrada."))
    if slug == "refund":
        adjustment = order_refund(
            order_id=order.public_id,
            amount=data["amount"],
            reason=data["reason"],
            actor=actor,
            known_refunds=data.get("known_refunds"),
        )
        if note := by_hand_refund_message(order, -adjustment.amount):
            return note
        return _refund_requested(-adjustment.amount)
    if slug == "expectation":
        when = data.get("fulfillable_on")
        expectation_update(
            order_id=order.public_id,
            expectation_id=data["expectation"],
            description=data.get("description", ""),
            fulfillable_on=when.isoformat() if when else "now",
            actor=actor,
        )
        return str(_("Previsão alterada."))
    if slug == "refund-result":
        adjustment_mark_refund_result(adjustment_id=data["adjustment"], status=data["status"], actor=actor)
        return str(_("Resultado do reembolso registrado."))
    if slug == "refund-offline":
        adjustment = adjustment_settle_offline(
            adjustment_id=data["adjustment"], means=data["means"], note=data.get("note", ""), actor=actor
        )
        return str(_("Reembolso de %(amount)s registrado como feito pela loja.")) % {
            "amount": format_brl(-adjustment.amount)
        }
    if slug == "refund-retry":
        adjustment, changed = adjustment_refund_retry(adjustment_id=data["adjustment"], actor=actor)
        if not changed:
            return str(_("Este reembolso já foi tentado de novo; nada mudou."))
        if note := by_hand_refund_message(order, -adjustment.amount):
            return note
        return str(_("Reembolso de %(amount)s solicitado de novo.")) % {"amount": format_brl(-adjustment.amount)}
    if slug == "refund-outside":
        adjustment, changed = adjustment_failed_refund_offline(
            adjustment_id=data["adjustment"], means=data["means"], note=data.get("note", ""), actor=actor
        )
        if not changed:
            return str(_("Este reembolso já estava marcado como feito pela loja; nada mudou."))
        return str(_("Reembolso de %(amount)s registrado como feito pela loja, por fora.")) % {
            "amount": format_brl(-adjustment.amount)
        }
    if slug == "refund-drop":
        failed, changed = adjustment_failed_refund_drop(
            adjustment_id=data["adjustment"], reason=data["reason"], actor=actor
        )
        if not changed:
            return str(_("Este reembolso já estava descartado; nada mudou."))
        return str(_("Reembolso recusado de %(amount)s descartado; nada foi devolvido.")) % {
            "amount": format_brl(-failed.amount)
        }
    if slug == "cancel":
        cancel = order_cancel(
            order_id=order.public_id, reason=data["reason"], restock=data.get("restock", False), actor=actor
        )
        order.refresh_from_db(fields=["status"])
        if order.status != OrderStatus.CANCELED:  # what had shipped stays: "Pedido cancelado." next to "Enviado"
            done = str(_("Cancelado o que não tinha sido enviado; o que já foi enviado continua no pedido."))
        else:
            done = str(_("Pedido cancelado."))
        refund = order.adjustments.filter(type="refund", pk__gt=cancel.pk).first()  # the one the cancel wrote
        if refund is not None:
            # QA walk: "Pedido cancelado." alone, while the same click had also sent R$ 71,82 back to the buyer.
            return f"{done} {by_hand_refund_message(order, -refund.amount) or _refund_requested(-refund.amount)}"
        return done
    if slug == "return-request":
        return _return_request_step(order, data, actor)
    if slug == "buyer-contact":
        changed = order_buyer_contact_set(
            order_id=order.public_id, first_name=data["first_name"], last_name=data["last_name"],
            email=data["email"], phone=data["phone"], actor=actor,
        )  # fmt: skip
        if not changed:
            return str(_("Nada mudou: os dados do comprador já eram esses."))
        labels = ", ".join(str(form.fields[field].label).lower() for field in changed)
        return str(_("Dados do comprador salvos (%(fields)s).")) % {"fields": labels}
    if slug == "buyer-tax-id":
        previous = order.buyer_tax_id
        saved = order_buyer_tax_id_set(order_id=order.public_id, tax_id=data["tax_id"], actor=actor)
        issued = _sale_notes_authorized(saved)
        if previous and saved.buyer_tax_id != previous and issued:
            # The NF-e is not re-issued by itself: SEFAZ does not let a carta de correção change the recipient; the
            # NF-e box's "Cancelar e reemitir" does it within 24 h. "Salvo" alone read as if the note had been fixed.
            return str(
                _(
                    "CPF/CNPJ do comprador salvo. A NF-e nº %(number)s, já autorizada, continua com o anterior "
                    "(%(previous)s): o destinatário não se corrige por carta de correção. Até 24 horas após a "
                    "autorização, use “Cancelar e reemitir com os dados corrigidos” no quadro da NF-e deste pedido; "
                    "depois disso, fale com o seu contador."
                )
            ) % {"number": issued[0].get("number"), "previous": tax_id_text(previous)}
        return str(_("CPF/CNPJ do comprador salvo."))
    if slug == "destination":
        return _destination_saved(order, form, actor, warnings)
    if slug == "note":
        order_note_add(order_id=order.public_id, text=data["text"], actor=actor)
        return str(_("Nota adicionada."))
    order_email_resend(order_id=order.public_id, kind=data["kind"], actor=actor)
    return str(_("E-mail reenviado."))


def _destination_saved(order: Order, form: forms.OrderActionForm, actor: str, warnings: list[str]) -> str:
    """Save the corrected address; `warnings` gets what staff should know after it: the freight the new CEP costs
    (`orders.extras.destination_notes`, run after the save's commit: a carrier quote may reach the network; staff
    confirmed it before, DestinationForm) and an authorized NF-e that still carries the old address."""
    data = form.cleaned_data
    before = dict(order.destination or {})
    changed = order_destination_set(
        order_id=order.public_id, postal_code=data["postal_code"], street=data["street"], number=data["number"],
        complement=data["complement"], neighborhood=data["neighborhood"], city=data["city"], state=data["state"],
        actor=actor,
    )  # fmt: skip
    if not changed:
        return str(_("Nada mudou: o endereço de entrega já era esse."))
    order.refresh_from_db(fields=["destination"])
    warnings.extend(destination_notes(order, before))
    issued = _sale_notes_authorized(order)
    if issued:
        # A carta de correção cannot change the recipient's address either (SEFAZ): cancel and issue it again.
        warnings.append(
            str(
                _(
                    "A NF-e nº %(number)s, já autorizada, continua com o endereço anterior. Até 24 horas após a "
                    "autorização, use “Cancelar e reemitir com os dados corrigidos” no quadro da NF-e deste pedido; "
                    "depois disso, fale com o seu contador."
                )
            )
            % {"number": issued[0].get("number")}
        )
    words = [str(form.fields[key].label) for key in changed]
    labels = ", ".join(word if word.isupper() else word.lower() for word in words)  # "CEP, rua, UF"
    saved = _("Endereço de entrega salvo (%(fields)s). O comprador vê o novo na página do pedido e nos e-mails.")
    return str(saved) % {"fields": labels}


def _sale_notes_authorized(order: Order) -> list[dict]:
    """The order's authorized sale NF-e (not its NF-e de devolução: `purpose` "return"), the current one first."""
    documents = order_extras(order).get("fiscal_documents") or ()
    return [d for d in documents if d.get("status") == "authorized" and not d.get("purpose")]


def _tracking_warnings(code: str, order: Order) -> list[str]:
    """A code already on another order is accepted but named (QA walk: the same code went on two orders without a
    word; a typo or a label stuck on the wrong parcel, and the buyer follows someone else's delivery). Not refused:
    a carrier may carry two orders of one buyer in one parcel."""
    numbers = orders_sharing_tracking(code, order=order)
    if not numbers:
        return []
    others = ", ".join(f"#{number}" for number in numbers)
    return [
        str(
            ngettext(
                "Atenção: o código de rastreio %(code)s também está no pedido %(orders)s. Confira se o código está "
                "certo; se for outro, use “Corrigir rastreio”.",
                "Atenção: o código de rastreio %(code)s também está nos pedidos %(orders)s. Confira se o código está "
                "certo; se for outro, use “Corrigir rastreio”.",
                len(numbers),
            )
        )
        % {"code": code, "orders": others}
    ]


def offline_refund_message(amount: int) -> str:
    """After a refund of an order paid outside the shop (manual sale, balcão): no payment provider will send the
    money, so staff are told to pay it themselves and then record it (QA walk: "Reembolso de R$ 30,00 solicitado"
    read as if the shop's system would pay it)."""
    return str(
        _(
            "Reembolso de %(amount)s registrado, a pagar pela loja: este pedido foi pago fora da loja, então nenhum "
            "sistema devolve o dinheiro. Devolva %(amount)s ao comprador (Pix, dinheiro ou transferência) e depois "
            "use “Marcar como reembolsado (fora da loja)” neste pedido."
        )
    ) % {"amount": format_brl(amount)}


def _refund_requested(amount: int) -> str:
    """A refund the Pix PSP or the card gateway pays: asked now, its result comes on the timeline."""
    return str(_("Reembolso de %(amount)s solicitado.")) % {"amount": format_brl(amount)}


def by_hand_refund_message(order: Order, amount: int) -> str:
    """What staff must do themselves for a refund no system pays: an order paid outside the shop, or a boleto (no
    estorno: the shop transfers the money and records it under "Devoluções de boleto"; QA walk: "Reembolso de
    R$ 50,00 solicitado" read as if the gateway would pay it, and nothing on the order said where to go). Empty
    when the Pix PSP or the card gateway sends the money back."""
    if not refund_goes_through_psp(order):
        return offline_refund_message(amount)
    if order.payment_type == "boleto":
        return str(
            _(
                "Reembolso de %(amount)s registrado, a transferir pela loja: boleto não tem estorno automático. "
                "Combine com o comprador uma chave Pix ou conta, transfira %(amount)s e registre a transferência "
                "em Pagamentos → Devoluções de boleto."
            )
        ) % {"amount": format_brl(amount)}
    return ""


# A step the request had already passed when the service locked it: nothing changed (no event, no e-mail), so the
# page says so instead of repeating the success message — also for two clicks at the same instant.
_NOTHING_CHANGED = {
    "approve": _("Esta devolução já estava aprovada; nada mudou."),
    "reject": _("Esta devolução já estava recusada; nada mudou."),
    "receive": _("Os itens desta devolução já estavam recebidos; nada mudou."),
    "refund": _("Esta devolução já estava reembolsada; nada mudou."),
    "refund_offline": _("Esta devolução já estava reembolsada; nada mudou."),
    "retry": _("Esta devolução já estava reembolsada; nada mudou."),
}


def _return_request_step(order: Order, data: dict, actor: str) -> str:
    return_id, step = data["request"], data["step"]
    if step == "approve":
        done = return_request_approve(return_id=return_id, note=data.get("note", ""), actor=actor)
        success = str(_("Devolução aprovada; o comprador e a plataforma foram avisados."))
    elif step == "reject":
        done = return_request_reject(return_id=return_id, note=data.get("note", ""), actor=actor)
        success = str(_("Devolução recusada."))
    elif step == "receive":
        done = return_request_receive(return_id=return_id, restock=data.get("restock", False), actor=actor)
        success = str(_("Itens recebidos; devolução registrada. Falta reembolsar."))
    elif step == "refund_offline":
        done = return_request_refund_offline(
            return_id=return_id, means=data["means"], note=data.get("offline_note", ""), actor=actor
        )
        success = str(_("Reembolso de %(amount)s da devolução registrado como feito pela loja, por fora.")) % {
            "amount": format_brl(done.request.refund_amount)
        }
    elif step == "retry":
        done = return_request_refund_retry(return_id=return_id, actor=actor)
        success = str(_("Reembolso de %(amount)s da devolução solicitado de novo.")) % {
            "amount": format_brl(done.request.refund_amount)
        }
        if note := by_hand_refund_message(order, done.request.refund_amount):
            success = note
    else:
        done = return_request_refund(return_id=return_id, amount=data.get("amount"), actor=actor)
        success = str(_("Reembolso de %(amount)s da devolução solicitado.")) % {
            "amount": format_brl(done.request.refund_amount)
        }
        if not done.request.refund_amount:  # the service asked for no refund at all: say that, not "R$ 0,00 asked"
            success = str(_("Devolução encerrada sem reembolso."))
        elif note := by_hand_refund_message(order, done.request.refund_amount):
            success = note
    if not done.changed and done.request.status == "refund_pending":
        return str(_("O reembolso desta devolução já foi solicitado e aguarda a confirmação; nada mudou."))
    return success if done.changed else str(_NOTHING_CHANGED[step])
