"""NF-e gaps of issue 18: tax codes per product/store, the DRF API field, the DANFE link in the buyer's
e-mails, the sweep that re-drives a lost cancel, and the statements the NF-e adds to placement."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from django.core import mail
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from fiscal.models import FiscalDocument, FiscalJob
from fiscal.services import job_run
from orders.models import EmailDelivery, Order, OutboxMessage
from orders.services import order_cancel, order_ship
from orders.services.dispatch import outbox_process
from shop.checkout.services import checkout_complete, checkout_create
from shop.checkout.types import CompleteInput, LineInput, PaymentInput
from shop.invoicing.invoice import build_invoice
from shop.invoicing.lifecycle import sweep_missing_cancellations
from shop.models import Product, StoreSettings
from tests.fiscal.helpers import authorized_view
from tests.shop.checkout_factories import BUYER, full_input, make_shipping, make_variant
from tests.shop.test_completion import CARD_OK
from tests.shop.test_fiscal_lifecycle import fiscal_store, paid_order  # noqa: F401 (fiscal_store: a fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fiscal_store")]


def _store_saved(**fields: str) -> None:
    """The merchant edits the store settings (the admin saves the row, which drops its cached copies)."""
    store = StoreSettings.objects.get()
    for name, value in fields.items():
        setattr(store, name, value)
    store.save()


def test_tax_codes_come_from_the_product_else_the_store() -> None:
    order = paid_order()
    item = build_invoice(order)[0]["items"][0]
    assert (item["cfop"], item["icms_cst"], item["pis_cst"], item["cofins_cst"]) == ("5102", "102", "07", "07")
    _store_saved(default_cfop="5405", icms_cst="500", pis_cofins_cst="49")
    item = build_invoice(order)[0]["items"][0]
    assert (item["cfop"], item["icms_cst"], item["pis_cst"]) == ("5405", "500", "49")
    Product.objects.update(cfop="5.102", icms_cst="103")  # the product's own codes win (typed with dots)
    invoice, problems = build_invoice(order)
    assert (invoice["items"][0]["cfop"], invoice["items"][0]["icms_cst"], problems) == ("5102", "103", [])


def test_a_sale_to_another_state_takes_the_interstate_cfop() -> None:
    order = paid_order()
    Order.objects.filter(pk=order.pk).update(destination={**order.destination, "state": "RJ"})
    item = build_invoice(Order.objects.get(pk=order.pk))[0]["items"][0]
    assert item["cfop"] == "6102"


def test_a_code_that_does_not_fit_the_regime_blocks_naming_the_product() -> None:
    order = paid_order()
    Product.objects.update(icms_cst="00")  # a CST of the normal regime in a Simples Nacional store
    _invoice, problems = build_invoice(order)
    assert problems == [
        "produto “Café Especial 500 g” (SKU SKU-CAFE-500G): CST/CSOSN do ICMS 00 não combina com o regime "
        "tributário da loja"
    ]
    _store_saved(tax_regime="normal")
    assert build_invoice(order)[1] == []


def test_the_back_office_api_shows_the_fiscal_document(django_user_model, settings) -> None:
    from django.contrib.auth.models import Permission

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    document = FiscalDocument.objects.get()
    user = django_user_model.objects.create_user("erp", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_order"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    body = client.get(f"/api/v1/orders/{order.public_id}/").json()
    assert body["fiscal_documents"] == [
        {
            **authorized_view(document, settings.BCP_PUBLIC_URL),
            "protocol": document.protocol, "sefaz_status": document.sefaz_status or None,
            "sefaz_reason": document.sefaz_reason or None, "environment": "homologacao",
            "ibs_cbs": None,  # a Simples Nacional note of 2026 (issue 37: IBS/CBS from 2027)
            "cancellation_xml_url": None, "corrections": None,  # the agents' members too, absent ones as null
        }
    ]  # fmt: skip


def test_the_back_office_api_lists_every_note_of_the_order(
    django_user_model, settings, django_capture_on_commit_callbacks: Any
) -> None:
    """Merchant gap (session 48): `GET /api/v1/orders/{id}/` listed only the sale's current NF-e, while agents read
    every note in `fiscal_documents` (BCP-ORD-01 with the fiscal_document extension). The back office now lists the
    same notes by the same selector — the current note first, the one cancelled and reissued, then the NF-e de
    devolução with `purpose` "return", the sale's chave it references and the return it records — each with the
    SEFAZ's answer, protocol and environment staff act on. The buyer's e-mails still link only the sale's note."""
    from django.contrib.auth.models import Permission

    from fiscal.models import FiscalReturnNote
    from fiscal.services import document_request_cancel_reissue
    from orders.models import Adjustment
    from orders.services import order_email_resend, order_mark_delivered, order_return
    from orders.types import LineQuantity

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    with transaction.atomic():  # the buyer's CPF was wrong: staff cancel the note and issue it again
        document_request_cancel_reissue(
            order_ref=order.public_id, justification="CPF do destinatário informado errado",
            invoice=build_invoice(order)[0], problems=[],
        )  # fmt: skip
    assert job_run(job_id=FiscalJob.objects.get(action="cancel").pk) == "cancelled"
    first, second = FiscalDocument.objects.order_by("sequence")
    assert job_run(job_id=FiscalJob.objects.get(document=second).pk) == "authorized"
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    with django_capture_on_commit_callbacks(execute=True):  # staff record the return: its note is asked at once
        order_return(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)], reason="Desistiu")
    job = FiscalJob.objects.get(action="return")
    if job.status != FiscalJob.Status.DONE:
        assert job_run(job_id=job.pk) == "return_authorized"
    first.refresh_from_db()
    second.refresh_from_db()
    note = FiscalReturnNote.objects.get()
    recorded = Adjustment.objects.get(order=order, type="return")
    user = django_user_model.objects.create_user("erp", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_order"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")

    body = client.get(f"/api/v1/orders/{order.public_id}/").json()

    base = settings.BCP_PUBLIC_URL.rstrip("/")

    def staff(document: FiscalDocument | FiscalReturnNote) -> dict[str, Any]:
        return {
            "protocol": document.protocol,
            "sefaz_status": document.sefaz_status or None,
            "sefaz_reason": document.sefaz_reason or None,
            "environment": "homologacao",
            "ibs_cbs": None,
        }

    assert [(d["number"], d["status"], d.get("purpose")) for d in body["fiscal_documents"]] == [
        (second.number, "authorized", None), (first.number, "cancelled", None), (note.number, "authorized", "return")
    ]  # fmt: skip
    assert body["fiscal_documents"] == [
        {**authorized_view(second, base), **staff(second), "cancellation_xml_url": None, "corrections": None},
        {
            "type": "nfe", "status": "cancelled", "access_key": first.access_key, "number": first.number,
            "series": 1, "issued_at": first.issued_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "danfe_url": f"{base}/fiscal/d/{first.download_token}/danfe",
            "xml_url": f"{base}/fiscal/d/{first.download_token}/xml", **staff(first),
            "cancellation_xml_url": f"{base}/fiscal/d/{first.download_token}/cancelamento", "corrections": None,
        },
        {
            "type": "nfe", "purpose": "return", "status": "authorized", "access_key": note.access_key,
            "number": note.number, "series": note.series, "issued_at": note.issued_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "danfe_url": f"{base}/fiscal/d/{second.download_token}/dev-{recorded.public_id}-danfe",
            "xml_url": f"{base}/fiscal/d/{second.download_token}/dev-{recorded.public_id}-xml",
            "referenced_access_key": second.access_key, "return_id": recorded.public_id, **staff(note),
        },
    ]  # fmt: skip
    # the buyer's next e-mail links the sale's current note only, not the cancelled one nor the devolução
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        order_email_resend(order_id=order.public_id, kind="delivered")
    (sent,) = mail.outbox
    for body in (sent.body, sent.alternatives[0].content):
        assert f"{base}/fiscal/d/{second.download_token}/danfe" in body
        assert f"/fiscal/d/{first.download_token}/" not in body and "-danfe" not in body


def test_the_buyer_gets_the_danfe_link_once_and_in_later_emails(
    django_capture_on_commit_callbacks: Any,
    settings,
) -> None:
    order = paid_order()
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert job_run(job_id=FiscalJob.objects.get().pk) == "authorized"
    document = FiscalDocument.objects.get()
    danfe = f"{settings.BCP_PUBLIC_URL.rstrip('/')}/fiscal/d/{document.download_token}/danfe"
    invoice_mail = [m for m in mail.outbox if "Nota fiscal do pedido" in m.subject]
    assert [m.subject for m in invoice_mail] == [f"Loja Exemplo: Nota fiscal do pedido #{order.number}"]
    assert danfe in invoice_mail[0].body and document.access_key in invoice_mail[0].body
    assert danfe in invoice_mail[0].alternatives[0].content
    assert EmailDelivery.objects.filter(order=order, kind="invoice").count() == 1
    # a repeated "authorized" answer (webhook after the poll) sends nothing more
    from fiscal.services import _changed

    with transaction.atomic(), django_capture_on_commit_callbacks(execute=True):
        _changed(document, "authorized", "NF-e autorizada.", access_key=document.access_key)
    assert EmailDelivery.objects.filter(order=order, kind="invoice").count() == 1
    # the shipment e-mail carries the DANFE link too
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    assert danfe in mail.outbox[0].body


def test_the_sweep_asks_the_cancel_a_lost_receiver_never_asked(settings) -> None:
    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    # the order is cancelled but the after-commit step that asks the NF-e cancel never ran
    order_cancel(order_id=order.public_id, reason="cliente desistiu")
    assert not FiscalJob.objects.filter(action="cancel").exists()
    assert sweep_missing_cancellations() == 1
    assert sweep_missing_cancellations() == 0  # asked once
    cancel = FiscalJob.objects.get(action="cancel")
    assert job_run(job_id=cancel.pk) == "cancelled"
    assert FiscalDocument.objects.get().status == "cancelled"


def _completion_statements() -> tuple[int, int]:
    """Statements of one paid card completion, and of its order's outbox task (e-mail, NF-e request, webhook)."""
    data = replace(full_input(LineInput("SKU-CAFE-500G", 1), option="pac"), buyer=replace(BUYER, tax_id="52998224725"))
    checkout = checkout_create(data=data).checkout
    payment = CompleteInput(payment=PaymentInput(instruments=(CARD_OK,)))
    with CaptureQueriesContext(connection) as queries:
        result = checkout_complete(checkout_id=checkout.public_id, data=payment)
    assert result.checkout.status == "completed", result.messages
    message = OutboxMessage.objects.get(payload__order_id=result.checkout.order_id, payload__event="placed")
    with CaptureQueriesContext(connection) as task:
        assert outbox_process(message_id=message.pk) == "done"
    return len(queries), len(task)


@pytest.mark.parametrize(("ncm", "budget"), [("09012100", 15), ("", 14)])
def test_placement_adds_a_fixed_number_of_statements_for_the_nfe(
    settings,
    ncm: str,
    budget: int,
) -> None:
    """The NF-e is asked for by the placed order's outbox task, not in the placement's transaction: the
    completion itself adds nothing, and what the task adds is bounded (its transaction, the order lock, the
    store row, the lines and variants, the document get-or-create, the job, the timeline event) — against
    the same completion with FISCAL_ISSUE_ON=off. In the placement before issue 18's cut: 17 (issue) and 13
    (blocked), after it 13 and 12; since issue 11 the placement adds 0 and the task 15 and 14 (it locks and
    reads the order, which the placement had in memory)."""
    make_variant(price=4290, stock=10, title="Café Especial 500 g", ncm=ncm)
    make_shipping()
    settings.FISCAL_ISSUE_ON = "off"
    _completion_statements()  # warm caches (store row, shipping table)
    off = _completion_statements()
    settings.FISCAL_ISSUE_ON = "paid"
    on = _completion_statements()
    added = on[1] - off[1]
    print(f"statements the NF-e adds to the order's task ({'issue' if ncm else 'blocked'}):", added)
    assert on[0] == off[0]
    assert 0 < added <= budget
