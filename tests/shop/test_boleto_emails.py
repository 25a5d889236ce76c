"""The buyer's boleto e-mails (issue 37's gap): "boleto emitido" with the linha digitável, the PDF and the due date
once the boleto is issued, "vence amanhã" the day before its due date while it is still unpaid; never for a boleto
already paid or cancelled; once per boleto and kind whatever the sweeps re-drive; a failed send is retried.
Against the fake Pagar.me v5 on 127.0.0.1 (tests/payments/fake_pagarme.py)."""

from __future__ import annotations

import socket
from dataclasses import replace
from datetime import timedelta

import pytest
from django.conf import settings
from django.core import mail
from django.test import Client

from payments.boleto.codes import line_display
from payments.boleto.service import boleto_expire_due, boleto_settle_confirmed, brasilia_today
from payments.card.pagarme import PagarmeGateway
from payments.models import BoletoPayment
from shop.checkout.boleto_mail import boleto_notice_send, boleto_notices_queue_due
from shop.checkout.services import checkout_complete, checkout_create
from shop.checkout.types import CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import BoletoNotice, Checkout
from shop.store.services import store_row
from tests.payments.fake_pagarme import FakePagarmeServer
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

pytestmark = pytest.mark.django_db

BOLETO = InstrumentInput(id="instr_b", handler_id="br.dev.bcp.boleto", type="boleto")


def _complete_by_boleto() -> Checkout:
    make_variant(price=10000, stock=5)
    make_shipping()
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
    assert data.buyer is not None
    data = replace(data, buyer=replace(data.buyer, tax_id="529.982.247-25", email="ana@example.com"))
    checkout = checkout_create(data=replace(data, payment=PaymentInput(instruments=(BOLETO,)))).checkout
    paying = CompleteInput(payment=PaymentInput((BOLETO,)))
    return checkout_complete(checkout_id=checkout.public_id, data=paying).checkout


def test_issuing_a_boleto_emails_its_line_pdf_and_due_date_once(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        checkout = _complete_by_boleto()

    boleto = BoletoPayment.objects.get()
    assert len(mail.outbox) == 1
    sent = mail.outbox[0]
    assert sent.to == ["ana@example.com"]
    due = boleto.due_date.strftime("%d/%m/%Y")
    assert sent.subject.replace("\xa0", " ").endswith(f"seu boleto de R$ 118,90, vencimento {due}")
    assert line_display(boleto.line) in sent.body
    assert boleto.pdf_url in sent.body
    # Walk h44: the items summed R$ 100,00 and the boleto R$ 118,90, with nothing in between: the freight is said
    assert "Subtotal: R$ 100,00\nFrete — PAC: R$ 18,90\nTotal: R$ 118,90\n" in sent.body.replace("\xa0", " ")
    assert "Frete — PAC" in sent.alternatives[0][0] and "R$ 118,90" in sent.alternatives[0][0].replace("\xa0", " ")
    assert f"/checkout/{checkout.public_id}/boleto?" in sent.body  # the signed way back to the boleto page
    html = sent.alternatives[0][0]
    assert line_display(boleto.line) in html and "Ver o boleto" in html
    # the linha digitável wraps between its groups in a narrow mail app, never inside one (as on the boleto page)
    line_style = html.split(line_display(boleto.line))[0].rsplit("<p", 1)[1]
    assert "overflow-wrap: anywhere" in line_style and "break-all" not in line_style
    # the day the reservation ends, as the expiry sweep keeps it (due date + grace days), not "até o vencimento"
    held = (boleto.due_date + timedelta(days=settings.BOLETO_EXPIRY_GRACE_DAYS)).strftime("%d/%m/%Y")
    for body in (sent.body, html):
        assert f"Os produtos ficam reservados até {held}." in body and "até o vencimento" not in body

    notice = BoletoNotice.objects.get()
    assert (notice.kind, notice.payment_id, notice.sent_at is not None) == ("issued", boleto.payment_id, True)
    # the sweep re-drives nothing already sent, and the task run again sends nothing more
    with django_capture_on_commit_callbacks(execute=True):
        assert boleto_notices_queue_due() == 0
    assert boleto_notice_send(notice_id=notice.pk) == "done"
    assert len(mail.outbox) == 1


def test_the_boleto_e_mail_names_the_shop_as_the_merchant_renamed_it(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    """QA walk: the order e-mails said "Ateliê Ipê" (Dados da loja), the boleto e-mail "Loja Exemplo" (SHOP_NAME)
    in its subject, sender, heading and signature."""
    row = store_row()
    row.trade_name = "Ateliê Ipê"
    row.save()
    with django_capture_on_commit_callbacks(execute=True):
        _complete_by_boleto()
    (sent,) = mail.outbox
    assert sent.subject.startswith("Ateliê Ipê: seu boleto de ") and sent.from_email.startswith("Ateliê Ipê <")
    assert sent.body.rstrip().endswith("Ateliê Ipê") and "Loja Exemplo" not in sent.body + sent.alternatives[0][0]


def test_the_e_mail_link_opens_the_boleto_page_for_a_buyer_without_the_session(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        _complete_by_boleto()
    link = next(word for word in mail.outbox[0].body.split() if "/boleto?" in word)

    page = Client().get(link[link.index("/checkout/") :])  # another device: no session, only the signed link

    assert page.status_code == 200
    assert line_display(BoletoPayment.objects.get().line) in page.content.decode()


def test_due_tomorrow_reminder_goes_once_and_never_for_a_paid_boleto(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        _complete_by_boleto()
    boleto = BoletoPayment.objects.get()
    # issued days ago (the "issued" e-mail was not the same day), due tomorrow
    BoletoNotice.objects.update(created_at=BoletoNotice.objects.get().created_at - timedelta(days=2))
    BoletoPayment.objects.filter(pk=boleto.pk).update(due_date=brasilia_today() + timedelta(days=1))

    with django_capture_on_commit_callbacks(execute=True):
        assert boleto_notices_queue_due() == 1
    with django_capture_on_commit_callbacks(execute=True):
        assert boleto_notices_queue_due() == 0  # once per boleto

    assert len(mail.outbox) == 2
    assert "vence amanhã" in mail.outbox[1].subject
    assert "Seu boleto vence amanhã" in mail.outbox[1].body
    assert BoletoNotice.objects.filter(kind="due_soon", sent_at__isnull=False).count() == 1


def test_no_due_tomorrow_reminder_the_day_it_was_issued(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        _complete_by_boleto()
    BoletoPayment.objects.update(due_date=brasilia_today() + timedelta(days=1))

    with django_capture_on_commit_callbacks(execute=True):
        assert boleto_notices_queue_due() == 0

    assert len(mail.outbox) == 1
    assert not BoletoNotice.objects.filter(kind="due_soon").exists()


def test_a_boleto_paid_before_its_e_mail_went_out_is_not_emailed(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    _complete_by_boleto()  # the e-mail task never ran (the broker was down)
    boleto = BoletoPayment.objects.get()
    pagarme.pay_boleto(boleto.gateway_charge_id)
    with django_capture_on_commit_callbacks(execute=True):
        boleto_settle_confirmed(charge=PagarmeGateway().get_charge(boleto.gateway_charge_id), source="webhook")

    with django_capture_on_commit_callbacks(execute=True):
        assert boleto_notices_queue_due() == 1  # the lost send is re-driven…

    assert not [m for m in mail.outbox if "seu boleto" in m.subject]  # …and skipped: paid (order e-mails went)
    assert BoletoNotice.objects.get().skipped == "boleto:paid"


def test_a_failed_send_is_retried_by_the_sweep(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks, settings
) -> None:
    mailers = settings.MAILERS
    # an SMTP server that is down: nothing listens on this loopback port
    down = {"host": "127.0.0.1", "port": _closed_port(), "timeout": 2}
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.smtp.EmailBackend", "OPTIONS": down}}
    with django_capture_on_commit_callbacks(execute=True):
        _complete_by_boleto()  # the send task fails (logged; the buyer's complete is not an error)
    assert BoletoNotice.objects.get().sent_at is None  # released for the next sweep

    settings.MAILERS = mailers
    with django_capture_on_commit_callbacks(execute=True):
        assert boleto_notices_queue_due() == 1

    assert len(mail.outbox) == 1
    assert BoletoNotice.objects.get().sent_at is not None


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_e_mail_speaks_the_checkouts_language(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    checkout = _complete_by_boleto()  # its send was lost: the sweep sends it
    Checkout.objects.filter(pk=checkout.pk).update(language="en")

    with django_capture_on_commit_callbacks(execute=True):
        assert boleto_notices_queue_due() == 1

    sent = mail.outbox[0]
    assert "your boleto of R$" in sent.subject
    assert "Your boleto has been issued." in sent.body and "View the boleto" in sent.body
    # dates the English way, as the order page writes them (10/12 read as October 12 beside it)
    due = BoletoPayment.objects.get().due_date
    assert sent.subject.endswith(f"due {due:%m/%d/%Y}") and f"Due date: {due:%m/%d/%Y}" in sent.body


def test_staff_see_the_boleto_e_mails_in_the_admin(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks, admin_client: Client
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        _complete_by_boleto()

    page = admin_client.get("/admin/shop/boletonotice/")

    assert page.status_code == 200
    assert "ana@example.com" in page.content.decode()
    assert BoletoNotice.objects.get().payment_id in page.content.decode()


def test_an_expired_boleto_tells_the_buyer_once_with_the_way_back_to_the_checkout(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    """QA walk: the expiry sweep cancelled the boleto and gave the items back to stock, and the buyer heard nothing
    (the e-mails had said "sem pagamento até lá, o boleto é cancelado"). Now one "venceu" e-mail: not to pay that
    boleto any more (no linha digitável in it), and the signed link to finish with another payment."""
    with django_capture_on_commit_callbacks(execute=True):
        checkout = _complete_by_boleto()
    boleto = BoletoPayment.objects.get()
    BoletoPayment.objects.filter(pk=boleto.pk).update(due_date=brasilia_today() - timedelta(days=10))
    with django_capture_on_commit_callbacks(execute=True):
        assert boleto_expire_due() == 1
    with django_capture_on_commit_callbacks(execute=True):
        assert boleto_expire_due() == 0  # once
        boleto_notices_queue_due()  # the sweep re-drives nothing already sent

    assert [m.subject.replace("\xa0", " ") for m in mail.outbox][1:] == [
        "Loja Exemplo: seu boleto de R$ 118,90 venceu sem pagamento"
    ]
    sent = mail.outbox[1]
    html = sent.alternatives[0][0]
    for body in (sent.body, html):
        assert "não foi pago e foi cancelado: não pague mais este boleto" in body
        assert line_display(boleto.line) not in body and "Ver o boleto" not in body
        # the items, then the freight and the total the boleto was for (the items alone did not add up to it)
        assert "Frete" in body and "R$ 118,90" in body.replace("\xa0", " ").split("Total")[-1]
    link = next(word for word in sent.body.split() if "/checkout/" in word)
    assert f"/checkout/{checkout.public_id}?" in link  # the checkout itself, not its boleto page
    page = Client().get(link[link.index("/checkout/") :])  # another device: only the signed link
    assert page.status_code == 200
    assert BoletoNotice.objects.filter(kind="expired", sent_at__isnull=False).count() == 1
