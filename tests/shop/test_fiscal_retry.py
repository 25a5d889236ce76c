"""A blocked NF-e goes by itself once its cause is fixed (issue 33, major 1): the buyer's CPF typed on the order,
or the product's NCM filled in (`fiscal_retry_blocked`, queued after the admin saves and run by the beat sweep).
A SEFAZ rejection is not retried by itself: it needs the merchant's "Emitir novamente"."""

from __future__ import annotations

import pytest

from fiscal.models import FiscalDocument, FiscalJob, SandboxNote
from fiscal.services import job_run
from orders.models import OrderEvent
from shop.invoicing.lifecycle import fiscal_retry_blocked
from shop.models import Product, StoreSettings
from shop.tasks import sweep_fiscal_requests
from tests.shop.test_fiscal_lifecycle import fiscal_store, kinds, paid_order  # noqa: F401
from tests.shop.test_store_settings import FORM

pytestmark = pytest.mark.django_db


def test_a_blocked_nfe_is_issued_once_the_ncm_is_filled_in(fiscal_store) -> None:  # noqa: F811
    order = paid_order(ncm="")
    assert FiscalDocument.objects.get().status == "rejected"

    assert fiscal_retry_blocked() == 0  # still missing: nothing written, nothing said again
    assert kinds(order) == ["fiscal_blocked"]
    assert FiscalJob.objects.count() == 0

    Product.objects.update(ncm="0901.21.00")
    assert sweep_fiscal_requests() == 1  # the beat sweep covers a lost after-save retry
    document = FiscalDocument.objects.get()
    assert (document.status, document.sefaz_reason, document.attempt) == ("pending", "", 1)
    assert kinds(order) == ["fiscal_blocked", "fiscal_requested"]
    assert fiscal_retry_blocked() == 0  # once
    assert job_run(job_id=FiscalJob.objects.get().pk) == "authorized"


def test_a_sefaz_rejection_waits_for_the_merchant(fiscal_store) -> None:  # noqa: F811
    paid_order()
    FiscalDocument.objects.update(status="rejected", sefaz_status="778", sefaz_reason="NCM inexistente")
    assert fiscal_retry_blocked() == 0
    assert FiscalDocument.objects.get().status == "rejected"


def test_staff_type_the_missing_cpf_and_the_nfe_goes(
    fiscal_store,  # noqa: F811
    admin_client,
    django_capture_on_commit_callbacks,
) -> None:
    order = paid_order(tax_id="")
    document = FiscalDocument.objects.get()
    assert (
        document.sefaz_reason
        == f"Dados fiscais incompletos: pedido #{order.number}: CPF/CNPJ do comprador não informado"
    )
    url = f"/admin/orders/order/{order.public_id}/action/buyer-tax-id/"

    page = admin_client.post(url, {"tax_id": "529.982.247-26"}).content.decode()
    assert "CPF ou CNPJ inválido: confira os dígitos (11 do CPF ou 14 do CNPJ)." in page
    order.refresh_from_db()
    assert order.buyer_tax_id == ""

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {"tax_id": "529.982.247-25"})
    assert response.status_code == 302
    order.refresh_from_db()
    assert order.buyer_tax_id == "52998224725"
    event = OrderEvent.objects.get(order=order, kind="buyer_updated")
    assert (event.message, event.internal) == ("CPF do comprador informado.", True)
    document.refresh_from_db()
    assert document.status == "authorized"  # the outbox row, the retry and the job ran (eager tasks)
    job = FiscalJob.objects.get()
    assert job.payload["recipient"]["tax_id"] == "52998224725"
    assert kinds(order) == ["fiscal_blocked", "fiscal_requested", "fiscal_authorized"]


def test_correcting_the_cpf_after_the_nfe_was_authorized_says_the_note_keeps_the_old_one(
    fiscal_store,  # noqa: F811
    admin_client,
) -> None:
    # given a paid order whose NF-e is authorized with the buyer's CPF
    order = paid_order()
    document = FiscalDocument.objects.get()
    job_run(job_id=FiscalJob.objects.get().pk)
    document.refresh_from_db()
    assert document.status == "authorized"
    # when staff open "Corrigir CPF/CNPJ", the stored one is shown as people write it (QA walk: "52998224725")
    url = f"/admin/orders/order/{order.public_id}/action/buyer-tax-id/"
    assert 'value="529.982.247-25"' in admin_client.get(url).content.decode()
    # and correct the CPF on the order
    page = admin_client.post(url, {"tax_id": "390.533.447-05"}, follow=True).content.decode()
    # then the order has the new one, and staff read that the authorized note does not ("salvo" alone read as if
    # the NF-e had been corrected too)
    order.refresh_from_db()
    assert order.buyer_tax_id == "39053344705"
    assert (
        f"CPF/CNPJ do comprador salvo. A NF-e nº {document.number}, já autorizada, continua com o anterior "
        "(529.982.247-25): o destinatário não se corrige por carta de correção. Até 24 horas após a autorização, "
        "use “Cancelar e reemitir com os dados corrigidos” no quadro da NF-e deste pedido; depois disso, fale com o "
        "seu contador."
    ) in page
    # and the same CPF again changes nothing and warns of nothing
    page = admin_client.post(url, {"tax_id": "39053344705"}, follow=True).content.decode()
    assert "CPF/CNPJ do comprador salvo." in page and "já autorizada" not in page


def test_saving_the_store_queues_the_retry_after_commit_and_calls_no_provider(
    fiscal_store,  # noqa: F811
    admin_client,
    django_capture_on_commit_callbacks,
) -> None:
    """Closing note: an IE like "123" (a row saved before the UF check) went to the SEFAZ and was refused; now the
    NF-e is blocked naming it. The merchant corrects it in "Dados da loja": the save only queues the retry for after
    its commit (no NF-e job, no call to the fiscal provider inside the request's transaction); the task issues it."""
    StoreSettings.objects.update(state_registration="123")
    order = paid_order()
    document = FiscalDocument.objects.get()
    assert (document.status, document.sefaz_reason) == (
        "rejected",
        "Dados fiscais incompletos: dados da loja: inscrição estadual inválida para SP",
    )
    url = admin_client.get("/admin/shop/storesettings/")["Location"]

    with django_capture_on_commit_callbacks(execute=False) as after_commit:
        response = admin_client.post(url, {**FORM, "state_registration": "110.042.490.114"})
    assert response.status_code == 302
    assert (FiscalJob.objects.count(), SandboxNote.objects.count()) == (0, 0)  # nothing issued in the request
    assert FiscalDocument.objects.get().status == "rejected"
    assert after_commit  # the retry task, sent once the save committed

    with django_capture_on_commit_callbacks(execute=True):
        for callback in after_commit:
            callback()
    document.refresh_from_db()
    assert document.status == "authorized"  # the retry task, then the job's task (eager tasks)
    assert SandboxNote.objects.count() == 1
    assert kinds(order) == ["fiscal_blocked", "fiscal_requested", "fiscal_authorized"]


def test_correcting_the_delivery_address_after_the_nfe_was_authorized_points_to_cancel_and_reissue(
    fiscal_store,  # noqa: F811
    admin_client,
    django_capture_on_commit_callbacks,
) -> None:
    # given a paid delivery order whose NF-e is authorized with the address the buyer typed
    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    document = FiscalDocument.objects.get()
    assert document.status == "authorized"
    # when staff correct the delivery address
    url = f"/admin/orders/order/{order.public_id}/action/destination/"
    address = {"postal_code": "04538-132", "street": "Avenida Brigadeiro Faria Lima", "number": "3477",
               "complement": "", "neighborhood": "Itaim Bibi", "city": "São Paulo", "state": "SP"}  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        page = admin_client.post(url, address, follow=True).content.decode()
    # then the order has it, and staff read that the authorized note keeps the old one and what to do
    order.refresh_from_db()
    assert order.destination["street"] == "Avenida Brigadeiro Faria Lima"
    assert (
        f"A NF-e nº {document.number}, já autorizada, continua com o endereço anterior. Até 24 horas após a "
        "autorização, use “Cancelar e reemitir com os dados corrigidos” no quadro da NF-e deste pedido; depois "
        "disso, fale com o seu contador."
    ) in page
    document.refresh_from_db()
    assert document.status == "authorized"  # nothing issued again by itself
