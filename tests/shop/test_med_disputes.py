"""MED 2.0 through to the order (issue 37, part 2): the PSP's notification arrives at the Pix webhook boundary (the
fake Bacen PSP builds it in the DICT fields PSPs forward), is stored once, opens the dispute on the order's timeline
and the admin home, holds the shipment until staff answer (the answer goes to the fake PSP through the outbox), and
the outcome is recorded: a returned amount becomes a refund adjustment, completed once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone, translation

from orders.errors import OrderError
from orders.models import Adjustment, Order, OrderEvent
from orders.services import order_dispute_record, order_refund, order_ship
from payments.exceptions import PaymentInputError
from payments.med.models import PixInfraction, PixInfractionAnswer, PixInfractionEvent
from payments.med.services import infraction_answer, infraction_answer_send, infraction_event_process
from payments.models import PixPayment
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_active_for_reference
from payments.tasks import sweep_infractions
from shop.admin.dashboard import dashboard_get
from tests.payments.fake_bacen import PROXY_VERIFIED, FakeBacenServer, med_notice, use_fake_bacen
from tests.shop.test_completion import PIX, complete, ready_checkout

pytestmark = pytest.mark.django_db
URL = "/payments/pix/webhook/med"
HOLD = (
    "O Pix do pedido #{number} foi contestado pelo pagador (MED): o envio fica retido até a equipe responder a "
    "disputa em Pagamentos → Disputas Pix (MED)."
)


@pytest.fixture
def paid_order(settings: Any, django_capture_on_commit_callbacks: Any) -> Order:
    """An order of 2 × R$ 42,90 + PAC R$ 18,90 = R$ 104,70 paid by Pix (the sandbox PSP)."""
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    checkout = ready_checkout()
    complete(checkout, PIX)
    charge = pix_charge_active_for_reference(checkout.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=charge.txid, options=PayOptions())
    return Order.objects.get(checkout_id=checkout.public_id)


@pytest.fixture
def psp(settings: Any) -> Iterator[FakeBacenServer]:
    server = FakeBacenServer().start()
    use_fake_bacen(settings, server)  # from now on the PSP is a Bacen one: webhooks need the proxy's header
    yield server
    server.stop()


def _deliver(client: Client, body: dict[str, Any], capture: Any, **headers: str) -> Any:
    with capture(execute=True):
        return client.post(
            URL, data=json.dumps(body), content_type="application/json", headers=headers or PROXY_VERIFIED
        )


def _open(client: Client, psp: FakeBacenServer, order: Order, capture: Any) -> dict[str, Any]:
    e2e = PixPayment.objects.get().end_to_end_id
    body = med_notice(psp, kind="infraction_report", infraction_key="ir-1", e2eid=e2e, status="acknowledged",
                      event_key="evt-1")  # fmt: skip
    response = _deliver(client, body, capture)
    assert (response.status_code, response.json()) == (200, {"received": 1, "duplicates": 0})
    return body


def _kinds(order: Order) -> list[str]:
    return list(OrderEvent.objects.filter(order=order, kind__startswith="dispute_").values_list("kind", flat=True))


def test_a_dispute_holds_the_order_shows_on_the_timeline_and_the_admin_home(
    client: Client, paid_order: Order, psp: FakeBacenServer, django_capture_on_commit_callbacks: Any
) -> None:
    body = _open(client, psp, paid_order, django_capture_on_commit_callbacks)
    infraction = PixInfraction.objects.get()
    assert (infraction.status, infraction.amount, infraction.reference, infraction.situation) == (
        "open", 10470, paid_order.checkout_id, "scam"
    )  # fmt: skip
    paid_order.refresh_from_db()
    assert (paid_order.payment_dispute, paid_order.payment_dispute_id) == ("open", infraction.public_id)
    event = OrderEvent.objects.get(order=paid_order, kind="dispute_opened")
    assert event.message == (
        "O pagador contestou o Pix de R$ 104,70 pelo MED (golpe). Envio retido até a equipe responder. "
        "Relato: Pagador relata golpe: não reconhece a compra"
    )
    # the shipment is refused, in Portuguese, and nothing changes
    with pytest.raises(OrderError) as refused:
        order_ship(order_id=paid_order.public_id, tracking_number="BR123456785BR")
    assert refused.value.message == HOLD.format(number=paid_order.number)
    assert paid_order.fulfillment_events.count() == 0
    # the admin home counts it and links to the list of open disputes
    counters = {c.key: c for c in dashboard_get().counters}
    assert counters["disputes_open"].value == 1
    assert counters["disputes_open"].url.endswith("/admin/payments/pixinfraction/?status__exact=open")
    # agents see the hold through the order capability (the stored BCP order)
    assert json.loads(paid_order.bcp_json)["messages"] == [
        {
            "type": "warning",
            "code": "payment_disputed",
            "content": (
                "O Pix deste pedido foi contestado pelo pagador (MED): o envio está retido até a loja responder."
            ),
        }
    ]
    # a replay of the same notification changes nothing
    again = _deliver(client, body, django_capture_on_commit_callbacks)
    assert (again.status_code, again.json()) == (200, {"received": 0, "duplicates": 1})
    assert (PixInfractionEvent.objects.count(), PixInfraction.objects.count(), _kinds(paid_order)) == (
        1, 1, ["dispute_opened"]
    )  # fmt: skip


def test_the_dispute_pages_show_the_reply_deadline_and_mark_the_overdue_ones(
    admin_client: Client, client: Client, paid_order: Order, psp: FakeBacenServer,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    """QA walk: the MED pages showed no reply deadline. The receiver has 7 days from the infraction report to
    close it (Regulamento Pix, MED; payments/med/models.py ANSWER_WINDOW), and the PSP's notification carries no
    deadline: "Responder até" = opened + 7 days, in Brasília time, on the list (sortable, overdue marked), the
    dispute's page and the answer page. Dates far from today keep the test independent of the clock."""
    from datetime import UTC, datetime

    _open(client, psp, paid_order, django_capture_on_commit_callbacks)
    infraction = PixInfraction.objects.get()
    assert infraction.opened_at == datetime(2026, 12, 1, 15, 0, tzinfo=UTC)  # the PSP's event time
    late = PixInfraction.objects.create(
        psp_id="ir-old", end_to_end_id="E0000000020200302150000000000001", amount=1000,
        opened_at=datetime(2020, 3, 2, 15, 0, tzinfo=UTC),
    )  # fmt: skip
    PixInfraction.objects.filter(pk=infraction.pk).update(opened_at=datetime(2999, 1, 1, 15, 0, tzinfo=UTC))

    listing = admin_client.get("/admin/payments/pixinfraction/").content.decode()
    assert 'class="sortable column-answer_by' in listing and "Responder até" in listing
    assert '<td class="field-answer_by">08/01/2999 12:00</td>' in listing  # 15:00 UTC is 12:00 in Brasília
    assert '<strong class="med-overdue">09/03/2020 12:00 — prazo vencido</strong>' in listing
    assert listing.count("prazo vencido") == 1
    # sorted by the deadline: the overdue one first when ascending
    column = 1 + ["public_id", "status", "answer_by"].index("answer_by")  # 1 +: the action checkbox comes first
    ordered = admin_client.get(f"/admin/payments/pixinfraction/?o={column}")
    assert [row.pk for row in ordered.context["cl"].result_list] == [late.pk, infraction.pk]

    detail = admin_client.get(f"/admin/payments/pixinfraction/{infraction.pk}/change/").content.decode()
    assert "Responder até" in detail and "08/01/2999 12:00" in detail
    answer = admin_client.get(f"/admin/payments/pixinfraction/{late.pk}/responder/").content.decode()
    deadline = answer.split('data-testid="med-deadline"')[1].split("</p>")[0]
    assert "Responder até" in deadline and "09/03/2020 12:00 — prazo vencido" in deadline

    # answered: nothing left to meet
    PixInfraction.objects.filter(pk=late.pk).update(status=PixInfraction.Status.ANSWERED)
    listing = admin_client.get("/admin/payments/pixinfraction/").content.decode()
    assert "prazo vencido" not in listing and "09/03/2020 12:00" not in listing


def test_staff_contest_with_evidence_releases_the_hold_and_the_payment_is_kept(
    admin_client: Client, client: Client, paid_order: Order, psp: FakeBacenServer,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    _open(client, psp, paid_order, django_capture_on_commit_callbacks)
    infraction = PixInfraction.objects.get()
    answer_url = f"/admin/payments/pixinfraction/{infraction.pk}/responder/"
    # too short: a Portuguese error on the form, nothing recorded, nothing sent
    page = admin_client.post(answer_url, {"decision": "contest", "justification": "é legítima"})
    assert page.status_code == 200
    assert "Escreva a justificativa com as evidências (pelo menos 20 caracteres)" in page.content.decode()
    assert (PixInfractionAnswer.objects.count(), psp.state.defenses) == (0, {})
    evidence = "Entregue em 02/12 pelos Correios, rastreio BR123456785BR, NF-e 1234; comprador confirmou por e-mail."
    with django_capture_on_commit_callbacks(execute=True):
        done = admin_client.post(answer_url, {"decision": "contest", "justification": evidence})
    assert done.status_code == 302
    assert psp.state.defenses == {"ir-1": {"analise": "rejeitado", "justificativa": evidence}}
    answer = PixInfractionAnswer.objects.get()
    assert (answer.status, answer.attempts, answer.actor) == ("sent", 1, "admin")
    assert infraction_answer_send(answer_id=answer.pk) == "skipped"  # the outbox row runs once
    paid_order.refresh_from_db()
    assert paid_order.payment_dispute == "contested"
    order_ship(order_id=paid_order.public_id, tracking_number="BR123456785BR")  # the hold is lifted
    # the PSP decides for the shop
    e2e = infraction.end_to_end_id
    closed = med_notice(psp, kind="infraction_report", infraction_key="ir-1", e2eid=e2e, status="closed",
                        event_key="evt-2", analysis_result="disagreed")  # fmt: skip
    _deliver(client, closed, django_capture_on_commit_callbacks)
    infraction.refresh_from_db()
    paid_order.refresh_from_db()
    assert (infraction.status, infraction.outcome, paid_order.payment_dispute) == ("closed", "kept", "kept")
    assert paid_order.adjustments.count() == 0
    assert _kinds(paid_order) == ["dispute_opened", "dispute_answered", "dispute_kept"]


def test_a_dispute_of_an_order_already_shipped_does_not_say_the_shipment_is_held(
    client: Client, paid_order: Order, psp: FakeBacenServer, django_capture_on_commit_callbacks: Any
) -> None:
    """QA walk: the MED of a delivered order said "Envio retido até a equipe responder" on its timeline, and
    "Envio liberado" when it closed, though everything had left the shop."""
    order_ship(order_id=paid_order.public_id, tracking_number="BR123456785BR")
    _open(client, psp, paid_order, django_capture_on_commit_callbacks)
    opened = OrderEvent.objects.get(order=paid_order, kind="dispute_opened").message
    assert "O pedido já saiu da loja: responda com o rastreio e a nota fiscal." in opened
    assert "retido" not in opened
    infraction = PixInfraction.objects.get()
    closed = med_notice(psp, kind="infraction_report", infraction_key="ir-1", e2eid=infraction.end_to_end_id,
                        status="closed", event_key="evt-2", analysis_result="disagreed")  # fmt: skip
    _deliver(client, closed, django_capture_on_commit_callbacks)
    kept = OrderEvent.objects.get(order=paid_order, kind="dispute_kept").message
    assert kept == "Disputa do Pix encerrada: os R$ 104,70 ficam com a loja."


def test_an_accepted_dispute_returns_the_money_as_one_completed_refund(
    admin_client: Client, client: Client, paid_order: Order, psp: FakeBacenServer,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    _open(client, psp, paid_order, django_capture_on_commit_callbacks)
    infraction = PixInfraction.objects.get()
    answer_url = f"/admin/payments/pixinfraction/{infraction.pk}/responder/"
    accept = {"decision": "accept", "justification": "Não reconhecemos o comprador; o pedido não foi enviado."}
    # Walk h44: the form names the order it is about, and the money leaves only once staff confirm it (no way back)
    form = admin_client.get(answer_url).content.decode()
    # Merchant gap (closing note, session 46): by its number, linked to its page, not "ver o pedido" alone
    assert f'<a href="/admin/orders/order/{paid_order.pk}/change/">ver o pedido #{paid_order.number}</a>' in form
    change = admin_client.get(f"/admin/payments/pixinfraction/{infraction.pk}/change/").content.decode()
    listed = admin_client.get("/admin/payments/pixinfraction/").content.decode()
    for page in (change, listed):
        assert f'<a href="/admin/orders/order/{paid_order.pk}/change/">ver o pedido #{paid_order.number}</a>' in page
    assert "Confirmo devolver R$ 104,70 ao pagador (não dá para desfazer)" in form
    unconfirmed = admin_client.post(answer_url, accept)
    assert unconfirmed.status_code == 200
    assert "Para aceitar, confirme que R$ 104,70 serão devolvidos ao pagador." in unconfirmed.content.decode()
    assert (PixInfractionAnswer.objects.count(), psp.state.defenses) == (0, {})
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(answer_url, {**accept, "confirm_return": "on"})
    assert psp.state.defenses["ir-1"]["analise"] == "aceito"
    paid_order.refresh_from_db()
    assert paid_order.payment_dispute == "open"  # agreeing to return keeps the goods in the shop
    e2e = infraction.end_to_end_id
    notices = [
        med_notice(psp, kind="infraction_report", infraction_key="ir-1", e2eid=e2e, status="closed",
                   event_key="evt-2", analysis_result="agreed"),
        med_notice(psp, kind="refund_request", infraction_key="ir-1", e2eid=e2e, status="open", event_key="evt-3",
                   requested="104.70"),
        med_notice(psp, kind="refund_request", infraction_key="ir-1", e2eid=e2e, status="closed", event_key="evt-4",
                   requested="104.70", refunded="104.70", analysis_result="totally_accepted"),
    ]  # fmt: skip
    for notice in notices:
        assert _deliver(client, notice, django_capture_on_commit_callbacks).status_code == 200
    # the PSP re-sends the closing notice under a new event key: the dispute is final, nothing more happens
    late = {**notices[-1], "key": "evt-5"}
    assert _deliver(client, late, django_capture_on_commit_callbacks).json() == {"received": 1, "duplicates": 0}
    assert PixInfractionEvent.objects.get(event_key="evt-5").outcome == "already_final"
    infraction.refresh_from_db()
    paid_order.refresh_from_db()
    assert (infraction.status, infraction.outcome, infraction.returned_amount) == ("closed", "returned", 10470)
    refund = Adjustment.objects.get(order=paid_order)
    assert (refund.type, refund.status, refund.amount) == ("refund", "completed", -10470)
    assert (paid_order.refunded_amount, paid_order.payment_status, paid_order.payment_dispute) == (
        10470, "refunded", "returned"
    )  # fmt: skip
    assert _kinds(paid_order) == ["dispute_opened", "dispute_answered", "dispute_agreed", "dispute_returned"]
    # agents see the order through the order capability: the refund is in its adjustments
    presented = json.loads(paid_order.bcp_json)
    assert [(a["type"], a["status"], a["totals"]) for a in presented["adjustments"]] == [
        ("refund", "completed", [{"type": "total", "amount": -10470}])
    ]
    assert "messages" not in presented  # decided: no warning left


def test_unauthenticated_or_malformed_notifications_store_nothing(
    client: Client, paid_order: Order, psp: FakeBacenServer, django_capture_on_commit_callbacks: Any
) -> None:
    e2e = PixPayment.objects.get().end_to_end_id
    body = med_notice(psp, kind="infraction_report", infraction_key="ir-9", e2eid=e2e, status="open", event_key="e9")
    forged = _deliver(client, body, django_capture_on_commit_callbacks, **{"X-SSL-Client-Verify": "NONE"})
    assert forged.status_code == 401
    broken = {**body, "data": {**body["data"], "infraction_report_status": "talvez"}}
    bad = _deliver(client, broken, django_capture_on_commit_callbacks)
    assert (bad.status_code, bad.json()["detail"]) == (400, "data.infraction_report_status desconhecido: 'talvez'")
    assert (PixInfractionEvent.objects.count(), PixInfraction.objects.count()) == (0, 0)


def test_statement_budgets_of_the_dispute_steps(
    client: Client, paid_order: Order, psp: FakeBacenServer, django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
) -> None:  # fmt: skip
    """Store (webhook) 3; apply the opening with the order's hold, timeline and re-rendered BCP order 21; the staff's
    answer 19; sending it 9 (no statement while the PSP is called: the lease and the record are two transactions)."""
    e2e = PixPayment.objects.get().end_to_end_id
    body = med_notice(psp, kind="infraction_report", infraction_key="ir-1", e2eid=e2e, status="open", event_key="e1")
    with django_assert_max_num_queries(3), django_capture_on_commit_callbacks(execute=False):
        client.post(URL, data=json.dumps(body), content_type="application/json", headers=PROXY_VERIFIED)
    event = PixInfractionEvent.objects.get()
    with django_assert_max_num_queries(21), django_capture_on_commit_callbacks(execute=False):
        assert infraction_event_process(event_id=event.pk) == "opened"
    infraction = PixInfraction.objects.get()
    with django_assert_max_num_queries(19), django_capture_on_commit_callbacks(execute=False):
        answer = infraction_answer(
            infraction_id=infraction.public_id, accept=False, justification="Entregue com rastreio BR123456785BR."
        )
    with django_assert_max_num_queries(9):
        assert infraction_answer_send(answer_id=answer.pk) == "sent"


def test_the_answer_survives_a_psp_outage_and_is_sent_once_by_the_sweep(
    client: Client, paid_order: Order, psp: FakeBacenServer, django_capture_on_commit_callbacks: Any
) -> None:
    _open(client, psp, paid_order, django_capture_on_commit_callbacks)
    infraction = PixInfraction.objects.get()
    psp.state.forced.append((503, {"title": "Serviço indisponível"}))  # the PSP is down for the first POST
    with django_capture_on_commit_callbacks(execute=True):
        answer = infraction_answer(
            infraction_id=infraction.public_id, accept=False, justification="Entregue com rastreio BR123456785BR."
        )
    answer.refresh_from_db()
    assert (answer.status, answer.attempts, psp.state.defenses) == ("pending", 1, {})
    assert "503" in answer.last_error
    PixInfractionAnswer.objects.filter(pk=answer.pk).update(next_run_at=timezone.now())  # its retry is due
    assert sweep_infractions() == 1
    assert sweep_infractions() == 0  # sent: nothing left to re-drive
    answer.refresh_from_db()
    assert (answer.status, answer.attempts) == ("sent", 2)
    assert list(psp.state.defenses) == ["ir-1"]
    # a second answer to the same dispute is refused in Portuguese, nothing changes
    with pytest.raises(PaymentInputError) as refused:
        infraction_answer(infraction_id=infraction.public_id, accept=True, justification="Mudamos de ideia, devolver.")
    assert refused.value.message == "Esta disputa já está respondida: não aceita outra resposta."
    with translation.override("en"), pytest.raises(PaymentInputError) as in_english:  # staff reading English
        infraction_answer(infraction_id=infraction.public_id, accept=True, justification="Mudamos de ideia, devolver.")
    assert in_english.value.message == "This dispute is already answered: it takes no other answer."


def test_an_answer_the_psp_refuses_is_marked_failed_for_staff(
    client: Client, paid_order: Order, psp: FakeBacenServer, django_capture_on_commit_callbacks: Any
) -> None:
    _open(client, psp, paid_order, django_capture_on_commit_callbacks)
    infraction = PixInfraction.objects.get()
    psp.state.defenses["ir-1"] = {"analise": "aceito", "justificativa": "respondida por outro canal"}
    with django_capture_on_commit_callbacks(execute=True):
        answer = infraction_answer(
            infraction_id=infraction.public_id, accept=False, justification="Entregue com rastreio BR123456785BR."
        )
    answer.refresh_from_db()
    assert answer.status == "failed"
    assert answer.last_error == "422 DefesaJaEnviada: a defesa desta infração já foi enviada"


def test_money_returned_by_the_med_after_a_staff_refund_is_flagged_not_counted_twice(
    paid_order: Order, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        order_refund(order_id=paid_order.public_id, amount=10470, reason="Cliente desistiu")
    paid_order.refresh_from_db()
    assert (paid_order.refunded_amount, paid_order.payment_status) == (10470, "refunded")
    ref = {"checkout_id": paid_order.checkout_id, "infraction_id": "med_x", "amount": 10470}
    assert order_dispute_record(event="opened", **ref) == "held"
    assert order_dispute_record(event="closed", returned_amount=10470, outcome="returned", **ref) == "returned_twice"
    assert order_dispute_record(event="closed", returned_amount=10470, outcome="returned", **ref) == "unchanged"
    paid_order.refresh_from_db()
    assert (paid_order.refunded_amount, paid_order.payment_dispute) == (10470, "returned")
    # the staff's refund and the MED's debit, each as it happened; the order never counts above what was paid
    assert list(Adjustment.objects.filter(order=paid_order).values_list("amount", flat=True)) == [-10470, -10470]
    assert OrderEvent.objects.get(order=paid_order, kind="dispute_returned").message == (
        "R$ 104,70 devolvidos ao pagador pelo MED (o PSP debitou a conta da loja). O pedido já tinha R$ 104,70 "
        "reembolsados e só restavam R$ 0,00 a reembolsar: R$ 104,70 saíram duas vezes. Confira com o PSP e peça de "
        "volta ao pagador."
    )


@pytest.fixture
def partly_refunded(paid_order: Order, django_capture_on_commit_callbacks: Any) -> Order:
    """The order of R$ 104,70 with R$ 40,75 already refunded (a return), before any dispute."""
    with django_capture_on_commit_callbacks(execute=True):
        order_refund(order_id=paid_order.public_id, amount=4075, reason="Devolução de um item")
    paid_order.refresh_from_db()
    assert (paid_order.refunded_amount, paid_order.payment_status) == (4075, "partially_refunded")
    return paid_order


def test_a_med_return_after_a_partial_refund_records_what_the_psp_debited_and_flags_the_excess(
    admin_client: Client, client: Client, partly_refunded: Order, psp: FakeBacenServer,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    """QA: R$ 40,75 refunded by a return, then the MED returned the whole Pix: the PSP debited all of it, so the
    order records that, counts the order as refunded (never above what was paid) and says R$ 40,75 left twice."""
    order = partly_refunded
    _open(client, psp, order, django_capture_on_commit_callbacks)
    infraction = PixInfraction.objects.get()
    answer_url = f"/admin/payments/pixinfraction/{infraction.pk}/responder/"
    # the answer form tells staff what was refunded already and what would leave twice
    form = admin_client.get(answer_url).content.decode()
    assert (
        "Este Pix já teve R$ 40,75 reembolsados pela loja. Se o PSP devolver o valor contestado inteiro, "
        "R$ 40,75 sairão da conta duas vezes: diga isso na justificativa."
    ) in form
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            answer_url, {"decision": "accept", "justification": "Não reconhecemos o comprador.", "confirm_return": "on"}
        )
    e2e = infraction.end_to_end_id
    notices = [
        med_notice(psp, kind="infraction_report", infraction_key="ir-1", e2eid=e2e, status="closed",
                   event_key="evt-2", analysis_result="agreed"),
        med_notice(psp, kind="refund_request", infraction_key="ir-1", e2eid=e2e, status="closed", event_key="evt-3",
                   requested="104.70", refunded="104.70", analysis_result="totally_accepted"),
    ]  # fmt: skip
    for notice in notices:
        assert _deliver(client, notice, django_capture_on_commit_callbacks).status_code == 200
    assert PixInfractionEvent.objects.get(event_key="evt-3").outcome == "closed_returned"
    order.refresh_from_db()
    # what the PSP debited is the refund recorded; the order counts up to what was paid
    med = Adjustment.objects.get(order=order, description__startswith="Devolução pelo MED")
    assert (med.type, med.status, med.amount) == ("refund", "completed", -10470)
    assert (order.refunded_amount, order.payment_status, order.payment_dispute) == (10470, "refunded", "returned")
    event = OrderEvent.objects.get(order=order, kind="dispute_returned")
    assert event.message == (
        "R$ 104,70 devolvidos ao pagador pelo MED (o PSP debitou a conta da loja). O pedido já tinha R$ 40,75 "
        "reembolsados e só restavam R$ 63,95 a reembolsar: R$ 40,75 saíram duas vezes. Confira com o PSP e peça de "
        "volta ao pagador."
    )
    assert (event.data["amount"], event.data["excess"]) == (10470, 4075)
    # the dispute page says it too, with the exact excess
    page = admin_client.get(f"/admin/payments/pixinfraction/{infraction.pk}/change/").content.decode()
    assert (
        "O MED devolveu R$ 104,70, mas R$ 40,75 deste Pix já tinham sido reembolsados: R$ 40,75 saíram duas vezes."
    ) in page
