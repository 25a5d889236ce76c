"""The br.dev.bcp.shopping.fiscal_document extension of the order capability over REST (issue 18):
advertised in the profile, present in order responses only when negotiated, valid against its schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from bcp_app.models import WebhookDelivery
from bcp_app.service.platforms import platform_create
from fiscal.models import FiscalDocument, FiscalJob, FiscalReturnNote
from fiscal.services import (
    document_request_cancel_reissue,
    document_request_correction,
    document_request_issue,
    job_run,
)
from orders.models import Adjustment, Order
from orders.services import order_mark_delivered, order_return, order_ship
from orders.types import LineQuantity
from payments.sandbox import services as sandbox
from tests.bcp_app.bcp_fixtures import VERSION, FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog, complete, ready_checkout
from tests.fiscal.helpers import authorized_view, invoice

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
FISCAL = "br.dev.bcp.shopping.fiscal_document"
ORDER = "br.dev.bcp.shopping.order"
SCHEMAS = Path(__file__).resolve().parents[2] / "bcp_app" / "jsonschemas"
SPEC, SCHEMA = "https://bcp.dev.br/draft/specification", "https://bcp.dev.br/draft/schemas"


def schema_errors(document: Any, ref: str) -> list[str]:
    # Our vendored copy plus the shop's own extension schema (not in the shared spec).
    resources = [
        (d["$id"], Resource.from_contents(d)) for d in (json.loads(p.read_text()) for p in SCHEMAS.rglob("*.json"))
    ]
    validator = Draft202012Validator({"$ref": SCHEMA + "/" + ref}, registry=Registry().with_resources(resources))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def _profile_caps(fake_platform: FakePlatform, *, fiscal: bool) -> dict[str, list[dict[str, Any]]]:
    caps = fake_platform.profile()["ucp"]["capabilities"]
    if fiscal:
        caps[FISCAL] = [{"version": VERSION, "spec": f"{SPEC}/fiscal-document",
                         "schema": f"{SCHEMA}/shopping/fiscal_document.json", "extends": ORDER}]  # fmt: skip
    return caps


def _setup(fake_platform: FakePlatform, settings: Any, *, fiscal: bool) -> dict[str, str]:
    """The headers of an agent whose profile does (or does not) offer the fiscal_document extension."""
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    url = fake_platform.publish(capabilities=_profile_caps(fake_platform, fiscal=fiscal))
    platform = platform_create(name="Agente", profile_url=url)
    return agent(url, Authorization=f"Bearer {platform.api_key}")


def _paid_order(client: Client, headers: dict[str, str], capture: Any) -> Order:
    """An order the agent placed and the buyer paid by Pix."""
    checkout = ready_checkout(client, headers)
    complete(client, checkout["id"], headers)
    with capture(execute=True):
        sandbox.pay(txid=checkout["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    return Order.objects.get(checkout_id=checkout["id"])


def _request_issue(order: Order) -> None:
    # The demo store of these tests has no CNPJ, so the shop's request was blocked; issue as the merchant would after
    # filling in the data, with the order's own line (a return can then reference it).
    line = order.lines.get()
    item = {"sku": line.sku, "description": line.title, "ncm": "09012100", "cfop": "5102", "origin": "0", "unit": "UN",
            "quantity": line.quantity_original, "unit_price": line.unit_price,
            "total": line.unit_price * line.quantity_original}  # fmt: skip
    with transaction.atomic():
        document_request_issue(
            order_ref=order.public_id, order_number=order.number,
            invoice=invoice(order_ref=order.public_id, items=[item]), problems=[], reissue=True,
        )  # fmt: skip


def _authorized_order(client: Client, headers: dict[str, str], capture: Any) -> Order:
    order = _paid_order(client, headers, capture)
    _request_issue(order)
    assert job_run(job_id=FiscalJob.objects.get(key__startswith=order.public_id).pk) == "authorized"
    return order


@pytest.fixture
def headers(fake_platform: FakePlatform, settings: Any) -> dict[str, str]:
    """An agent that negotiated the fiscal_document extension."""
    return _setup(fake_platform, settings, fiscal=True)


@pytest.fixture
def order(client: Client, headers: dict[str, str], django_capture_on_commit_callbacks: Any) -> Order:
    """That agent's paid order, its NF-e authorized."""
    return _authorized_order(client, headers, django_capture_on_commit_callbacks)


def test_profile_advertises_the_extension_of_order(client: Client) -> None:
    capabilities = client.get("/.well-known/bcp").json()["ucp"]["capabilities"]
    assert capabilities[FISCAL] == [
        {"version": VERSION, "spec": f"{SPEC}/fiscal-document",
         "schema": f"{SCHEMA}/shopping/fiscal_document.json", "extends": ORDER}
    ]  # fmt: skip


def test_negotiated_order_carries_the_fiscal_documents(
    client: Client, settings: Any, headers: dict[str, str], order: Order
) -> None:
    body = call(client, "get", f"/orders/{order.public_id}", headers).json()
    document = FiscalDocument.objects.get()
    assert body["ucp"]["capabilities"] == {ORDER: [{"version": VERSION}], FISCAL: [{"version": VERSION}]}
    assert body["fiscal_documents"] == [authorized_view(document, settings.BCP_PUBLIC_URL)]
    assert schema_errors(body, f"shopping/fiscal_document.json#/{ORDER}") == []
    danfe = client.get(body["fiscal_documents"][0]["danfe_url"].removeprefix(settings.BCP_PUBLIC_URL.rstrip("/")))
    assert danfe.status_code == 200 and b"".join(danfe.streaming_content).startswith(b"%PDF-")


def test_without_negotiation_there_is_no_fiscal_member(
    client: Client, fake_platform: FakePlatform, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    headers = _setup(fake_platform, settings, fiscal=False)
    order = _authorized_order(client, headers, django_capture_on_commit_callbacks)
    body = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert "fiscal_documents" not in body
    assert body["ucp"]["capabilities"] == {ORDER: [{"version": VERSION}]}


@pytest.mark.parametrize("fiscal", [True, False])
def test_an_nfe_step_is_a_webhook_only_for_platforms_that_see_fiscal_documents(
    client: Client, fake_platform: FakePlatform, settings: Any, django_capture_on_commit_callbacks: Any, fiscal: bool
) -> None:
    """Agent QA walk: a platform without the extension got, when the NF-e was authorized, a second webhook equal to
    the order's last one but for `updated_at`."""
    headers = _setup(fake_platform, settings, fiscal=fiscal)
    order = _paid_order(client, headers, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        _request_issue(order)
    assert FiscalDocument.objects.get().status == "authorized"  # the job ran after the request's commit
    events = list(
        WebhookDelivery.objects.filter(order_id=order.public_id).order_by("id").values_list("event", flat=True)
    )
    assert events[0] == "placed"  # the placement's webhook goes to both
    assert ("fiscal_authorized" in events) is fiscal, events


def test_bad_document_token_is_404(client: Client) -> None:
    assert client.get("/fiscal/d/nao-existe/danfe").status_code == 404


def test_ibs_cbs_totals_reach_agents_and_fit_the_schema(client: Client, headers: dict[str, str], order: Order) -> None:
    """Issue 37: a normal-regime NF-e of 2026 carries IBSCBSTot (NT 2025.002); the extension exposes it."""
    FiscalDocument.objects.update(
        ibs_cbs_totals={"base": 9980, "ibs_uf_amount": 10, "ibs_mun_amount": 0, "ibs_amount": 10, "cbs_amount": 90}
    )
    body = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert body["fiscal_documents"][0]["ibs_cbs"] == {
        "base": 9980, "ibs_state": 10, "ibs_municipal": 0, "ibs": 10, "cbs": 90
    }  # fmt: skip
    assert schema_errors(body, f"shopping/fiscal_document.json#/{ORDER}") == []
    broken = {**body, "fiscal_documents": [{**body["fiscal_documents"][0], "ibs_cbs": {"base": -1}}]}
    assert schema_errors(broken, f"shopping/fiscal_document.json#/{ORDER}") != []


def test_a_cancelled_and_reissued_nfe_lists_both_notes_current_first(
    client: Client, settings: Any, headers: dict[str, str], order: Order, django_assert_max_num_queries: Any
) -> None:
    """BCP-ORD-01 with the fiscal_document extension: staff cancelled the NF-e (wrong CPF) and issued the next one
    within the SEFAZ's 24 h. The agent sees both — the current (authorized) note first, then the cancelled one with
    its status and its files — read in the one query Get Order had for the single note. The UCP face too."""
    with transaction.atomic():
        document_request_cancel_reissue(
            order_ref=order.public_id, justification="CPF do destinatário informado errado",
            invoice=invoice(order_ref=order.public_id), problems=[],
        )  # fmt: skip
    assert job_run(job_id=FiscalJob.objects.get(action="cancel").pk) == "cancelled"
    first, second = FiscalDocument.objects.order_by("sequence")
    assert job_run(job_id=FiscalJob.objects.get(document=second).pk) == "authorized"
    first.refresh_from_db()
    second.refresh_from_db()

    with django_assert_max_num_queries(2):  # as with one note: the order's read and one read of all its notes
        body = call(client, "get", f"/orders/{order.public_id}", headers).json()

    base = settings.BCP_PUBLIC_URL.rstrip("/")
    assert body["fiscal_documents"] == [
        authorized_view(second, settings.BCP_PUBLIC_URL),
        {
            "type": "nfe", "status": "cancelled", "access_key": first.access_key, "number": first.number,
            "series": 1, "issued_at": first.issued_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "danfe_url": f"{base}/fiscal/d/{first.download_token}/danfe",
            "xml_url": f"{base}/fiscal/d/{first.download_token}/xml",
            # the cancellation event's XML too (it was on the admin only), in the same read
            "cancellation_xml_url": f"{base}/fiscal/d/{first.download_token}/cancelamento",
        },
    ]  # fmt: skip
    cancellation = client.get(body["fiscal_documents"][1]["cancellation_xml_url"].removeprefix(base))
    assert cancellation.status_code == 200 and b"110111" in b"".join(cancellation.streaming_content)
    assert second.number == first.number + 1
    assert schema_errors(body, f"shopping/fiscal_document.json#/{ORDER}") == []
    # the UCP face answers the same operation: the same two notes
    ucp = {"UCP-Agent": headers["BCP-Agent"], "Authorization": headers["Authorization"]}
    over_ucp = client.get(f"/ucp/v1/orders/{order.public_id}", headers=ucp)
    assert (over_ucp.status_code, over_ucp.json()["fiscal_documents"]) == (200, body["fiscal_documents"])


def test_an_nfe_de_devolucao_follows_the_sale_s_note_in_the_shape_of_a_note(
    client: Client,
    settings: Any,
    headers: dict[str, str],
    order: Order,
    django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
) -> None:
    """BCP-ORD-01 with the fiscal_document extension, merchant gap (closing note, session 47): the NF-e de devolução
    the shop issued for goods that came back was on the admin only. The agent now reads it after the sale's note, in
    the same shape (status, chave, number, series, DANFE and XML), marked `purpose: "return"` with the sale's chave it
    references and the return it records; valid against the extension's schema. One more read, only for an order
    goods came back to."""
    line = order.lines.get()
    sale = FiscalDocument.objects.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    with django_capture_on_commit_callbacks(execute=True):  # staff record the return: its note is asked at once
        order_return(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)], reason="Desistiu")
    recorded = Adjustment.objects.get(order=order, type="return")
    job = FiscalJob.objects.get(action="return")
    if job.status != FiscalJob.Status.DONE:
        with django_capture_on_commit_callbacks(execute=True):
            assert job_run(job_id=job.pk) == "return_authorized"
    note = FiscalReturnNote.objects.get()
    sale.refresh_from_db()
    # the platform hears of it as of the sale's note: an order webhook
    events = WebhookDelivery.objects.filter(order_id=order.public_id).values_list("event", flat=True)
    assert "fiscal_return_note_authorized" in events

    call(client, "get", f"/orders/{order.public_id}", headers)  # the process's first read warms its caches
    with django_assert_max_num_queries(3):  # the order, its notes, its devolução notes
        body = call(client, "get", f"/orders/{order.public_id}", headers).json()

    base = settings.BCP_PUBLIC_URL.rstrip("/")
    assert body["fiscal_documents"] == [
        authorized_view(sale, settings.BCP_PUBLIC_URL),
        {
            "type": "nfe", "purpose": "return", "status": "authorized", "access_key": note.access_key,
            "number": note.number, "series": note.series, "issued_at": note.issued_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "danfe_url": f"{base}/fiscal/d/{sale.download_token}/dev-{recorded.public_id}-danfe",
            "xml_url": f"{base}/fiscal/d/{sale.download_token}/dev-{recorded.public_id}-xml",
            "referenced_access_key": sale.access_key, "return_id": recorded.public_id,
        },
    ]  # fmt: skip
    assert schema_errors(body, f"shopping/fiscal_document.json#/{ORDER}") == []
    xml = client.get(body["fiscal_documents"][1]["xml_url"].removeprefix(base))
    assert b"<finNFe>4</finNFe>" in b"".join(xml.streaming_content)


def test_a_registered_carta_de_correcao_is_listed_on_its_note(
    client: Client,
    headers: dict[str, str],
    settings: Any,
    django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
) -> None:
    """BCP-ORD-01 with the fiscal_document extension, merchant gap: the CC-e staff registered for the NF-e was on the
    admin and the buyer's page only. The agent now reads it on its note (`corrections`: number, text, when, XML and
    PDF), valid against the extension's schema, and gets the order webhook of it; one more read, only for an order
    whose note has one."""
    order = _authorized_order(client, headers, django_capture_on_commit_callbacks)
    with django_assert_max_num_queries(2):  # no letter: the order, its notes (which say they have none)
        before = call(client, "get", f"/orders/{order.public_id}", headers).json()
    text = "Onde se lê Rua das Flores, 12, leia-se Rua das Flores, 120"
    with transaction.atomic():
        document_request_correction(order_ref=order.public_id, text=text)
    with django_capture_on_commit_callbacks(execute=True):
        assert job_run(job_id=FiscalJob.objects.get(action="correct").pk) == "corrected"
    document = FiscalDocument.objects.get()
    letter = document.corrections.get()

    with django_assert_max_num_queries(3):  # the order, its notes, the letters of the one that has them
        body = call(client, "get", f"/orders/{order.public_id}", headers).json()

    base = settings.BCP_PUBLIC_URL.rstrip("/")
    assert "corrections" not in before["fiscal_documents"][0]
    assert body["fiscal_documents"] == [
        {
            **authorized_view(document, settings.BCP_PUBLIC_URL),
            "corrections": [{
                "number": 1, "text": text, "registered_at": letter.registered_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "xml_url": f"{base}/fiscal/d/{document.download_token}/cce-1-xml",
                "pdf_url": f"{base}/fiscal/d/{document.download_token}/cce-1-pdf",
            }],
        }
    ]  # fmt: skip
    assert schema_errors(body, f"shopping/fiscal_document.json#/{ORDER}") == []
    xml = client.get(body["fiscal_documents"][0]["corrections"][0]["xml_url"].removeprefix(base))
    assert xml.status_code == 200 and b"110110" in b"".join(xml.streaming_content)
    # and the platform heard of it as of the note itself: an order webhook with the letter (BCP-WH-02)
    delivery = WebhookDelivery.objects.get(order_id=order.public_id, event="fiscal_corrected")
    assert json.loads(delivery.body)["fiscal_documents"][0]["corrections"] == body["fiscal_documents"][0]["corrections"]
