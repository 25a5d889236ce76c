"""The Focus NFe v2 adapter against a local fake Focus NFe on 127.0.0.1 (real HTTP, Basic auth)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from django.utils import timezone

from fiscal.models import FiscalDocument, FiscalJob, FiscalWebhook
from fiscal.providers.focusnfe import WEBHOOK_HEADER, FocusNFeProvider
from fiscal.services import job_run, webhook_process
from tests.fiscal.fake_focus import REJECT_REASON, TOKEN, FakeFocusState, fake_focus
from tests.fiscal.helpers import request_issue

pytestmark = pytest.mark.django_db
SECRET = "webhook-secret-xyz"


@pytest.fixture
def focus(settings) -> Iterator[tuple[FocusNFeProvider, FakeFocusState]]:
    with fake_focus() as (url, state):
        settings.FISCAL_PROVIDER = "focusnfe"
        settings.FISCAL_FOCUSNFE_BASE_URL = url
        settings.FISCAL_FOCUSNFE_TOKEN = TOKEN
        settings.FISCAL_WEBHOOK_SECRET = SECRET
        yield FocusNFeProvider.from_settings(), state


def _run(provider: FocusNFeProvider) -> str:
    job = FiscalJob.objects.exclude(status="done").get()
    return job_run(job_id=job.pk, provider=provider)


def test_authorized_after_one_poll(focus) -> None:
    provider, state = focus
    request_issue()
    assert _run(provider) == "processing"  # POST → 202 processando_autorizacao
    document = FiscalDocument.objects.get()
    assert document.status == "processing"
    sent = state.bodies["order_test-1"]
    assert (sent["cnpj_emitente"], sent["cpf_destinatario"], sent["valor_total"]) == (
        "11222333000181",
        "52998224725",
        "114.80",
    )
    assert sent["items"][0]["codigo_ncm"] == "61091000"
    assert sent["items"][0]["icms_situacao_tributaria"] == "102"

    assert _run(provider) == "authorized"  # GET /v2/nfe/order_test-1
    document.refresh_from_db()
    assert document.status == "authorized"
    assert (document.number, document.series, document.protocol) == (1, 1, "135260000000001")
    assert document.danfe.read() == b"%PDF-1.4 fake danfe"
    assert state.requests[:2] == [("POST", "/v2/nfe"), ("GET", "/v2/nfe/order_test-1")]


def test_rejected_with_the_sefaz_reason(focus) -> None:
    provider, state = focus
    state.mode = "reject"
    request_issue()
    _run(provider)
    assert _run(provider) == "rejected"
    document = FiscalDocument.objects.get()
    assert (document.status, document.sefaz_status, document.sefaz_reason) == ("rejected", "778", REJECT_REASON)
    assert FiscalJob.objects.get().status == "done"


def _webhook(client, body: dict, secret: str = SECRET):
    return client.post(
        "/fiscal/webhooks/provider/", data=json.dumps(body), content_type="application/json",
        headers={WEBHOOK_HEADER: secret},
    )  # fmt: skip


def test_slow_then_webhook_and_the_duplicate_is_ignored(focus, client, django_capture_on_commit_callbacks) -> None:
    provider, state = focus
    state.mode = "slow"
    request_issue()
    assert _run(provider) == "processing"
    assert _run(provider) == "processing"  # still processing at the SEFAZ: the job waits, polled later
    job = FiscalJob.objects.get()
    assert job.status == "waiting" and job.next_run_at > timezone.now()

    body = state.finish("order_test-1")
    with django_capture_on_commit_callbacks(execute=False):
        first = _webhook(client, body)
        second = _webhook(client, body)  # Focus re-delivers the gatilho
    assert first.json() == {"recebido": True, "duplicado": False}
    assert second.json() == {"recebido": True, "duplicado": True}
    row = FiscalWebhook.objects.get()
    assert webhook_process(webhook_id=row.pk, provider=provider) == "authorized"
    assert webhook_process(webhook_id=row.pk, provider=provider) == "skipped"
    document = FiscalDocument.objects.get()
    assert document.status == "authorized" and document.access_key == body["chave_nfe"].removeprefix("NFe")
    assert FiscalJob.objects.get().status == "done"


def test_webhook_with_a_wrong_secret_is_refused_and_not_stored(focus, client) -> None:
    response = _webhook(client, {"ref": "order_test-1", "status": "autorizado"}, secret="wrong")
    assert response.status_code == 401
    assert FiscalWebhook.objects.count() == 0


def test_provider_down_is_retried_later(focus) -> None:
    provider, state = focus
    state.mode = "down"
    request_issue()
    assert _run(provider) == "retry"
    job = FiscalJob.objects.get()
    assert (job.status, job.attempts) == ("pending", 1)
    assert job.last_error == "Focus NFe indisponível (HTTP 503)"
    assert job.next_run_at > timezone.now()
    assert FiscalDocument.objects.get().status == "pending"

    state.mode = "authorize"
    assert _run(provider) == "processing"  # asks first (404: never received), then sends
    assert state.requests[-2:] == [("GET", "/v2/nfe/order_test-1"), ("POST", "/v2/nfe")]
    assert _run(provider) == "authorized"


def test_requests_share_one_tls_context_per_process(focus, monkeypatch) -> None:
    """httpx loads the CA bundle into a new SSLContext for every client built without one (about 18 ms of
    CPU): the provider's requests share one per process."""
    import ssl

    provider, state = focus
    built: list[object] = []
    real = ssl.create_default_context

    def counted(*args: object, **kwargs: object) -> ssl.SSLContext:
        built.append(kwargs)
        return real(*args, **kwargs)

    request_issue()
    _run(provider)  # the process's context exists from here on
    monkeypatch.setattr(ssl, "create_default_context", counted)  # the standard library's: only counted
    asked = len(state.requests)
    assert _run(provider) == "authorized"
    assert len(state.requests) > asked  # the provider was asked again
    assert built == []  # by a client with the shared context


def test_connection_refused_is_retried_later() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
    provider = FocusNFeProvider(base_url=f"http://127.0.0.1:{port}", token=TOKEN, webhook_secret=SECRET)
    request_issue()
    assert _run(provider) == "retry"
    assert FiscalJob.objects.get().last_error == "Focus NFe inacessível: connect"


def test_cancel_through_delete(focus) -> None:
    provider, state = focus
    request_issue()
    _run(provider)
    _run(provider)
    from django.db import transaction

    from fiscal.services import document_request_cancel

    with transaction.atomic():
        assert (
            document_request_cancel(order_ref="order_test", justification="Cliente desistiu da compra") == "requested"
        )
    assert _run(provider) == "cancelled"
    assert state.requests[-2] == ("DELETE", "/v2/nfe/order_test-1")
    document = FiscalDocument.objects.get()
    assert document.status == "cancelled"
    # the cancellation event's XML, fetched from where Focus named it, is kept for the accountant
    assert state.requests[-1][1].endswith(f"{document.access_key}-can.xml")
    with document.cancel_xml.open("rb") as stored:
        assert b"110111" in stored.read()


def test_the_documents_environment_picks_focus_endpoint(settings) -> None:
    settings.FISCAL_PROVIDER = "focusnfe"
    settings.FISCAL_FOCUSNFE_BASE_URL = ""
    from fiscal.providers import get_provider

    assert get_provider("producao").base_url == "https://api.focusnfe.com.br"
    assert get_provider("homologacao").base_url == "https://homologacao.focusnfe.com.br"


# --- Cancel and reissue: a wrong buyer CPF/name on an authorized note (the carta de correção cannot change the
# destinatário), fixed within the SEFAZ's 24 hours by cancelling at Focus and issuing the next note.

CORRECTED = {
    "name": "Maria Souza", "tax_id": "39053344705", "email": "maria@example.com",
    "address": {"street": "Rua B", "number": "20", "neighborhood": "Centro", "city": "São Paulo", "state": "SP",
                "postal_code": "01002-000"},
}  # fmt: skip


def _authorized(provider: FocusNFeProvider) -> FiscalDocument:
    request_issue()
    _run(provider)
    assert _run(provider) == "authorized"
    return FiscalDocument.objects.get()


def _ask_cancel_reissue(justification: str = "CPF do destinatário informado errado") -> FiscalDocument:
    from django.db import transaction

    from fiscal.services import document_request_cancel_reissue
    from tests.fiscal.helpers import invoice

    with transaction.atomic():
        return document_request_cancel_reissue(
            order_ref="order_test", justification=justification, invoice=invoice(recipient=CORRECTED), problems=[]
        )


def test_cancel_and_reissue_cancels_at_focus_then_issues_the_corrected_note_once(focus) -> None:
    from fiscal.selectors import document_for_order

    provider, state = focus
    first = _authorized(provider)
    # Typed with a line break and spaces at the ends: the SEFAZ refuses those in xJust, so they are cleaned.
    assert _ask_cancel_reissue("  CPF do destinatário\n informado errado ").pk == first.pk
    assert _ask_cancel_reissue().pk == first.pk  # a double click asks nothing more
    cancel = FiscalJob.objects.get(action="cancel")
    assert (cancel.key, cancel.payload["justification"]) == (
        "order_test:cancel:1",
        "CPF do destinatário informado errado",
    )

    assert _run(provider) == "cancelled"
    assert state.requests[-2] == ("DELETE", "/v2/nfe/order_test-1")  # then the event's XML is fetched
    assert state.cancel_bodies["order_test-1"] == [{"justificativa": "CPF do destinatário informado errado"}]
    first.refresh_from_db()
    assert (first.status, first.sefaz_status) == ("cancelled", "135")
    second = document_for_order("order_test")
    assert second is not None and second.pk != first.pk
    assert (second.sequence, second.attempt, second.provider_ref, second.status) == (2, 2, "order_test-2", "pending")

    assert _run(provider) == "processing"  # POST /v2/nfe?ref=order_test-2: a new reference, a new number
    assert _run(provider) == "authorized"
    second.refresh_from_db()
    sent = state.bodies["order_test-2"]
    assert (sent["cpf_destinatario"], sent["nome_destinatario"]) == ("39053344705", "Maria Souza")
    assert (second.status, second.number) == ("authorized", 2) and second.access_key != first.access_key
    # Replays: the cancel job's task again, and Focus's gatilho of the cancellation: no third note, no second DELETE.
    assert job_run(job_id=cancel.pk, provider=provider) == "skipped"
    body = {"ref": "order_test-1", "status": "cancelado", "status_sefaz": "135", "chave_nfe": f"NFe{first.access_key}"}
    row = FiscalWebhook.objects.create(provider="focusnfe", event_id="e1", provider_ref="order_test-1", body=body)
    assert webhook_process(webhook_id=row.pk, provider=provider) == "unchanged"
    assert FiscalDocument.objects.count() == 2
    assert [r for r in state.requests if r[0] == "DELETE"] == [("DELETE", "/v2/nfe/order_test-1")]


def test_a_crash_after_focus_cancelled_loses_nothing_and_cancels_once(focus) -> None:
    """The DELETE went through, then the worker died before recording it: the job's next run asks Focus first
    (GET says cancelado), records the cancellation and issues the corrected note — with no second DELETE."""
    provider, state = focus
    first = _authorized(provider)
    _ask_cancel_reissue()
    cancel = FiscalJob.objects.get(action="cancel")
    FiscalJob.objects.filter(pk=cancel.pk).update(attempts=1)  # what the lease wrote before the call
    provider.cancel(ref="order_test-1", justification="CPF do destinatário informado errado")  # then the crash

    assert job_run(job_id=cancel.pk, provider=provider) == "cancelled"
    assert state.requests[-2] == ("GET", "/v2/nfe/order_test-1")
    assert len(state.cancel_bodies["order_test-1"]) == 1
    first.refresh_from_db()
    assert first.status == "cancelled"
    with first.cancel_xml.open("rb") as stored:  # the poll's answer named the event's XML: kept all the same
        assert b"110111" in stored.read()
    assert FiscalDocument.objects.filter(order_ref="order_test", sequence=2, status="pending").count() == 1


def test_a_cancel_the_sefaz_refuses_keeps_the_authorized_note_with_its_reason(focus) -> None:
    """Our clock says 23 h, the SEFAZ's says more than 24 h: Focus answers erro_cancelamento (501), the order
    keeps its authorized note, staff read the SEFAZ's reason, and no second note is issued."""
    from datetime import timedelta

    from tests.fiscal.fake_focus import LATE_CANCEL

    provider, state = focus
    first = _authorized(provider)
    state.authorized_at["order_test-1"] -= timedelta(hours=25)
    _ask_cancel_reissue()
    assert _run(provider) == "cancel_refused"
    first.refresh_from_db()
    assert (first.status, first.sefaz_status, first.sefaz_reason) == ("authorized", *LATE_CANCEL)
    assert FiscalDocument.objects.count() == 1
    assert FiscalJob.objects.get(action="cancel").status == "done"
    assert state.notes["order_test-1"]["status"] == "autorizado"
    # The order is then cancelled: its cancel is a new try under its own key, not "already" asked.
    from django.db import transaction

    from fiscal.services import document_request_cancel

    with transaction.atomic():
        assert document_request_cancel(order_ref="order_test", justification="") == "requested"
    assert list(FiscalJob.objects.filter(action="cancel").values_list("key", flat=True)) == [
        "order_test:cancel:1",
        "order_test:cancel:1-2",
    ]


def test_an_order_cancelled_during_a_cancel_and_reissue_gets_no_new_note(focus) -> None:
    from django.db import transaction

    from fiscal.services import document_request_cancel

    provider, _state = focus
    first = _authorized(provider)
    _ask_cancel_reissue()
    with transaction.atomic():  # the order is cancelled before the job ran
        assert document_request_cancel(order_ref="order_test", justification="") == "already"
    assert FiscalJob.objects.get(action="cancel").payload == {"justification": "CPF do destinatário informado errado"}
    assert _run(provider) == "cancelled"
    first.refresh_from_db()
    assert first.status == "cancelled" and FiscalDocument.objects.count() == 1


def test_cancel_and_reissue_is_refused_after_24_hours_and_for_a_bad_justification(focus) -> None:
    from datetime import timedelta

    from fiscal.services import CancelReissueRefused

    provider, state = focus
    first = _authorized(provider)
    for text, length in (("CPF errado", 10), ("x" * 256, 256), ("   \n  ", 0)):
        with pytest.raises(CancelReissueRefused) as refused:
            _ask_cancel_reissue(text)
        assert str(refused.value) == (
            f"Justificativa do cancelamento: escreva de 15 a 255 caracteres (tem {length}), por exemplo “CPF do "
            "destinatário informado errado”."
        )
    FiscalDocument.objects.filter(pk=first.pk).update(issued_at=timezone.now() - timedelta(hours=24, minutes=1))
    with pytest.raises(CancelReissueRefused) as refused:
        _ask_cancel_reissue()
    message = str(refused.value)
    assert message.startswith("Passadas 24 horas da autorização, a SEFAZ não cancela mais a NF-e")
    assert f"NF-e de entrada (devolução) referenciando a chave {first.access_key}" in message
    assert FiscalJob.objects.filter(action="cancel").count() == 0
    assert [r for r in state.requests if r[0] == "DELETE"] == []


def _ask_correction(text: str) -> object:
    from django.db import transaction

    from fiscal.services import document_request_correction

    with transaction.atomic():
        return document_request_correction(order_ref="order_test", text=text, actor="fiscal")


LETTER = "Onde se lê transportadora Rápida, leia-se transportadora Veloz Ltda."


def test_a_correction_letter_is_registered_at_focus_and_kept_with_its_files(focus) -> None:
    """CC-e (event 110110): staff's text, cleaned to one line, goes in `POST /v2/nfe/REF/carta_correcao`; the
    SEFAZ's number and the letter's XML and PDF are kept; the note itself does not change."""
    from fiscal.models import FiscalCorrection

    provider, state = focus
    note = _authorized(provider)
    first = _ask_correction("  " + LETTER.replace(" ", "\n  ", 1) + " ")
    assert _ask_correction(LETTER).pk == first.pk  # a double click while the letter is at the SEFAZ adds nothing
    job = FiscalJob.objects.get(action="correct")
    assert (job.key, job.payload["text"]) == ("order_test:correct:1-1", LETTER)

    assert _run(provider) == "corrected"
    assert state.corrections["order_test-1"] == [LETTER]
    assert ("POST", "/v2/nfe/order_test-1/carta_correcao") in state.requests
    letter = FiscalCorrection.objects.get()
    assert (letter.status, letter.number, letter.sefaz_status, letter.requested_by) == (
        "registered",
        1,
        "135",
        "fiscal",
    )
    with letter.xml.open("rb") as xml, letter.pdf.open("rb") as pdf:
        assert b"<tpEvento>110110</tpEvento>" in xml.read() and pdf.read() == b"%PDF-1.4 fake carta de correcao"
    note.refresh_from_db()
    assert (note.status, note.number) == ("authorized", 1)

    second = _ask_correction(LETTER + " Volumes: 2 caixas.")
    assert second.sequence == 2 and FiscalJob.objects.get(key="order_test:correct:1-2").payload["known"] == 1
    assert _run(provider) == "corrected"
    second.refresh_from_db()
    assert second.number == 2 and len(state.corrections["order_test-1"]) == 2


def test_a_crash_after_focus_registered_the_letter_sends_it_once(focus) -> None:
    """The POST went through, then the worker died before recording it: the job's next run reads the note's last
    letter (GET), finds one numbered past the known one, and records it — no second letter at the SEFAZ."""
    from fiscal.models import FiscalCorrection

    provider, state = focus
    _authorized(provider)
    _ask_correction(LETTER)
    job = FiscalJob.objects.get(action="correct")
    FiscalJob.objects.filter(pk=job.pk).update(attempts=1)  # what the lease wrote before the call
    provider.correct(ref="order_test-1", text=LETTER)  # then the crash

    assert job_run(job_id=job.pk, provider=provider) == "corrected"
    assert state.corrections["order_test-1"] == [LETTER]
    assert FiscalCorrection.objects.get().number == 1
    assert job_run(job_id=job.pk, provider=provider) == "skipped"  # the task delivered twice


def test_a_letter_the_sefaz_refuses_is_recorded_with_its_reason_and_the_next_one_can_be_asked(focus) -> None:
    from fiscal.models import FiscalCorrection

    provider, state = focus
    _authorized(provider)
    state.correction_refusals["order_test-1"] = ("573", "Rejeição: Duplicidade de evento")
    _ask_correction(LETTER)
    assert _run(provider) == "correction_refused"
    refused = FiscalCorrection.objects.get()
    assert (refused.status, refused.number, refused.sefaz_status, refused.sefaz_reason) == (
        "refused",
        None,
        "573",
        "Rejeição: Duplicidade de evento",
    )
    del state.correction_refusals["order_test-1"]
    again = _ask_correction(LETTER)
    assert again.sequence == 2
    assert _run(provider) == "corrected"


def test_a_correction_is_refused_before_any_call_when_the_sefaz_would_refuse_it(focus) -> None:
    from fiscal.models import CORRECTION_LIMIT, FiscalCorrection, FiscalDocument
    from fiscal.services import CorrectionRefused

    provider, state = focus
    request_issue()
    with pytest.raises(CorrectionRefused, match="não tem NF-e autorizada"):  # not authorized yet
        _ask_correction(LETTER)
    _run(provider)
    assert _run(provider) == "authorized"
    for text, length in (("volumes: 2", 10), ("x" * 1001, 1001), (" \n ", 0)):
        with pytest.raises(CorrectionRefused) as refused:
            _ask_correction(text)
        assert str(refused.value) == (
            f"Texto da carta de correção: escreva de 15 a 1000 caracteres (tem {length}), por exemplo “Onde se lê "
            "Rua das Flores, 12, leia-se Rua das Flores, 120”."
        )
    _ask_correction(LETTER)
    with pytest.raises(CorrectionRefused, match="ainda está na SEFAZ"):  # another text while one is in flight
        _ask_correction(LETTER + " Mais.")
    _run(provider)
    with pytest.raises(CorrectionRefused, match="é o da última carta registrada"):
        _ask_correction(LETTER)
    document = FiscalDocument.objects.get()
    FiscalCorrection.objects.bulk_create(
        FiscalCorrection(document=document, sequence=n, number=n, text=f"{LETTER} {n}", status="registered")
        for n in range(2, CORRECTION_LIMIT + 1)
    )
    with pytest.raises(CorrectionRefused, match="já tem 20 cartas de correção, o máximo da SEFAZ"):
        _ask_correction(LETTER + " Outra.")
    assert FiscalJob.objects.filter(action="correct").count() == 1
    assert [r for r in state.requests if r[1].endswith("/carta_correcao")] == [
        ("POST", "/v2/nfe/order_test-1/carta_correcao")
    ]


# --- NF-e de devolução: the goods of an authorized sale come back; the shop issues the note of entrada
# (finalidade 4) that references the sale's chave, with the returned units at the sale's values and taxes.

RETURN_RATES = (9000, 1000, 0)  # CBS 0,9 %, IBS UF 0,1 %, IBS Mun 0 % (ten-thousandths of a percent)


def _sale_invoice(state: str = "SP") -> dict:
    """A normal-regime sale of 3 camisetas and 1 caneca, with freight, a discount and IBS/CBS per item."""
    from fiscal import ibscbs
    from tests.fiscal.helpers import invoice

    rates = ibscbs.Rates(*RETURN_RATES)
    body = invoice()
    body["issuer"] = {**body["issuer"], "tax_regime": "normal"}
    body["recipient"] = {**body["recipient"], "address": {**body["recipient"]["address"], "state": state}}
    cfop = "5102" if state == "SP" else "6102"
    items = []
    for sku, description, quantity, unit_price, freight, discount in (
        ("CAM-P", "Camiseta P", 3, 4990, 1000, 300),
        ("CAN-M", "Caneca M", 1, 2500, 500, 0),
    ):
        total = unit_price * quantity
        base = ibscbs.item_base(total=total, freight=freight, discount=discount)
        items.append({
            "sku": sku, "description": description, "ncm": "61091000", "cfop": cfop, "origin": "0", "unit": "UN",
            "quantity": quantity, "unit_price": unit_price, "total": total, "shipping_amount": freight,
            "discount_amount": discount, "icms_cst": "00", "pis_cst": "07", "cofins_cst": "07",
            "ibs_cbs": ibscbs.item_group(cst="000", class_code="000001", base=base, rates=rates),
        })  # fmt: skip
    body.update(items=items, shipping_amount=1500, discount_amount=300, total_amount=14970 + 2500 + 1500 - 300)
    body["ibs_cbs_totals"] = ibscbs.totals([item["ibs_cbs"] for item in items])
    return body


def _authorized_sale(provider: FocusNFeProvider, state: str = "SP") -> FiscalDocument:
    request_issue()
    FiscalJob.objects.update(payload=_sale_invoice(state))
    _run(provider)
    assert _run(provider) == "authorized"
    return FiscalDocument.objects.get()


def _ask_return(quantities: dict[str, int], return_ref: str = "ret_a") -> object:
    from django.db import transaction

    from fiscal.services import document_request_return

    with transaction.atomic():
        return document_request_return(
            order_ref="order_test", return_ref=return_ref, quantities=quantities, actor="fiscal"
        )


def test_a_return_note_is_an_entrada_of_finalidade_4_referencing_the_sale_with_its_values(focus) -> None:
    """One of three camisetas comes back: the body POSTed to Focus is an NF-e de entrada (tipo 0), finalidade 4,
    "Devolução de venda", CFOP 1202 (buyer in the shop's UF), `notas_referenciadas` = [the sale's chave], the item
    at the sale's unit price with a third of its freight and discount shares and its IBS/CBS on that base; the
    note's number, chave, XML and DANFE are kept."""
    from fiscal.models import FiscalReturnNote

    provider, state = focus
    sale = _authorized_sale(provider)
    note = _ask_return({"CAM-P": 1})
    assert _ask_return({"CAM-P": 1}).pk == note.pk  # a double click asks nothing more
    job = FiscalJob.objects.get(action="return")
    assert job.key == "order_test:return:ret_a-1"

    assert _run(provider) == "processing"  # POST /v2/nfe?ref=ret_a-1
    sent = state.bodies["ret_a-1"]
    assert (sent["tipo_documento"], sent["finalidade_emissao"], sent["natureza_operacao"]) == (
        0,
        4,
        "Devolução de venda",
    )
    assert sent["notas_referenciadas"] == [{"chave_nfe": sale.access_key}]
    assert (sent["cpf_destinatario"], sent["local_destino"]) == ("52998224725", 1)
    (item,) = sent["items"]
    # 1 of 3: freight 10,00 → 3,33, discount 3,00 → 1,00; base 49,90 + 3,33 − 1,00 = 52,23;
    # IBS UF 52,23 × 0,1 % = 0,05, CBS 52,23 × 0,9 % = 0,47.
    assert {key: item[key] for key in (
        "codigo_produto", "cfop", "quantidade_comercial", "valor_unitario_comercial", "valor_bruto", "valor_frete",
        "valor_desconto", "icms_situacao_tributaria", "ibs_cbs_base_calculo", "ibs_uf_valor", "cbs_valor",
    )} == {
        "codigo_produto": "CAM-P", "cfop": "1202", "quantidade_comercial": 1, "valor_unitario_comercial": "49.90",
        "valor_bruto": "49.90", "valor_frete": "3.33", "valor_desconto": "1.00", "icms_situacao_tributaria": "00",
        "ibs_cbs_base_calculo": "52.23", "ibs_uf_valor": "0.05", "cbs_valor": "0.47",
    }  # fmt: skip
    assert (sent["valor_frete"], sent["valor_desconto"], sent["valor_total"]) == ("3.33", "1.00", "52.23")
    assert (sent["ibs_cbs_base_calculo"], sent["ibs_uf_valor_total"], sent["cbs_valor_total"]) == (
        "52.23",
        "0.05",
        "0.47",
    )

    assert _run(provider) == "return_authorized"  # GET /v2/nfe/ret_a-1: the fake checked it as the SEFAZ does
    note.refresh_from_db()
    assert (note.status, note.number, note.series, note.sefaz_status) == ("authorized", 2, 1, "100")
    assert note.access_key == state.notes["ret_a-1"]["chave_nfe"].removeprefix("NFe") != sale.access_key
    assert (note.total_amount, note.quantities, note.requested_by) == (5223, {"CAM-P": 1}, "fiscal")
    assert note.danfe.read() == b"%PDF-1.4 fake danfe"
    assert note.xml.read() == b"<nfeProc versao='4.00'/>"
    assert state.devolutions == {"ret_a-1": [sale.access_key]}
    sale.refresh_from_db()
    assert (sale.status, sale.number) == ("authorized", 1)  # the sale's note is untouched
    assert FiscalReturnNote.objects.count() == 1


def test_a_return_from_another_state_takes_cfop_2202(focus) -> None:
    provider, state = focus
    _authorized_sale(provider, state="RJ")
    _ask_return({"CAM-P": 3, "CAN-M": 1})
    _run(provider)
    assert _run(provider) == "return_authorized"
    sent = state.bodies["ret_a-1"]
    assert [(item["cfop"], item["quantidade_comercial"]) for item in sent["items"]] == [("2202", 3), ("2202", 1)]
    assert (sent["local_destino"], sent["valor_frete"], sent["valor_desconto"], sent["valor_total"]) == (
        2,
        "15.00",
        "3.00",
        "186.70",
    )  # everything came back: the sale's values exactly


def test_a_crash_after_focus_received_the_return_note_sends_it_once(focus) -> None:
    """The POST went through, then the worker died before recording it: the job's next run asks Focus for the
    note's reference first (GET), finds it, and records it — no second POST of the devolução."""
    from fiscal.models import FiscalReturnNote

    provider, state = focus
    _authorized_sale(provider)
    _ask_return({"CAN-M": 1})
    job = FiscalJob.objects.get(action="return")
    FiscalJob.objects.filter(pk=job.pk).update(attempts=1)  # what the lease wrote before the call
    provider.issue(ref="ret_a-1", invoice=job.payload["invoice"])  # then the crash

    assert job_run(job_id=job.pk, provider=provider) == "return_authorized"
    assert state.requests[-3:-2] == [("GET", "/v2/nfe/ret_a-1")]  # then the XML and the DANFE are fetched
    assert [r for r in state.requests if r == ("POST", "/v2/nfe")] == [("POST", "/v2/nfe")] * 2  # sale + devolução
    assert FiscalReturnNote.objects.get().status == "authorized"
    assert job_run(job_id=job.pk, provider=provider) == "skipped"  # the task delivered twice


def test_a_return_note_the_sefaz_rejects_keeps_its_reason_and_is_issued_again_under_a_new_reference(focus) -> None:
    from fiscal.models import FiscalReturnNote

    provider, state = focus
    _authorized_sale(provider)
    state.mode = "reject"
    note = _ask_return({"CAM-P": 2})
    _run(provider)
    assert _run(provider) == "return_rejected"
    note.refresh_from_db()
    assert (note.status, note.sefaz_status, note.sefaz_reason, note.access_key) == (
        "rejected",
        "778",
        REJECT_REASON,
        "",
    )

    state.mode = "authorize"
    again = _ask_return({"CAM-P": 2})
    assert (again.pk, again.attempt, again.provider_ref, again.status) == (note.pk, 2, "ret_a-2", "pending")
    assert FiscalJob.objects.get(action="return", status="pending").key == "order_test:return:ret_a-2"
    _run(provider)
    assert _run(provider) == "return_authorized"
    again.refresh_from_db()
    assert (again.status, again.sefaz_status) == ("authorized", "100")
    assert sorted(ref for ref in state.bodies if ref.startswith("ret_")) == ["ret_a-1", "ret_a-2"]
    assert FiscalReturnNote.objects.count() == 1


def test_a_return_note_is_refused_before_any_call_when_the_sale_cannot_back_it(focus) -> None:
    from fiscal.services import ReturnNoteRefused

    provider, state = focus
    with pytest.raises(ReturnNoteRefused, match="não tem NF-e de venda autorizada"):
        _ask_return({"CAM-P": 1})
    _authorized_sale(provider)
    _ask_return({"CAM-P": 2})
    with pytest.raises(ReturnNoteRefused) as refused:
        _ask_return({"CAM-P": 2, "XYZ": 1}, return_ref="ret_b")
    assert str(refused.value) == (
        "NF-e de devolução não emitida: item “Camiseta P” (SKU CAM-P): 2 unidade(s) a devolver, mas a NF-e de venda "
        "tem 3 e outras NF-e de devolução já devolveram 2; SKU XYZ: não consta da NF-e de venda."
    )
    assert FiscalJob.objects.filter(action="return").count() == 1
    assert not [ref for ref in state.bodies if ref.startswith("ret_")]


def test_the_gatilho_of_a_return_note_is_applied_once(focus, client, django_capture_on_commit_callbacks) -> None:
    from fiscal.models import FiscalReturnNote

    provider, state = focus
    _authorized_sale(provider)
    state.mode = "slow"
    _ask_return({"CAN-M": 1})
    assert _run(provider) == "processing"
    body = state.finish("ret_a-1")
    with django_capture_on_commit_callbacks(execute=False):
        assert _webhook(client, body).json() == {"recebido": True, "duplicado": False}
    row = FiscalWebhook.objects.get()
    assert webhook_process(webhook_id=row.pk, provider=provider) == "return_authorized"
    note = FiscalReturnNote.objects.get()
    assert (note.status, note.access_key) == ("authorized", body["chave_nfe"].removeprefix("NFe"))
    assert FiscalJob.objects.get(action="return").status == "done"
    assert note.danfe.read() == b"%PDF-1.4 fake danfe"
