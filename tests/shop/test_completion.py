"""Completion: Pix (async via sandbox PSP + webhook + signal) and card (sync) (BCP §4.3, §11; PIX.md §2–§3)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.conf import settings
from django.utils import timezone

from orders.models import Order
from payments.models import PixCharge, PixRefund
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_active_for_reference, pix_charge_latest_for_reference
from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_cancel, checkout_complete, checkout_create, checkout_get, checkout_update
from shop.checkout.types import CheckoutInput, CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import Checkout, Variant
from tests.shop.checkout_factories import BUYER, full_input, make_location, make_shipping, make_variant, pickup

pytestmark = pytest.mark.django_db

PIX = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")
CARD_OK = InstrumentInput(
    id="instr_c", handler_id="gpay", type="card", credential={"type": "PAYMENT_GATEWAY", "token": "success_token"}
)
CARD_FAIL = replace(CARD_OK, credential={"type": "PAYMENT_GATEWAY", "token": "fail_token"})


def ready_checkout(*, stock: int = 10, quantity: int = 2, payment: PaymentInput | None = None) -> Checkout:
    make_variant(price=4290, stock=stock)
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", quantity), option="pac"), payment=payment)
    result = checkout_create(data=data)
    assert result.checkout.status == "ready_for_complete", result.messages
    return result.checkout


def stock() -> int:
    return Variant.objects.get(sku="SKU-CAFE-500G").stock


def complete(checkout: Checkout, *instruments: InstrumentInput):
    return checkout_complete(
        checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=instruments))
    )


def test_card_success_completes_synchronously_with_order_bcp_chk_11():
    checkout = ready_checkout()
    result = complete(checkout, CARD_OK)
    view = checkout_view(result.checkout)
    assert view.status == "completed"
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert (view.order.id, view.order.permalink_url) == (order.public_id, order.permalink_url)
    assert (view.continue_url, view.expires_at) == (None, None)
    assert stock() == 8
    assert order.lines.count() == 1


def test_card_decline_is_payment_failed_and_releases_stock_bcp_pay_06():
    checkout = ready_checkout()
    result = complete(checkout, CARD_FAIL)
    assert result.checkout.status == "incomplete"
    failed = [m for m in result.messages if m.code == "payment_failed"]
    assert [(m.type, m.severity, m.path) for m in failed] == [("error", "recoverable", "$.payment.instruments[0]")]
    assert stock() == 10
    assert not Order.objects.exists()


def test_complete_needs_exactly_one_known_instrument_bcp_chk_10_pay_03():
    """BCP-CHK-10: exactly one instrument, else errors and no order."""
    checkout = ready_checkout()
    cases = [
        ((), "$.payment.instruments"),
        ((PIX, CARD_OK), "$.payment.instruments"),
        ((replace(PIX, handler_id="nope"),), "$.payment.instruments[0].handler_id"),
        ((replace(PIX, type="card"),), "$.payment.instruments[0].type"),
        ((replace(CARD_OK, credential=None),), "$.payment.instruments[0].credential"),
    ]
    for instruments, path in cases:
        result = complete(checkout, *instruments)
        assert result.checkout.status == "ready_for_complete"
        assert (result.messages[-1].severity, result.messages[-1].path) == ("recoverable", path)
    assert not Order.objects.exists()
    assert stock() == 10


def test_an_instrument_of_the_wrong_type_names_the_handler_and_the_type_it_takes_bcp_pay_03():
    """Agent walk: `{"handler_id": "pix_recebedor_001", "type": "card"}` was answered "Instrumento incompatível com o
    Pix.", naming neither what was wrong nor what to send (BCP §5.1). Now the handler, the type it takes and the one
    sent; nothing charged, no order."""
    checkout = ready_checkout()
    cases = [
        (replace(PIX, type="card"), "pix_instrument_mismatch", "pix_recebedor_001", "pix", "card"),
        (replace(CARD_OK, type="pix"), "payment_failed", "gpay", "card", "pix"),
    ]
    for instrument, code, handler, expected, sent in cases:
        result = complete(checkout, instrument)
        assert result.checkout.status == "ready_for_complete"
        assert [(m.code, m.path, m.content) for m in result.messages if m.type == "error"] == [
            (
                code,
                "$.payment.instruments[0].type",
                f"O meio de pagamento {handler} aceita type “{expected}”, não “{sent}”.",
            )
        ]
    assert not Order.objects.exists()
    assert stock() == 10


def test_complete_from_incomplete_returns_blocking_errors():
    make_variant()
    created = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),)))
    result = complete(created.checkout, CARD_OK)
    assert result.checkout.status == "incomplete"
    assert [m.code for m in result.messages] == ["field_required", "field_required", "field_required", "field_required"]
    assert not Order.objects.exists()


def test_selecting_pix_on_a_ready_checkout_attaches_a_charge_pix_2_2():
    checkout = ready_checkout(payment=PaymentInput(instruments=(PIX,)))
    charge = pix_charge_active_for_reference(checkout.public_id)
    assert (charge.amount, charge.status) == (10470, "active")
    view = checkout_view(checkout_get(checkout_id=checkout.public_id).checkout)
    assert view.pix_charge.txid == charge.txid
    assert [(i.id, i.handler_id, i.type) for i in view.instruments] == [("instr_1", "pix_recebedor_001", "pix")]
    assert view.expires_at >= charge.expires_at


def test_total_change_replaces_the_pix_charge_pix_2_4():
    checkout = ready_checkout(payment=PaymentInput(instruments=(PIX,)))
    first = pix_charge_active_for_reference(checkout.public_id)
    lid = checkout.lines.all()[0].public_id
    data = replace(
        full_input(LineInput("SKU-CAFE-500G", 3, lid), option="pac"), payment=PaymentInput(instruments=(PIX,))
    )
    checkout_update(checkout_id=checkout.public_id, data=data)
    second = pix_charge_active_for_reference(checkout.public_id)
    assert second.txid != first.txid and second.amount == 3 * 4290 + 1890
    assert PixCharge.objects.get(txid=first.txid).status == "revoked"
    # same total again: the same charge is kept
    checkout_update(checkout_id=checkout.public_id, data=data)
    assert pix_charge_active_for_reference(checkout.public_id).txid == second.txid


def test_switching_away_from_pix_revokes_the_charge():
    checkout = ready_checkout(payment=PaymentInput(instruments=(PIX,)))
    lid = checkout.lines.all()[0].public_id
    checkout_update(checkout_id=checkout.public_id, data=full_input(LineInput("SKU-CAFE-500G", 2, lid), option="pac"))
    assert pix_charge_active_for_reference(checkout.public_id) is None


def test_pix_complete_then_settlement_places_the_order(django_capture_on_commit_callbacks):
    # given a ready checkout completed with Pix
    checkout = ready_checkout()
    result = complete(checkout, PIX)
    # then it waits for the payment, holding the stock
    assert result.checkout.status == "complete_in_progress"
    assert [(m.type, m.code, m.path) for m in result.messages] == [
        ("info", "pix_awaiting_payment", "$.payment.instruments[0]")
    ]
    assert stock() == 8
    assert checkout_view(result.checkout).order is None
    charge = pix_charge_latest_for_reference(checkout.public_id)
    # and updates/completes are refused as recoverable (BCP-CHK-12)
    again = complete(checkout, PIX)
    assert (again.messages[-1].code, again.messages[-1].severity) == ("invalid_checkout_status", "recoverable")
    update = checkout_update(checkout_id=checkout.public_id, data=full_input(LineInput("SKU-CAFE-500G", 1)))
    assert (update.messages[-1].code, update.messages[-1].severity) == ("invalid_checkout_status", "recoverable")
    # when the buyer pays (sandbox PSP → signed webhook → task → settlement → charge_settled)
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=charge.txid, options=PayOptions())
    # then the checkout is completed with its order
    done = checkout_get(checkout_id=checkout.public_id).checkout
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert (done.status, done.order_id, done.order_permalink_url) == ("completed", order.public_id, order.permalink_url)
    assert [m["code"] for m in done.messages] == []
    assert stock() == 8


def test_storefront_paid_before_complete_completes_at_settlement_pix_3_1(django_capture_on_commit_callbacks):
    # A storefront checkout (session key): the buyer's payment is the completion. Agent checkouts wait for
    # the platform's complete (tests/shop/test_paid_before_complete.py).
    checkout = ready_checkout(payment=PaymentInput(instruments=(PIX,)))
    Checkout.objects.filter(pk=checkout.pk).update(session_key="sess-1")
    charge = pix_charge_active_for_reference(checkout.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=charge.txid, options=PayOptions())
    done = checkout_get(checkout_id=checkout.public_id).checkout
    assert done.status == "completed"
    assert Order.objects.filter(checkout_id=checkout.public_id).count() == 1
    assert stock() == 8


def test_cancel_during_pix_releases_stock_and_late_payment_is_refunded(django_capture_on_commit_callbacks):
    checkout = ready_checkout()
    complete(checkout, PIX)
    charge = pix_charge_latest_for_reference(checkout.public_id)
    assert stock() == 8
    with django_capture_on_commit_callbacks(execute=True):
        canceled = checkout_cancel(checkout_id=checkout.public_id)
    assert canceled.checkout.status == "canceled"
    assert stock() == 10
    assert PixCharge.objects.get(txid=charge.txid).status == "revoked"
    # QA walk: the canceled checkout still said "Aguardando o pagamento do Pix."
    assert "pix_awaiting_payment" not in [m.code for m in canceled.messages]
    assert "pix_awaiting_payment" not in [m.code for m in checkout_get(checkout_id=checkout.public_id).messages]


def test_settlement_of_a_canceled_checkout_is_rejected_and_refunded(django_capture_on_commit_callbacks):
    checkout = ready_checkout()
    complete(checkout, PIX)
    charge = pix_charge_latest_for_reference(checkout.public_id)
    # the checkout is canceled locally while the PSP still accepts the charge (revoke not yet at the PSP)
    Checkout.objects.filter(pk=checkout.pk).update(status="canceled")
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=charge.txid, options=PayOptions())
    assert not Order.objects.exists()
    assert PixRefund.objects.filter(reference=checkout.public_id).count() == 1


def test_pix_handler_id_comes_from_settings():
    assert PIX.handler_id == settings.PIX_HANDLER_ID


def test_expiry_of_a_pix_in_progress_checkout_releases_stock_bcp_chk_15(django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    from shop.tasks import expire_checkouts

    checkout = ready_checkout()
    complete(checkout, PIX)
    assert stock() == 8
    Checkout.objects.filter(pk=checkout.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert expire_checkouts.delay().get() == 1
    assert Checkout.objects.get(pk=checkout.pk).status == "canceled"
    assert stock() == 10


def test_unpaid_expired_charge_moves_checkout_back_to_incomplete_pix_3():
    from datetime import timedelta

    from django.utils import timezone

    from shop.checkout.services import checkout_expire_due

    checkout = ready_checkout()
    complete(checkout, PIX)
    charge = pix_charge_latest_for_reference(checkout.public_id)
    PixCharge.objects.filter(pk=charge.pk).update(expires_at=timezone.now() - timedelta(minutes=10))
    assert checkout_expire_due() == 1
    lapsed = checkout_get(checkout_id=checkout.public_id)
    assert lapsed.checkout.status == "incomplete"
    assert [(m.code, m.severity, m.path) for m in lapsed.messages] == [
        ("pix_charge_expired", "recoverable", "$.payment.instruments[0]")
    ]
    assert stock() == 10
    # selecting Pix again on a fresh update gets a new charge and the checkout is ready again
    lid = lapsed.checkout.lines.all()[0].public_id
    data = replace(
        full_input(LineInput("SKU-CAFE-500G", 2, lid), option="pac"), payment=PaymentInput(instruments=(PIX,))
    )
    again = checkout_update(checkout_id=checkout.public_id, data=data)
    assert again.checkout.status == "ready_for_complete"
    assert pix_charge_active_for_reference(checkout.public_id).txid != charge.txid


def test_stock_return_signal_restocks_variants():
    from orders.signals import stock_return_requested

    make_variant(stock=3)
    stock_return_requested.send(sender=Order, order_id="order_x", items=[("SKU-CAFE-500G", 2), ("UNKNOWN", 1)])
    assert stock() == 5


def test_pix_outside_its_amount_window_is_payment_failed(settings):
    settings.PIX_MAX_AMOUNT = 10000
    checkout = ready_checkout()  # total 10470
    result = complete(checkout, PIX)
    assert result.checkout.status == "ready_for_complete"
    assert (result.messages[-1].code, result.messages[-1].path) == ("payment_failed", "$.payment.instruments[0]")
    assert pix_charge_latest_for_reference(checkout.public_id) is None
    assert stock() == 10


def test_price_change_before_complete_replaces_the_charge_pix_3_step_4():
    checkout = ready_checkout(payment=PaymentInput(instruments=(PIX,)))
    old = pix_charge_active_for_reference(checkout.public_id)
    Variant.objects.filter(sku="SKU-CAFE-500G").update(price=5000)
    result = complete(checkout, PIX)
    assert result.checkout.status == "ready_for_complete"
    assert (result.messages[-1].code, result.messages[-1].path) == ("pix_charge_replaced", "$.payment.instruments[0]")
    new = pix_charge_active_for_reference(checkout.public_id)
    assert (new.amount, new.txid != old.txid) == (2 * 5000 + 1890, True)
    assert stock() == 8  # held for the new charge's lifetime (issue 31), as it was for the replaced one
    # the platform completes again with the new total shown, and the held units are not taken twice
    assert complete(checkout, PIX).checkout.status == "complete_in_progress"
    assert stock() == 8


def test_coupon_use_is_recorded_at_complete_and_released_on_cancel():
    from shop.models import CouponRedemption
    from tests.shop.checkout_factories import make_coupon

    make_coupon("BEMVINDO10", percent=10, usage_limit_per_email=1)
    make_variant(price=4290, stock=10)
    make_shipping()
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac", codes=("bemvindo10",))
    first = checkout_create(data=data).checkout
    complete(first, PIX)
    assert list(CouponRedemption.objects.values_list("checkout__public_id", "email", "amount")) == [
        (first.public_id, "ana@example.com.br", 429)
    ]
    # while it is held, the same e-mail cannot use the coupon again
    second = checkout_create(data=data)
    assert [(m.code, m.path) for m in second.messages if m.type == "warning"] == [
        ("discount_code_user_ineligible", "$.discounts.codes[0]")
    ]
    # canceling the first gives the use back
    checkout_cancel(checkout_id=first.public_id)
    assert not CouponRedemption.objects.exists()
    third = checkout_create(data=data)
    assert [m.code for m in third.messages if m.type == "warning"] == []


def test_the_pix_description_names_the_shop_and_the_purchase_not_an_order_number() -> None:
    """Issue 33: orders are numbered only when placed, so the payer's bank app shows the shop and a short code
    of the purchase (the end of the checkout id the order keeps), never a number that may never exist."""
    from payments.sandbox.models import SandboxCob

    checkout = ready_checkout(payment=PaymentInput(instruments=(PIX,)))
    first = pix_charge_active_for_reference(checkout.public_id)
    code = checkout.public_id[-6:].upper()
    assert first.description == f"Loja Exemplo — compra {code}"
    assert SandboxCob.objects.get(txid=first.txid).solicitacao_pagador == f"Loja Exemplo — compra {code}"


def ready_checkout_card_order() -> Order:
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
    created = checkout_create(data=data).checkout
    result = complete(created, CARD_OK)
    assert result.checkout.status == "completed", result.messages
    return Order.objects.get(checkout_id=created.public_id)


def test_only_placed_orders_are_numbered_with_no_gaps(django_capture_on_commit_callbacks) -> None:
    """Issue 33: #1002 and #1010–#1012 never appeared because abandoned Pix checkouts and declined cards had
    reserved them. Checkouts that charged a Pix, were declined or canceled take no number; the next placed
    orders are consecutive."""
    ready_checkout(stock=50, payment=PaymentInput(instruments=(PIX,)))  # a Pix charged and abandoned
    first = ready_checkout_card_order()
    # a declined card, a canceled checkout
    declined = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1), option="pac")).checkout
    assert complete(declined, CARD_FAIL).checkout.status == "incomplete"
    canceled = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1), option="pac")).checkout
    checkout_cancel(checkout_id=canceled.public_id)
    # a Pix paid
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
    paid = checkout_create(data=replace(data, payment=PaymentInput(instruments=(PIX,)))).checkout
    complete(paid, PIX)
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=pix_charge_active_for_reference(paid.public_id).txid, options=PayOptions())
    second = Order.objects.get(checkout_id=paid.public_id)
    # the declined card paid on retry (the buyer confirms the checkout again first)
    lid = declined.lines.get().public_id
    checkout_update(checkout_id=declined.public_id, data=full_input(LineInput("SKU-CAFE-500G", 1, lid), option="pac"))
    assert complete(declined, CARD_OK).checkout.status == "completed"
    third = Order.objects.get(checkout_id=declined.public_id)
    assert [second.number, third.number] == [first.number + 1, first.number + 2]


def test_a_rolled_back_placement_gives_its_number_back() -> None:
    from django.db import transaction

    from orders.services.placement import _next_number

    ready_checkout()
    first = ready_checkout_card_order()
    with pytest.raises(RuntimeError), transaction.atomic():
        assert _next_number() == first.number + 1
        raise RuntimeError("placement failed after drawing")
    assert ready_checkout_card_order().number == first.number + 1


def test_stock_taken_with_the_checkout_write_is_all_or_nothing() -> None:
    """Issue 11: one variant and no coupon reserve in the statement that writes the checkout and its event
    (shop.checkout.charge.reserve_and_save_status); short of stock, none of the three is written."""
    from shop.checkout.charge import reserve_and_save_status
    from shop.checkout.core import lock
    from shop.checkout.evaluate import evaluate
    from shop.models import CheckoutEvent

    checkout = ready_checkout(stock=10, quantity=2)
    events = CheckoutEvent.objects.filter(checkout=checkout).count()
    locked = lock(checkout.public_id, lines=True)
    lines = list(locked.lines.all())
    data = full_input(LineInput("SKU-CAFE-500G", 2, lines[0].public_id), option="pac")
    ev = evaluate(checkout=locked, existing_lines=lines, data=data, now=timezone.now())
    Variant.objects.filter(sku="SKU-CAFE-500G").update(stock=1)  # taken meanwhile by another buyer
    assert reserve_and_save_status(locked, lines, ev, "complete_in_progress", "payment_pending") is False
    stored = Checkout.objects.get(pk=checkout.pk)
    assert (stored.status, stored.stock_reserved, stock()) == ("ready_for_complete", False, 1)
    assert (locked.status, locked.stock_reserved) == ("ready_for_complete", False)
    assert CheckoutEvent.objects.filter(checkout=checkout).count() == events
    Variant.objects.filter(sku="SKU-CAFE-500G").update(stock=10)
    assert reserve_and_save_status(locked, lines, ev, "complete_in_progress", "payment_pending") is True
    stored = Checkout.objects.get(pk=checkout.pk)
    assert (stored.status, stored.stock_reserved, stock()) == ("complete_in_progress", True, 8)
    assert CheckoutEvent.objects.filter(checkout=checkout).latest("id").kind == "payment_pending"


def test_a_product_renamed_before_complete_places_no_order_and_says_where_bcp_chk_20():
    """BCP §4.3 (the order is built from the checkout at that moment), BCP-CHK-20: the merchant renamed the
    product between the platform's last look and its complete, same price and total. The order would have
    carried a title the buyer never saw: the card is not charged, the warning names the line's title, and a
    second complete (the platform has now seen it) places the order under the new name."""
    from shop.models import Product

    checkout = ready_checkout()
    product = Product.objects.get(variants__sku="SKU-CAFE-500G")
    product.title = "Café comum 500 g"
    product.save()
    refused = complete(checkout, CARD_OK)
    assert refused.checkout.status == "ready_for_complete"
    assert [(m.type, m.code, m.path) for m in refused.messages] == [
        ("warning", "checkout_changed", "$.line_items[0].item.title")
    ]
    assert refused.messages[0].content == (
        "O produto Produto SKU-CAFE-500G agora se chama Café comum 500 g; confira antes de concluir."
    )
    assert (Order.objects.filter(checkout_id=checkout.public_id).count(), stock()) == (0, 10)
    placed = complete(checkout, CARD_OK)
    assert placed.checkout.status == "completed"
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert list(order.lines.values_list("title", flat=True)) == ["Café comum 500 g"]


def test_a_delivery_promise_changed_before_a_pix_complete_keeps_the_charge_and_says_where_bcp_chk_20():
    """The merchant made PAC slower (same price): the option the buyer chose now promises another time. The
    Pix complete is refused with a warning at that option; the total did not move, so the charge and the units
    it holds stay as they were (no new Pix), and the next complete waits for that same charge."""
    from shop.models import ShippingMethod, ShippingRate

    checkout = ready_checkout(payment=PaymentInput(instruments=(PIX,)))
    charge = pix_charge_active_for_reference(checkout.public_id)
    rate = ShippingRate.objects.get(method__code="pac", uf="SP")
    rate.days_min, rate.days_max = 10, 15
    rate.save()
    ShippingMethod.objects.get(code="pac").save()  # as the admin saves the method with its rates inline
    refused = complete(checkout, PIX)
    assert refused.checkout.status == "ready_for_complete"
    assert [(m.code, m.path) for m in refused.messages] == [
        ("checkout_changed", "$.fulfillment.methods[0].groups[0].options[0]")
    ]
    assert refused.messages[0].content == (
        "A entrega escolhida mudou de PAC (Chega em 3 a 5 dias úteis, Correios) para PAC (Chega em 10 a 15 dias "
        "úteis, Correios); confira antes de concluir."
    )
    assert pix_charge_active_for_reference(checkout.public_id).txid == charge.txid
    assert stock() == 8
    assert complete(checkout, PIX).checkout.status == "complete_in_progress"
    assert (pix_charge_active_for_reference(checkout.public_id).txid, stock()) == (charge.txid, 8)


def test_a_posting_time_changed_before_complete_is_said_at_the_option_and_the_order_keeps_the_new_one_bcp_chk_20():
    """Closing note: the merchant set a "prazo de postagem" of 2 business days (Dados da loja → Frete) between the
    agent's look at the checkout and its complete. The options the agent read promised PAC's 3 to 5 days from the
    posting with no posting time; the order dated its arrival 2 + 3 to 5 days from the payment, and the complete said
    nothing. Now the complete is refused with a warning at the option naming both promises (as the options say
    them, orders.arrival.promise_words); the next complete places the order under the estimate now shown."""
    from shop.models import StoreSettings

    # the merchant's own terms and delivery policy (the standard texts name the posting time: they would change too)
    own = {"terms_text": "Termos da loja.", "shipping_text": "Enviamos pelos Correios."}
    store = StoreSettings.objects.create(handling_days=0, **own)
    checkout = ready_checkout()
    store.handling_days = 2
    store.save()
    refused = complete(checkout, CARD_OK)
    assert refused.checkout.status == "ready_for_complete"
    assert [(m.type, m.code, m.path, m.content) for m in refused.messages] == [
        (
            "warning",
            "checkout_changed",
            "$.fulfillment.methods[0].groups[0].options[0]",
            "A entrega escolhida mudou de PAC (Chega em 3 a 5 dias úteis, Correios) para PAC (Chega em 3 a 5 dias úteis"
            " após a postagem; a loja posta em até 2 dias úteis após o pagamento (5 a 7 dias úteis desde o pagamento),"
            " Correios); confira antes de concluir.",
        )
    ]
    assert not Order.objects.filter(checkout_id=checkout.public_id).exists()
    assert complete(checkout, CARD_OK).checkout.status == "completed"
    expectation = Order.objects.get(checkout_id=checkout.public_id).expectations.get()
    assert (expectation.days_min, expectation.days_max, expectation.handling_days) == (5, 7, 2)


def test_sold_out_between_update_and_a_card_complete_says_only_what_changed_bcp_chk_18():
    """QA walk: a human bought the last units between the agent's update and its card complete. The answer
    said `out_of_stock` at the line and also "O checkout mudou; revise o total" at `$.totals`, though the total
    had not moved: a warning pointing at the wrong node. Now only the line's error; nothing is charged."""
    checkout = ready_checkout()
    Variant.objects.filter(sku="SKU-CAFE-500G").update(stock=0)
    refused = complete(checkout, CARD_OK)
    assert refused.checkout.status == "incomplete"
    assert [(m.type, m.code, m.path) for m in refused.messages] == [("error", "out_of_stock", "$.line_items[0]")]
    assert not Order.objects.filter(checkout_id=checkout.public_id).exists()


def test_a_pickup_point_closed_before_complete_is_said_by_name_not_unknown_bcp_ful_05():
    """QA walk: the store deactivated the pickup point the agent had chosen, between its update and its complete.
    The complete answered "Loja de retirada desconhecida." (unknown), about a point the shop itself offered.
    Now it names the point and says it closed; nothing is charged or reserved, no order."""
    make_variant(price=4290, stock=10)
    make_shipping()
    location = make_location()
    make_location("Loja Pinheiros")  # still open: pickup stays offered
    data = CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), buyer=BUYER, fulfillment=pickup(location.public_id))
    checkout = checkout_create(data=data).checkout
    assert checkout.status == "ready_for_complete"
    location.active = False
    location.save()
    refused = complete(checkout, CARD_OK)
    assert refused.checkout.status == "incomplete"
    assert [(m.code, m.path, m.content) for m in refused.messages if m.type == "error"] == [
        (
            "field_invalid",
            "$.fulfillment.methods[0].selected_destination_id",
            "A loja de retirada Loja Paulista não está mais disponível; escolha outra.",
        )
    ]
    assert (Order.objects.filter(checkout_id=checkout.public_id).count(), stock()) == (0, 10)


def test_the_only_pickup_point_closed_before_complete_is_one_clear_message_bcp_ful_05():
    """QA walk: with the store's only pickup point closed, the complete answered "Método 'pickup' não
    disponível." (a Python repr) plus a `field_required` asking to "escolha retirada na loja", the very option
    just refused. Now one message naming the option by its title and what is left (BCP §5.1: content in pt-BR)."""
    make_variant(price=4290, stock=10)
    make_shipping()
    location = make_location()
    data = CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), buyer=BUYER, fulfillment=pickup(location.public_id))
    checkout = checkout_create(data=data).checkout
    assert checkout.status == "ready_for_complete"
    location.active = False
    location.save()
    refused = complete(checkout, CARD_OK)
    assert refused.checkout.status == "incomplete"
    assert [(m.code, m.path, m.content) for m in refused.messages if m.type == "error"] == [
        (
            "fulfillment_method_unsupported",
            "$.fulfillment.methods[0].type",
            "Retirada na loja não está disponível no momento; informe um endereço de entrega.",
        )
    ]
    assert (Order.objects.filter(checkout_id=checkout.public_id).count(), stock()) == (0, 10)


def test_a_coupon_disabled_before_a_pix_complete_is_said_as_disabled_not_unknown_bcp_dsc_03():
    # BCP-DSC-03.
    """QA walk: the store deactivated the coupon the agent had applied, between its update and its Pix complete.
    The complete rightly refused (the total moved, a new Pix) but said "Cupom 'BEMVINDO10' não encontrado."
    about a code it had applied a moment before. Now it says the coupon is no longer available; no order."""
    from tests.shop.checkout_factories import make_coupon

    coupon = make_coupon("BEMVINDO10", percent=10)
    make_variant(price=4290, stock=10)
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 1), codes=("bemvindo10",)), payment=PaymentInput((PIX,)))
    checkout = checkout_create(data=data).checkout
    assert (checkout.status, checkout.total_amount) == ("ready_for_complete", 4290 - 429 + 1890)
    coupon.active = False
    coupon.save()
    refused = complete(checkout, PIX)
    assert refused.checkout.status == "ready_for_complete"
    assert [(m.code, m.path, m.content) for m in refused.messages if m.type == "warning"] == [
        ("discount_code_invalid", "$.discounts.codes[0]", "O cupom BEMVINDO10 não está mais disponível."),
        (
            "pix_charge_replaced",
            "$.payment.instruments[0]",
            "O total mudou; um novo Pix foi gerado, confira antes de concluir.",
        ),
    ]
    assert not Order.objects.filter(checkout_id=checkout.public_id).exists()


def test_a_freight_that_only_changed_its_price_is_said_as_such_bcp_chk_20():
    """QA walk: the merchant's price change crossed PAC's free-shipping threshold; the refused complete said
    "A entrega escolhida mudou de PAC (…) para PAC (…)", the same words twice. Now it names the freight's price."""
    checkout = ready_checkout(quantity=2)  # 2 × 42,90 + PAC 18,90; PAC is free from R$ 200
    Variant.objects.filter(sku="SKU-CAFE-500G").update(price=10000)
    refused = complete(checkout, CARD_OK)
    assert refused.checkout.status == "ready_for_complete"
    assert [(m.path, m.content) for m in refused.messages if m.code == "checkout_changed" and "frete" in m.content] == [
        (
            "$.fulfillment.methods[0].groups[0].options[0]",
            "O frete de PAC mudou de R$ 18,90 para R$ 0,00; confira antes de concluir.",
        )
    ]
    assert not Order.objects.filter(checkout_id=checkout.public_id).exists()


def test_a_return_policy_changed_before_complete_is_said_and_the_order_keeps_the_one_confirmed_bcp_chk_20():
    """QA walk: the checkout showed "window": {"days": 30}; the merchant cut the window to 7 days before the
    agent's complete, and the order was placed under 7 days with no word (orders keep the policies in force when
    placed, and a return after day 7 is refused). Now the complete is refused with a warning at that policy; the
    next complete (the platform has seen it) places the order under the policy it now shows."""
    from shop.models import StoreSettings

    store = StoreSettings.objects.create(returns_window_days=30)
    checkout = ready_checkout()
    store.returns_window_days = 7
    store.save()
    refused = complete(checkout, CARD_OK)
    assert refused.checkout.status == "ready_for_complete"
    assert [(m.code, m.path, m.content) for m in refused.messages] == [
        (
            "checkout_changed",
            "$.policies[2]",
            "A loja mudou a política “Trocas e devoluções”; confira antes de concluir.",
        )
    ]
    assert not Order.objects.filter(checkout_id=checkout.public_id).exists()
    assert complete(checkout, CARD_OK).checkout.status == "completed"
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert [p.get("return_window_days") for p in order.policies if p["kind"] == "returns"] == [7]
