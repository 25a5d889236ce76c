"""QA walk (a Brazilian merchant in the admin): MED disputes and boletos read in Portuguese and reais, not in the
PSP's or the gateway's codes ("scam", "open", "(settled)", "paid/paid") nor in centavos ("14526")."""

from __future__ import annotations

import re
from datetime import date

import pytest
from django.test import Client
from django.utils import timezone

from payments.models import BoletoPayment, PixInfraction, PixInfractionAnswer, PixPayment
from tests.payments.helpers import e2eid

pytestmark = pytest.mark.django_db


def _dispute(*, situation: str = "scam", answer: str = "sent") -> PixInfraction:
    e2e = e2eid()
    payment = PixPayment.objects.create(end_to_end_id=e2e, amount=14526, paid_at=timezone.now(), outcome="settled")
    infraction = PixInfraction.objects.create(
        psp_id="ir-1", end_to_end_id=e2e, payment=payment, reference="checkout_med", amount=14526, situation=situation,
        psp_status="open", opened_at=timezone.now(),
    )  # fmt: skip
    PixInfractionAnswer.objects.create(
        infraction=infraction, accept=False, justification="Entregue com rastreio.", status=answer,
        next_run_at=timezone.now(),
    )  # fmt: skip
    return infraction


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_dispute_page_reads_in_portuguese_and_reais(admin_client: Client) -> None:
    infraction = _dispute()
    html = admin_client.get(f"/admin/payments/pixinfraction/{infraction.pk}/change/").content.decode()
    text = _text(html)
    assert "R$ 145,26" in text and "R$ 0,00" in text
    assert "14526" not in text
    assert "golpe" in text and "scam" not in text
    assert re.search(r"Situação no PSP:? aberta", text)
    assert f"{infraction.public_id} — Aberta (aguardando resposta)" in text
    assert "(open)" not in text and "(settled)" not in text
    assert "(Liquidado)" in text  # the Pix received, as its link reads
    assert "Enviada ao PSP" in text and "(sent)" not in text


def test_the_disputes_list_shows_the_fraud_type_in_words(admin_client: Client) -> None:
    _dispute(situation="account_takeover")
    text = _text(admin_client.get("/admin/payments/pixinfraction/").content.decode())
    assert "invasão de conta" in text and "account_takeover" not in text
    assert "R$ 145,26" in text


def test_the_disputes_list_says_how_much_the_disputes_in_progress_hold(admin_client: Client) -> None:
    """QA walk (closing the month): "which MED disputes are open and how much is blocked?" — the list had the
    rows but no total. Open and answered disputes hold their amount; closed ones hold nothing."""
    _dispute()  # open: R$ 145,26
    answered = PixInfraction.objects.create(
        psp_id="ir-2", end_to_end_id=e2eid(), reference="checkout_med2", amount=5000, status="answered",
        opened_at=timezone.now(),
    )  # fmt: skip
    PixInfraction.objects.create(
        psp_id="ir-3", end_to_end_id=e2eid(), reference="checkout_med3", amount=9900, status="closed",
        outcome="kept", opened_at=timezone.now(), closed_at=timezone.now(),
    )  # fmt: skip
    text = _text(admin_client.get("/admin/payments/pixinfraction/").content.decode())
    assert "2 disputas em andamento (abertas ou respondidas): R$ 195,26 bloqueados pelo PSP." in text
    # the total does not follow the list's filter: it is what the account holds now
    answered.delete()
    text = _text(admin_client.get("/admin/payments/pixinfraction/?status__exact=closed").content.decode())
    assert "1 disputa em andamento (aberta ou respondida): R$ 145,26 bloqueados pelo PSP." in text


def test_the_boletos_list_shows_the_gateway_status_in_words(admin_client: Client) -> None:
    BoletoPayment.objects.create(
        payment_id="bol_1", reference="checkout_b", handler_id="boleto", amount=3990, status="paid",
        due_date=date(2026, 12, 10), gateway="sandbox", gateway_charge_id="ch_1", gateway_status="paid/paid",
    )  # fmt: skip
    text = _text(admin_client.get("/admin/payments/boletopayment/").content.decode())
    assert "paga / paga" in text and "paid/paid" not in text


def test_the_pages_of_a_boleto_a_pix_and_its_refund_show_reais_not_centavos(admin_client: Client) -> None:
    """QA walk: the boleto's own page read "Valor: 18280", "Valor pago: 0" and "Situação no gateway:
    canceled/canceled"; the pages of a Pix received and of a Pix refund showed centavos too."""
    boleto = BoletoPayment.objects.create(
        payment_id="bol_2", reference="checkout_c", handler_id="boleto", amount=18280, status="paid",
        due_date=date(2026, 12, 10), gateway="sandbox", gateway_charge_id="ch_2", gateway_status="paid/paid",
        paid_amount=18280, refunded_amount=500,
    )  # fmt: skip
    text = _text(admin_client.get(f"/admin/payments/boletopayment/{boleto.pk}/change/").content.decode())
    assert re.search(r"Valor:? R\$ 182,80", text) and re.search(r"Valor pago:? R\$ 182,80", text)
    assert re.search(r"Valor devolvido:? R\$ 5,00", text)
    assert "18280" not in text and "paga / paga" in text and "paid/paid" not in text
    assert re.search(r"Meio de pagamento:? Boleto bancário", text) and "handler" not in text.lower()
    payment = PixPayment.objects.create(end_to_end_id=e2eid(), amount=20670, paid_at=timezone.now(), outcome="settled")
    text = _text(admin_client.get(f"/admin/payments/pixpayment/{payment.pk}/change/").content.decode())
    assert re.search(r"Valor:? R\$ 206,70", text) and "20670" not in text
    assert "Valor pago" not in text and "Valor devolvido" not in text  # no display of a field the row has not


def test_the_dispute_answer_form_labels_start_with_a_capital(admin_client: Client) -> None:
    """QA walk: the answer page read "decisão:" and "justificativa e evidências:" among capitalised labels."""
    infraction = _dispute()
    PixInfractionAnswer.objects.filter(infraction=infraction).delete()
    html = admin_client.get(f"/admin/payments/pixinfraction/{infraction.pk}/responder/").content.decode()
    labels = re.findall(r"<label[^>]*>([^<]+)</label>", html)
    assert "Decisão:" in labels and "Justificativa e evidências:" in labels, labels
