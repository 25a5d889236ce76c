"""Charges (ensure/revoke), card sandbox tokens, refunds: the services other apps call (contracts.md)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from payments.card.service import CardPaymentResult
from payments.exceptions import PaymentInputError
from payments.models import CardPayment, PaymentEvent, PixCharge, PixRefund, SandboxCob
from payments.psp.base import PSPPayment
from payments.selectors import pix_charge_active_for_reference, pix_charge_latest_for_reference
from payments.services import (
    card_payment_authorize,
    pix_charge_ensure,
    pix_charge_revoke_for_reference,
    refund_request,
)
from payments.settlement import pix_payment_settle

pytestmark = pytest.mark.django_db


def test_ensure_creates_a_dynamic_charge_at_the_psp() -> None:
    charge = pix_charge_ensure(reference="checkout_1", amount=599900, description="Pedido 1")

    cob = SandboxCob.objects.get(txid=charge.txid)
    assert len(charge.txid) == 32
    assert (charge.status, charge.amount, charge.currency) == ("active", 599900, "BRL")
    assert charge.br_code == cob.br_code
    assert charge.br_code.startswith("00020101021226")
    assert (charge.expires_at - charge.psp_created_at).total_seconds() == 1800
    assert cob.solicitacao_pagador == "Pedido 1"
    assert list(PaymentEvent.objects.values_list("kind", flat=True)) == ["charge_created"]


def test_ensure_with_the_same_amount_returns_the_same_charge() -> None:
    first = pix_charge_ensure(reference="checkout_1", amount=1000)

    again = pix_charge_ensure(reference="checkout_1", amount=1000)

    assert again.pk == first.pk
    assert PixCharge.objects.count() == 1


def test_total_change_revokes_the_old_charge_at_the_psp_and_issues_a_new_one(
    django_capture_on_commit_callbacks: Any,
) -> None:
    old = pix_charge_ensure(reference="checkout_1", amount=1000)

    with django_capture_on_commit_callbacks(execute=True):
        new = pix_charge_ensure(reference="checkout_1", amount=1500)

    old.refresh_from_db()
    assert (old.status, old.status_reason, old.psp_removed) == ("revoked", "replaced", True)
    assert SandboxCob.objects.get(txid=old.txid).status == "REMOVIDA_PELO_USUARIO_RECEBEDOR"
    assert (new.status, new.amount) == ("active", 1500)
    assert pix_charge_active_for_reference("checkout_1") == new
    assert pix_charge_latest_for_reference("checkout_1") == new


def test_revoke_for_reference_is_idempotent(django_capture_on_commit_callbacks: Any) -> None:
    charge = pix_charge_ensure(reference="checkout_1", amount=1000)

    with django_capture_on_commit_callbacks(execute=True):
        pix_charge_revoke_for_reference(reference="checkout_1")
        pix_charge_revoke_for_reference(reference="checkout_1")

    charge.refresh_from_db()
    assert (charge.status, charge.status_reason) == ("revoked", "canceled")
    assert pix_charge_active_for_reference("checkout_1") is None
    assert PaymentEvent.objects.filter(kind="charge_revoked").count() == 1


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"reference": "", "amount": 100}, "reference"),
        ({"reference": "checkout 1", "amount": 100}, "reference"),
        ({"reference": "checkout_1", "amount": 0}, "amount"),
        ({"reference": "checkout_1", "amount": 10.5}, "amount"),
        ({"reference": "checkout_1", "amount": 10_000_001}, "amount"),
        ({"reference": "checkout_1", "amount": 100, "payer_name": "Ana", "payer_tax_id": "123"}, "payer_tax_id"),
        ({"reference": "c_1", "amount": 100, "payer_name": "A", "payer_tax_id": "12ABC34501DEAB"}, "payer_tax_id"),
    ],
)
def test_ensure_bad_input_names_the_field_and_changes_nothing(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(PaymentInputError) as excinfo:
        pix_charge_ensure(**kwargs)

    assert excinfo.value.field == field
    assert PixCharge.objects.count() == 0
    assert SandboxCob.objects.count() == 0


def test_payer_is_sent_as_devedor() -> None:
    charge = pix_charge_ensure(
        reference="checkout_1", amount=100, payer_name="Ana Souza", payer_tax_id="123.456.789-09"
    )

    assert SandboxCob.objects.get(txid=charge.txid).devedor == {"cpf": "12345678909", "nome": "Ana Souza"}


def test_alphanumeric_cnpj_payer_is_sent_as_devedor() -> None:
    """Alphanumeric CNPJ (valid from July 2026): letters are kept, punctuation dropped."""
    charge = pix_charge_ensure(
        reference="checkout_2", amount=100, payer_name="Caju Ltda", payer_tax_id="12.abc.345/01de-35"
    )

    assert SandboxCob.objects.get(txid=charge.txid).devedor == {"cnpj": "12ABC34501DE35", "nome": "Caju Ltda"}


# --- cards ---------------------------------------------------------------------------------------------------------


def test_success_token_is_approved() -> None:
    """BCP-PAY-04: the card token is never stored, only its SHA-256 fingerprint."""
    result = card_payment_authorize(reference="checkout_c", amount=5000, handler_id="gpay", token="success_token")

    payment = CardPayment.objects.get()
    # The card charged, as the sandbox gateway tells it (the test card's brand and last digits, never the number).
    assert result == CardPaymentResult(
        True, "", "Pagamento aprovado", payment.payment_id, brand="visa", last_digits="1111"
    )
    assert payment.payment_id.startswith("cardpay_")
    assert (payment.status, payment.amount, payment.handler_id) == ("approved", 5000, "gpay")
    assert payment.token_fingerprint == hashlib.sha256(b"success_token").hexdigest()


def test_fail_token_is_declined_with_payment_failed() -> None:
    """BCP-PAY-06: a decline is `payment_failed`."""
    result = card_payment_authorize(reference="checkout_c", amount=5000, handler_id="gpay", token="fail_token")

    assert (result.approved, result.code, result.message) == (
        False,
        "payment_failed",
        "Saldo ou limite insuficiente. Use outro cartão ou pague com Pix.",
    )
    assert CardPayment.objects.get().status == "declined"


def test_unknown_token_is_declined() -> None:
    result = card_payment_authorize(
        reference="checkout_c", amount=5000, handler_id="gpay", token="examplePaymentMethodToken"
    )

    assert (result.approved, result.code) == (False, "payment_failed")


def test_card_replay_returns_the_stored_approval_without_a_second_payment() -> None:
    first = card_payment_authorize(reference="checkout_c", amount=5000, handler_id="gpay", token="success_token")

    replay = card_payment_authorize(reference="checkout_c", amount=5000, handler_id="gpay", token="success_token")
    after_approval = card_payment_authorize(reference="checkout_c", amount=5000, handler_id="gpay", token="fail_token")

    assert replay == first
    assert after_approval == first
    assert CardPayment.objects.get().attempts == 1


def test_declined_card_can_be_retried_with_another_card() -> None:
    card_payment_authorize(reference="checkout_c", amount=5000, handler_id="gpay", token="fail_token")

    result = card_payment_authorize(reference="checkout_c", amount=5000, handler_id="gpay", token="success_token")

    payment = CardPayment.objects.get()
    assert result.approved is True
    assert (payment.status, payment.attempts) == ("approved", 2)


def test_approved_reference_with_another_amount_is_refused() -> None:
    card_payment_authorize(reference="checkout_c", amount=5000, handler_id="gpay", token="success_token")

    result = card_payment_authorize(reference="checkout_c", amount=6000, handler_id="gpay", token="success_token")

    assert (result.approved, result.code, result.message) == (
        False,
        "payment_failed",
        "reference already paid with another amount",
    )


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"token": ""}, "token"), ({"handler_id": ""}, "handler_id"), ({"amount": -1}, "amount")]
)
def test_card_bad_input_names_the_field(kwargs: dict[str, Any], field: str) -> None:
    arguments = {"reference": "checkout_c", "amount": 5000, "handler_id": "gpay", "token": "success_token", **kwargs}

    with pytest.raises(PaymentInputError) as excinfo:
        card_payment_authorize(**arguments)

    assert excinfo.value.field == field
    assert CardPayment.objects.count() == 0


# --- refunds -------------------------------------------------------------------------------------------------------


def _settled_charge(reference: str = "checkout_r", amount: int = 10000) -> PixCharge:
    from django.utils import timezone

    from payments.sandbox import services as sandbox

    charge = pix_charge_ensure(reference=reference, amount=amount)
    pix = sandbox.pay(txid=charge.txid, options=sandbox.PayOptions(deliver="none"))[0]
    payment = PSPPayment(end_to_end_id=pix.end_to_end_id, txid=charge.txid, amount_cents=amount, paid_at=timezone.now())
    assert pix_payment_settle(payment=payment, source="poll") == "settled"
    charge.refresh_from_db()
    return charge


def test_refund_request_runs_the_devolucao_and_finishes_once(
    refunds_finished: list[dict[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    # given a settled Pix of R$ 100,00
    charge = _settled_charge()
    # when the order asks a partial refund, twice with the same id
    with django_capture_on_commit_callbacks(execute=True):
        refund = refund_request(reference="checkout_r", amount=2500, refund_id="adj_1", reason="Devolução de item")
        again = refund_request(reference="checkout_r", amount=2500, refund_id="adj_1", reason="Devolução de item")
    # then one devolução ran at the PSP and refund_finished was sent once
    refund.refresh_from_db()
    charge.refresh_from_db()
    assert again.pk == refund.pk
    assert (refund.status, refund.kind, refund.end_to_end_id) == ("completed", "requested", charge.end_to_end_id)
    assert refunds_finished == [
        {"reference": "checkout_r", "refund_id": "adj_1", "status": "completed", "amount": 2500}
    ]
    assert charge.status == "paid"  # partially refunded only


def test_full_refund_marks_the_charge_refunded(django_capture_on_commit_callbacks: Any) -> None:
    _settled_charge(amount=3000)

    with django_capture_on_commit_callbacks(execute=True):
        refund_request(reference="checkout_r", amount=3000, refund_id="adj_full", reason="Pedido cancelado")

    assert PixCharge.objects.get().status == "refunded"


def test_refund_above_what_is_left_is_refused(django_capture_on_commit_callbacks: Any) -> None:
    _settled_charge(amount=3000)
    with django_capture_on_commit_callbacks(execute=True):
        refund_request(reference="checkout_r", amount=2000, refund_id="adj_a", reason="")

    with pytest.raises(PaymentInputError) as excinfo:
        refund_request(reference="checkout_r", amount=1001, refund_id="adj_b", reason="")

    assert str(excinfo.value) == "amount: exceeds what can still be refunded (1000 centavos)"
    assert PixRefund.objects.count() == 1


def test_refund_of_an_unpaid_reference_is_refused() -> None:
    pix_charge_ensure(reference="checkout_unpaid", amount=100)

    with pytest.raises(PaymentInputError) as excinfo:
        refund_request(reference="checkout_unpaid", amount=100, refund_id="adj_x", reason="")

    assert excinfo.value.field == "reference"


def test_refund_id_reused_for_another_amount_is_refused(django_capture_on_commit_callbacks: Any) -> None:
    _settled_charge()
    with django_capture_on_commit_callbacks(execute=True):
        refund_request(reference="checkout_r", amount=100, refund_id="adj_1", reason="")

    with pytest.raises(PaymentInputError) as excinfo:
        refund_request(reference="checkout_r", amount=200, refund_id="adj_1", reason="")

    assert excinfo.value.field == "refund_id"


def test_refund_refused_by_the_psp_finishes_failed(
    settings: Any, refunds_finished: list[dict[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    # given a settled Pix whose devolução the sandbox PSP will refuse
    settings.PIX_SANDBOX_REFUND_AUTOSETTLE = False
    charge = _settled_charge(amount=3000)
    with django_capture_on_commit_callbacks(execute=True):
        refund = refund_request(reference="checkout_r", amount=3000, refund_id="adj_no", reason="")
    refund.refresh_from_db()
    assert refund.status == "pending"
    # when the PSP reports NAO_REALIZADO through its webhook
    from payments.sandbox import services as sandbox

    with django_capture_on_commit_callbacks(execute=True):
        sandbox.refund_settle(e2eid=charge.end_to_end_id, refund_id=refund.psp_refund_id, status="NAO_REALIZADO")
    # then the refund is failed, final, and the order hears it once
    refund.refresh_from_db()
    assert refund.status == "failed"
    assert refunds_finished == [{"reference": "checkout_r", "refund_id": "adj_no", "status": "failed", "amount": 3000}]
    assert PixCharge.objects.get().status == "paid"


def test_reconcile_beat_resumes_a_refund_whose_task_was_lost() -> None:
    from datetime import timedelta

    from django.utils import timezone

    from payments.tasks import reconcile_pix_charges

    # given a requested refund whose Celery task never ran (its on_commit was lost with the worker)
    _settled_charge(amount=3000)
    refund = refund_request(reference="checkout_r", amount=1000, refund_id="adj_lost", reason="")
    PixRefund.objects.filter(pk=refund.pk).update(updated_at=timezone.now() - timedelta(minutes=11))
    # when the reconcile beat runs
    reconcile_pix_charges.apply()
    # then the devolução ran and finished
    refund.refresh_from_db()
    assert (refund.status, refund.attempts) == ("completed", 1)


def test_qr_image_of_a_charge_is_served_as_png_and_svg(client: Any) -> None:
    charge = pix_charge_ensure(reference="checkout_qr", amount=100)

    png = client.get(f"/payments/pix/qr/{charge.txid}.png")
    svg = client.get(f"/payments/pix/qr/{charge.txid}.svg")
    missing = client.get(f"/payments/pix/qr/{'0' * 32}.png")

    assert (png.status_code, png["Content-Type"], png.content[:8]) == (200, "image/png", b"\x89PNG\r\n\x1a\n")
    assert (svg.status_code, svg["Content-Type"]) == (200, "image/svg+xml")
    assert svg.content.decode().startswith("<svg")
    assert missing.status_code == 404
