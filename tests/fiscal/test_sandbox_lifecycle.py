"""The fiscal lifecycle with the sandbox provider: request once, issue once, authorize with a valid key."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from fiscal import access_key
from fiscal.models import FiscalDocument, FiscalJob, SandboxNote
from fiscal.selectors import file_path
from fiscal.services import document_request_cancel, job_run, jobs_due
from tests.fiscal.helpers import request_issue

pytestmark = pytest.mark.django_db


def test_issue_is_requested_once_and_authorized_by_the_sandbox(client) -> None:
    document = request_issue()
    again = request_issue()  # a replayed payment confirmation
    assert again.pk == document.pk
    job = FiscalJob.objects.get()
    assert (job.key, job.action, job.status) == ("order_test:issue:1", "issue", "pending")

    assert job_run(job_id=job.pk) == "authorized"
    assert job_run(job_id=job.pk) == "skipped"  # a duplicate task run

    document.refresh_from_db()
    assert document.status == "authorized"
    assert access_key.is_valid(document.access_key)
    assert document.access_key[:2] == "35" and document.access_key[6:20] == "11222333000181"
    assert (document.number, document.series) == (1, 1)
    assert len(document.protocol) == 15
    assert SandboxNote.objects.count() == 1
    response = client.get(file_path(document, "danfe"))
    pdf = b"".join(response.streaming_content)
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert pdf.startswith(b"%PDF-")
    xml = b"".join(client.get(file_path(document, "xml")).streaming_content)
    assert f"<chNFe>{document.access_key}</chNFe>".encode() in xml


def test_missing_fiscal_data_blocks_with_the_reason_and_no_job() -> None:
    problem = "produto “Camiseta P” (SKU CAM-P): NCM não informado"
    document = request_issue(problems=[problem])
    assert document.status == "rejected"
    assert document.sefaz_reason == f"Dados fiscais incompletos: {problem}"
    assert FiscalJob.objects.count() == 0

    fixed = request_issue(reissue=True)  # after the merchant fixed the product
    assert (fixed.status, fixed.attempt) == ("pending", 1)
    assert FiscalJob.objects.get().key == "order_test:issue:1"


def test_reissue_after_a_rejection_uses_a_new_reference() -> None:
    request_issue()
    FiscalDocument.objects.update(status="rejected", sefaz_reason="x")
    FiscalJob.objects.update(status="done")
    document = request_issue(reissue=True)
    assert (document.attempt, document.provider_ref) == (2, "order_test-2")
    assert list(FiscalJob.objects.values_list("key", flat=True)) == ["order_test:issue:1", "order_test:issue:2"]
    assert request_issue().attempt == 2  # without reissue nothing more happens


def test_cancel_within_24_hours_once_and_refused_after() -> None:
    document = request_issue()
    job_run(job_id=FiscalJob.objects.get().pk)
    with transaction.atomic():
        assert document_request_cancel(order_ref="order_test", justification="") == "requested"
        assert document_request_cancel(order_ref="order_test", justification="") == "already"
    cancel = FiscalJob.objects.get(action="cancel")
    assert cancel.payload == {"justification": "Pedido cancelado a pedido do cliente."}
    assert job_run(job_id=cancel.pk) == "cancelled"
    document.refresh_from_db()
    assert document.status == "cancelled" and document.cancelled_at is not None

    request_issue(order_ref="order_old")
    job_run(job_id=FiscalJob.objects.get(key="order_old:issue:1").pk)
    FiscalDocument.objects.filter(order_ref="order_old").update(issued_at=timezone.now() - timedelta(hours=25))
    with transaction.atomic():
        assert document_request_cancel(order_ref="order_old", justification="") == "window_closed"
    assert not FiscalJob.objects.filter(key__startswith="order_old:cancel").exists()


def test_sweep_finds_only_due_jobs() -> None:
    request_issue()
    job = FiscalJob.objects.get()
    FiscalJob.objects.update(next_run_at=timezone.now() + timedelta(minutes=5))
    assert jobs_due() == []
    FiscalJob.objects.update(next_run_at=timezone.now() - timedelta(seconds=1))
    assert jobs_due() == [job.pk]
