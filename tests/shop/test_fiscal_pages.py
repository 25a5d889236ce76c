"""Where the NF-e shows (issue 18): the admin order page (status, key, SEFAZ reason, files, re-issue)
and the buyer permalink (DANFE link)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.conf import settings

from fiscal.models import FiscalDocument, FiscalJob
from fiscal.services import job_run
from shop.models import Product
from tests.shop.test_fiscal_lifecycle import fiscal_store, paid_order  # noqa: F401

pytestmark = pytest.mark.django_db


def test_admin_shows_the_blocking_reason_and_reissues_after_the_fix(admin_client, fiscal_store) -> None:  # noqa: F811
    order = paid_order(ncm="")
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Nota fiscal (NF-e)" in page
    assert 'data-testid="fiscal-status">Bloqueada (dados faltando)<' in page  # the SEFAZ never saw it
    reason = "Dados fiscais incompletos: produto “Café Especial 500 g” (SKU SKU-CAFE-500G): NCM não informado"
    assert f'data-testid="fiscal-reason">{reason}<' in page
    assert 'data-testid="fiscal-reissue"' in page

    # Re-issue before the fix: still blocked, said again in the message, nothing sent to the provider.
    response = admin_client.post(f"/admin/fiscal/{order.public_id}/reissue/", follow=True)
    assert [str(m) for m in response.context["messages"]] == [f"NF-e não emitida. {reason}"]
    assert FiscalJob.objects.count() == 0

    Product.objects.update(ncm="09012100")
    response = admin_client.post(f"/admin/fiscal/{order.public_id}/reissue/", follow=True)
    assert [str(m) for m in response.context["messages"]] == ["Emissão da NF-e solicitada."]
    assert job_run(job_id=FiscalJob.objects.get().pk) == "authorized"
    document = FiscalDocument.objects.get()
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert f'data-testid="fiscal-key">{document.access_key}<' in page
    assert f"/fiscal/d/{document.download_token}/danfe" in page
    assert 'data-testid="fiscal-reissue"' not in page  # authorized: nothing to re-issue


def test_reissue_needs_staff(client, fiscal_store) -> None:  # noqa: F811
    order = paid_order(ncm="")
    response = client.post(f"/admin/fiscal/{order.public_id}/reissue/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert FiscalDocument.objects.get().attempt == 1


def test_permalink_links_the_danfe_once_authorized(client, fiscal_store) -> None:  # noqa: F811
    order = paid_order()
    page = client.get(order.permalink_url).content.decode()
    assert "A nota fiscal está sendo emitida" in page
    job_run(job_id=FiscalJob.objects.get().pk)
    document = FiscalDocument.objects.get()
    page = client.get(order.permalink_url).content.decode()
    key = document.access_key
    assert f'data-testid="fiscal-access-key">{" ".join(key[i : i + 4] for i in range(0, 44, 4))}<' in page
    assert f'href="/fiscal/d/{document.download_token}/danfe" class="tap-link" data-testid="danfe-link"' in page


def test_permalink_hides_a_rejected_document(client, fiscal_store) -> None:  # noqa: F811
    order = paid_order(ncm="")
    assert 'data-testid="order-fiscal"' not in client.get(order.permalink_url).content.decode()


def test_the_nfe_list_reissues_the_selected_notes(admin_client, fiscal_store) -> None:  # noqa: F811
    order = paid_order(ncm="")
    document = FiscalDocument.objects.get()
    page = admin_client.get("/admin/fiscal/fiscaldocument/").content.decode()
    assert f'<a href="/admin/orders/order/{order.pk}/change/">#{order.number}</a>' in page
    # one "Pedido" column: the number, linked (the order's public id sat beside it under the same header)
    assert page.count('<th scope="col" class="sortable column-order_link') == 1
    assert "column-order_ref" not in page and f">{order.public_id}<" not in page
    Product.objects.update(ncm="09012100")
    response = admin_client.post(
        "/admin/fiscal/fiscaldocument/",
        {"action": "reissue_action", "_selected_action": [document.pk], "index": 0},
        follow=True,
    )
    assert [str(m) for m in response.context["messages"]] == ["Emissão solicitada para 1 NF-e."]
    assert FiscalDocument.objects.get().status == "pending"
    assert FiscalJob.objects.get().key == f"{order.public_id}:issue:1"


class _Links(HTMLParser):
    """The page's links as (href, text), and whether any link sits inside another (the browser then opens neither
    as written: the inner one ends the outer one and leaves it empty)."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[list[str]] = []
        self.links: list[tuple[str, str]] = []
        self.nested = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.nested = self.nested or bool(self.open)
            self.open.append([dict(attrs).get("href") or "", ""])

    def handle_data(self, data: str) -> None:
        for link in self.open:
            link[1] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self.open:
            href, text = self.open.pop()
            self.links.append((href, text.strip()))


def _links(page: str) -> _Links:
    parser = _Links()
    parser.feed(page)
    return parser


def test_the_nfe_list_opens_the_note_and_links_its_order_apart(admin_client, fiscal_store) -> None:  # noqa: F811
    """QA walk: the "#N" order link sat inside the row's change link (a link inside a link), so staff could not
    open the NF-e from its list. The first column opens the NF-e; the order is a separate, valid link."""
    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    document = FiscalDocument.objects.get()
    page = admin_client.get("/admin/fiscal/fiscaldocument/").content.decode()
    links = _links(page)
    assert not links.nested
    assert (f"/admin/fiscal/fiscaldocument/{document.pk}/change/", f"NF-e nº {document.number}") in links.links
    assert (f"/admin/orders/order/{order.pk}/change/", f"#{order.number}") in links.links
    assert admin_client.get(f"/admin/fiscal/fiscaldocument/{document.pk}/change/").status_code == 200


def test_the_nfe_page_reads_as_words_with_its_order_files_and_ibs_cbs_in_reais(admin_client, fiscal_store) -> None:  # noqa: F811
    """QA walk: the NF-e's own page showed the order's technical id unlinked, "nfe", storage paths, the IBS/CBS
    totals as raw JSON in centavos and the download token. Now: words, links, R$."""
    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    FiscalDocument.objects.update(
        ibs_cbs_totals={"base": 6180, "ibs_uf_amount": 6, "ibs_mun_amount": 0, "ibs_amount": 6, "cbs_amount": 56}
    )
    document = FiscalDocument.objects.get()
    page = admin_client.get(f"/admin/fiscal/fiscaldocument/{document.pk}/change/").content.decode()
    assert f"NF-e nº {document.number} — pedido #{order.number} (Autorizada)" in page
    assert order.public_id not in page
    links = _links(page).links
    assert (f"/admin/orders/order/{order.pk}/change/", f"#{order.number}") in links
    assert "NF-e (modelo 55)" in page and ">nfe<" not in page
    token = document.download_token
    assert (f"/fiscal/d/{token}/danfe", "DANFE (PDF)") in links
    assert (f"/fiscal/d/{token}/xml", "XML da NF-e") in links
    assert document.danfe.name not in page and document.xml.name not in page  # no storage paths
    assert "base R$ 61,80 · IBS R$ 0,06 · CBS R$ 0,56" in page
    assert "cbs_amount" not in page and "6180" not in page
    assert "Download token" not in page and "download_token" not in page
    # once cancelled, the cancellation event's XML is linked too (the title says "Cancelada")
    FiscalDocument.objects.update(status="cancelled", cancel_xml="fiscal/xml/evento-can.xml")
    page = admin_client.get(f"/admin/fiscal/fiscaldocument/{document.pk}/change/").content.decode()
    assert (f"/fiscal/d/{token}/cancelamento", "XML do cancelamento") in _links(page).links
    assert f"NF-e nº {document.number} — pedido #{order.number} (Cancelada)" in page


def test_the_nfe_page_says_why_a_simples_note_has_no_ibs_cbs_group(admin_client, fiscal_store) -> None:  # noqa: F811
    """QA walk: a Simples Nacional note showed "-" for its IBS/CBS totals; the page says when the group starts
    (fiscal/ibscbs.py `applies`: the Simples from FISCAL_IBSCBS_SIMPLES_FROM, 01/01/2999 in this fixture)."""
    paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    document = FiscalDocument.objects.get()
    assert document.ibs_cbs_totals == {}
    page = admin_client.get(f"/admin/fiscal/fiscaldocument/{document.pk}/change/").content.decode()
    assert "no Simples Nacional e no MEI o grupo IBS/CBS só vai na NF-e a partir de 01/01/2999" in page


def test_the_reissue_button_posts_the_order_form_not_a_nested_one(admin_client, fiscal_store) -> None:  # noqa: F811
    order = paid_order(ncm="")
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert page.count("<form") == page.count("</form>") == 1 + page.count('id="logout-form"')  # none nested
    assert f'formaction="/admin/fiscal/{order.public_id}/reissue/" formmethod="post"' in page


def test_admin_shows_the_ibs_cbs_totals_in_reais_and_names_the_filter(admin_client, fiscal_store) -> None:  # noqa: F811
    """QA walk: the NF-e box left out the IBS/CBS the note carries; shown as base, IBS and CBS in R$."""
    order = paid_order()
    FiscalDocument.objects.update(
        ibs_cbs_totals={"base": 12345, "ibs_uf_amount": 12, "ibs_mun_amount": 0, "ibs_amount": 12, "cbs_amount": 111}
    )
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    box = page.split('data-testid="fiscal-ibs-cbs"')[1].split("</div>")[0]
    assert "base R$ 123,45 · IBS R$ 0,12 · CBS R$ 1,11" in box
    returns = admin_client.get("/admin/orders/returnrequest/").content.decode()
    assert "Por pedida por" not in returns and "Por quem pediu" in returns


def test_the_nfe_list_filters_blocked_notes_apart_from_the_ones_the_sefaz_rejected(admin_client, fiscal_store) -> None:  # noqa: F811
    # given one note blocked for missing data and one the SEFAZ rejected
    blocked = paid_order(ncm="").public_id
    rejected = "order_rejeitado_pela_sefaz"
    FiscalDocument.objects.create(
        order_ref=rejected, status="rejected", sefaz_status="778", sefaz_reason="Rejeição: NCM inexistente"
    )

    # when staff filter the NF-e list by its situation
    def listed(situation: str) -> set[str]:
        response = admin_client.get(f"/admin/fiscal/fiscaldocument/?situacao={situation}")
        return {document.order_ref for document in response.context["cl"].result_list}

    # then "bloqueada" lists only the blocked note and "rejeitada" only the SEFAZ's rejection
    assert listed("blocked") == {blocked}
    assert listed("rejected") == {rejected}
    assert "Bloqueada (dados faltando)" in admin_client.get("/admin/fiscal/fiscaldocument/").content.decode()


def test_the_nfe_list_shows_a_month_in_brasilia_time_with_cancellations_and_reissues(admin_client) -> None:
    """QA walk (closing the month): "which NF-e were authorized, cancelled, re-issued in November?" — the list
    had no date filter, no cancellation date and no attempt count. A note authorized at 23:30 of 30/11 in
    Brasília (02:30 UTC of 01/12) is November's."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    brt = ZoneInfo("America/Sao_Paulo")
    late = FiscalDocument.objects.create(
        order_ref="order_nov_late", status="authorized", number=10, series=1, access_key="35" + "1" * 42,
        issued_at=datetime(2026, 11, 30, 23, 30, tzinfo=brt), attempt=2,
    )  # fmt: skip
    FiscalDocument.objects.create(
        order_ref="order_dez", status="cancelled", number=11, series=1, access_key="35" + "2" * 42,
        issued_at=datetime(2026, 12, 1, 0, 10, tzinfo=brt), cancelled_at=datetime(2026, 12, 2, 9, 0, tzinfo=brt),
    )  # fmt: skip

    november = admin_client.get("/admin/fiscal/fiscaldocument/?issued_at__year=2026&issued_at__month=11")
    assert [d.order_ref for d in november.context["cl"].result_list] == [late.order_ref]
    page = admin_client.get("/admin/fiscal/fiscaldocument/").content.decode()
    assert "cancelada em" in page.lower() and "tentativa" in page.lower()
    cancelled = admin_client.get(
        "/admin/fiscal/fiscaldocument/?cancelled_at__gte=2026-12-01+00:00:00-03:00&cancelled_at__lt=2027-01-01+00:00:00-03:00"
    )
    assert [d.order_ref for d in cancelled.context["cl"].result_list] == ["order_dez"]


def test_the_nfe_list_exports_the_filtered_month_for_the_accountant(admin_client) -> None:
    """QA walk (closing the month): the NF-e of a month (numbers, keys, authorized or cancelled) had a list but no
    export. The CSV follows the list's filters and opens in Excel pt-BR (BOM, `;`, Brasília time, key as text)."""
    import csv
    import io
    from datetime import datetime
    from zoneinfo import ZoneInfo

    brt = ZoneInfo("America/Sao_Paulo")
    FiscalDocument.objects.create(
        order_ref="order_nov", order_number=1001, status="cancelled", number=10, series=1,
        access_key="3526" + "1" * 40, protocol="135260000000001", issued_at=datetime(2026, 11, 30, 23, 30, tzinfo=brt),
        cancelled_at=datetime(2026, 11, 30, 23, 50, tzinfo=brt), attempt=2,
    )  # fmt: skip
    FiscalDocument.objects.create(
        order_ref="order_dez", order_number=1002, status="authorized", number=11, series=1,
        access_key="3526" + "2" * 40, issued_at=datetime(2026, 12, 1, 0, 10, tzinfo=brt),
    )  # fmt: skip

    response = admin_client.get("/admin/fiscal/fiscaldocument/export.csv?issued_at__year=2026&issued_at__month=11")
    raw = b"".join(response.streaming_content)

    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig")), delimiter=";"))
    assert rows == [
        ["Pedido", "Número", "Série", "Chave de acesso", "Situação", "Ambiente", "Autorizada em", "Cancelada em",
         "Tentativa", "Protocolo", "Motivo SEFAZ", "Finalidade", "NF-e referenciada"],
        ["1001", "10", "1", "3526 " + " ".join(["1111"] * 10), "Cancelada", "Homologação", "30/11/2026 23:30",
         "30/11/2026 23:50", "2", "135260000000001", "", "Venda", ""],
    ]  # fmt: skip
    assert (
        "/admin/fiscal/fiscaldocument/export.csv" in admin_client.get("/admin/fiscal/fiscaldocument/").content.decode()
    )


def test_an_order_without_nfe_offers_to_issue_without_the_reissue_advice(admin_client, fiscal_store) -> None:  # noqa: F811
    """QA walk: an order with no NF-e read "Nenhuma nota fiscal solicitada" and, under "Emitir NF-e", "Corrija os
    dados fiscais … antes de emitir novamente" — advice for a note that was never refused."""
    order = paid_order(ncm="")
    FiscalDocument.objects.all().delete()

    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()

    assert "Nenhuma nota fiscal solicitada para este pedido." in page
    assert 'data-testid="fiscal-reissue">Emitir NF-e<' in page
    assert "antes de emitir novamente" not in page

    # and a note whose provider sent no protocol does not read "10 / 1 — protocolo " with nothing after it
    FiscalDocument.objects.create(
        order_ref=order.public_id, status="authorized", number=10, series=1, access_key="35" + "1" * 42
    )
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "10 / 1</div>" in page and "protocolo" not in page


JUSTIFICATION = "CPF do destinatário informado errado"


def test_the_order_page_cancels_and_reissues_the_nfe_and_the_buyer_sees_the_new_danfe(
    admin_client,
    client,
    fiscal_store,  # noqa: F811
) -> None:
    """Within 24 h of the authorization: staff correct the buyer's CPF, type why, and "Cancelar e reemitir"; the
    provider calls run in the fiscal jobs; both notes are listed; the buyer's page links the new DANFE only."""
    from orders.services import order_buyer_tax_id_set

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    first = FiscalDocument.objects.get()
    change = f"/admin/orders/order/{order.pk}/change/"
    url = f"/admin/fiscal/{order.public_id}/cancel-reissue/"
    page = admin_client.get(change).content.decode()
    assert f'formaction="{url}" formmethod="post"' in page  # posts the order's form: no nested <form>
    assert page.count("<form") == page.count("</form>") == 1 + page.count('id="logout-form"')
    assert 'name="nfe_justificativa"' in page and "A SEFAZ aceita o cancelamento até" in page

    response = admin_client.post(url, {"nfe_justificativa": "CPF errado"}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "Justificativa do cancelamento: escreva de 15 a 255 caracteres (tem 10), por exemplo “CPF do destinatário "
        "informado errado”."
    ]
    assert not FiscalJob.objects.filter(action="cancel").exists()

    order_buyer_tax_id_set(order_id=order.public_id, tax_id="390.533.447-05", actor="admin")
    response = admin_client.post(url, {"nfe_justificativa": JUSTIFICATION}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        f"Cancelamento da NF-e nº {first.number} solicitado. A nova NF-e, com os dados atuais do pedido, é emitida "
        "assim que o cancelamento for confirmado; as duas ficam listadas aqui."
    ]
    page = response.content.decode()
    assert 'data-testid="fiscal-cancel-in-flight"' in page and 'name="nfe_justificativa"' not in page

    assert job_run(job_id=FiscalJob.objects.get(action="cancel").pk) == "cancelled"
    second = FiscalDocument.objects.exclude(pk=first.pk).get()
    assert job_run(job_id=FiscalJob.objects.get(document=second).pk) == "authorized"
    second.refresh_from_db()
    page = admin_client.get(change).content.decode()
    assert f'data-testid="fiscal-key">{second.access_key}<' in page
    assert (
        f'data-testid="fiscal-earlier">Nota anterior: NF-e nº {first.number} (Cancelada), chave {first.access_key} — '
        f'<a href="/fiscal/d/{first.download_token}/danfe">'
    ) in page
    # the cancellation event's XML beside the note's, for the accountant: the justification staff typed, 110111
    cancel_xml = f"/fiscal/d/{first.download_token}/cancelamento"
    assert f'<a href="{cancel_xml}" data-testid="fiscal-cancel-xml">XML do cancelamento</a>' in page
    download = admin_client.get(cancel_xml)
    assert download["Content-Disposition"] == f'attachment; filename="nfe-{first.access_key}-cancelamento.xml"'
    event = b"".join(download.streaming_content).decode()
    assert "<tpEvento>110111</tpEvento>" in event and f"<xJust>{JUSTIFICATION}</xJust>" in event
    buyer = client.get(order.permalink_url).content.decode()
    assert f'href="/fiscal/d/{second.download_token}/danfe" class="tap-link" data-testid="danfe-link"' in buyer
    assert first.download_token not in buyer


def test_after_24_hours_the_order_page_says_what_the_accountant_does_instead(admin_client, fiscal_store) -> None:  # noqa: F811
    from datetime import timedelta

    from django.utils import timezone

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    FiscalDocument.objects.update(issued_at=timezone.now() - timedelta(hours=25))
    document = FiscalDocument.objects.get()
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'name="nfe_justificativa"' not in page
    advice = (
        "Passadas 24 horas da autorização, a SEFAZ não cancela mais a NF-e, e a carta de correção não pode mudar o "
        "destinatário (nome, CPF/CNPJ, endereço), valores nem quantidades. Peça ao seu contador para emitir uma NF-e "
        f"de entrada (devolução) referenciando a chave {document.access_key} e, em seguida, uma nova NF-e com os "
        "dados corretos. Por aqui a loja emite a NF-e de devolução só dos itens que voltaram (uma devolução "
        "recebida)."
    )
    assert f'data-testid="fiscal-after-window">{advice}<' in page
    response = admin_client.post(
        f"/admin/fiscal/{order.public_id}/cancel-reissue/", {"nfe_justificativa": JUSTIFICATION}, follow=True
    )  # a page left open since yesterday
    assert [str(m) for m in response.context["messages"]] == [advice]
    assert not FiscalJob.objects.filter(action="cancel").exists()


def test_the_nfe_list_asks_why_then_cancels_and_reissues_the_selected_note(admin_client, fiscal_store) -> None:  # noqa: F811
    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    document = FiscalDocument.objects.get()
    chosen = {"action": "cancel_reissue_action", "_selected_action": [document.pk]}
    page = admin_client.post("/admin/fiscal/fiscaldocument/", chosen).content.decode()
    assert f'data-testid="cancel-reissue-note">Pedido #{order.number}: NF-e nº {document.number} (Autorizada)<' in page
    assert 'name="nfe_justificativa"' in page
    assert not FiscalJob.objects.filter(action="cancel").exists()  # asking why changes nothing

    response = admin_client.post("/admin/fiscal/fiscaldocument/", {**chosen, "nfe_justificativa": "curta"}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        f"#{order.number}: Justificativa do cancelamento: escreva de 15 a 255 caracteres (tem 5), por exemplo “CPF "
        "do destinatário informado errado”."
    ]
    response = admin_client.post(
        "/admin/fiscal/fiscaldocument/", {**chosen, "nfe_justificativa": JUSTIFICATION}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == [
        "Cancelamento solicitado para 1 NF-e; a nova nota, com os dados atuais do pedido, é emitida assim que o "
        "cancelamento for confirmado."
    ]
    assert job_run(job_id=FiscalJob.objects.get(action="cancel").pk) == "cancelled"
    assert job_run(job_id=FiscalJob.objects.get(key=f"{order.public_id}:issue:2").pk) == "authorized"
    page = admin_client.get("/admin/fiscal/fiscaldocument/").content.decode()
    assert page.count(f'<a href="/admin/orders/order/{order.pk}/change/">#{order.number}</a>') == 2  # both listed
    # the cancelled one selected again: nothing to cancel, said so
    response = admin_client.post(
        "/admin/fiscal/fiscaldocument/", {**chosen, "nfe_justificativa": JUSTIFICATION}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == [
        f"#{order.number}: NF-e nº {document.number} cancelada, não autorizada: nada a cancelar."
    ]
    assert FiscalJob.objects.filter(action="cancel").count() == 1


def test_a_cancel_the_sefaz_refuses_keeps_the_note_and_staff_read_why(admin_client, fiscal_store) -> None:  # noqa: F811
    from datetime import timedelta

    from django.db.models import F

    from fiscal.models import SandboxNote
    from orders.models import OrderEvent

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    # Our clock says just authorized, the SEFAZ's says more than 24 h: the sandbox refuses like it (rejection 501).
    SandboxNote.objects.update(issued_at=F("issued_at") - timedelta(hours=25))
    url = f"/admin/fiscal/{order.public_id}/cancel-reissue/"
    admin_client.post(url, {"nfe_justificativa": JUSTIFICATION})
    assert job_run(job_id=FiscalJob.objects.get(action="cancel").pk) == "cancel_refused"

    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'data-testid="fiscal-status">Autorizada<' in page
    reason = "Rejeição: Prazo de cancelamento superior ao previsto na Legislação"
    assert f'data-testid="fiscal-reason">501 — {reason}<' in page
    assert FiscalDocument.objects.count() == 1
    refused = OrderEvent.objects.get(order=order, kind="fiscal_cancel_refused")
    assert refused.message == (
        f"Cancelamento da NF-e recusado: {reason} A NF-e continua autorizada; nenhuma nova nota foi emitida."
    )
    admin_client.post(url, {"nfe_justificativa": JUSTIFICATION})  # staff may ask again: a new job, a new key
    keys = list(FiscalJob.objects.filter(action="cancel").values_list("key", flat=True))
    assert keys == [f"{order.public_id}:cancel:1", f"{order.public_id}:cancel:1-2"]


CORRECTION = "Onde se lê transportadora Rápida, leia-se transportadora Veloz Ltda."


def test_the_order_page_sends_a_correction_letter_and_the_buyer_gets_its_pdf(
    admin_client,
    client,
    fiscal_store,  # noqa: F811
) -> None:
    """After the 24 h of a cancel, what a letter may fix: staff type it on the order page, the fiscal job registers
    it (sandbox provider), the panel lists it with its PDF and XML, the next letter starts from its text (the SEFAZ
    keeps only the last one), the timeline says so, and the buyer's page links the letter in force."""
    from datetime import timedelta

    from django.utils import timezone

    from orders.models import OrderEvent

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    FiscalDocument.objects.update(issued_at=timezone.now() - timedelta(days=3))
    document = FiscalDocument.objects.get()
    change = f"/admin/orders/order/{order.pk}/change/"
    url = f"/admin/fiscal/{order.public_id}/correction/"
    page = admin_client.get(change).content.decode()
    assert f'formaction="{url}" formmethod="post"' in page  # posts the order's form: no nested <form>
    assert 'name="nfe_correcao"' in page and "A SEFAZ guarda só a última carta" in page

    response = admin_client.post(url, {"nfe_correcao": "volumes: 2"}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "Texto da carta de correção: escreva de 15 a 1000 caracteres (tem 10), por exemplo “Onde se lê Rua das "
        "Flores, 12, leia-se Rua das Flores, 120”."
    ]
    assert not FiscalJob.objects.filter(action="correct").exists()

    response = admin_client.post(url, {"nfe_correcao": CORRECTION}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "Carta de correção enviada à SEFAZ. A resposta aparece no quadro da NF-e e na linha do tempo do pedido em "
        "instantes."
    ]
    page = response.content.decode()
    assert f"Enviada à SEFAZ, aguardando a resposta: <q>{CORRECTION}</q>" in page
    assert 'name="nfe_correcao"' not in page  # one letter at a time

    assert job_run(job_id=FiscalJob.objects.get(action="correct").pk) == "corrected"
    page = admin_client.get(change).content.decode()
    pdf, xml = (f"/fiscal/d/{document.download_token}/cce-1-{kind}" for kind in ("pdf", "xml"))
    assert f'<a href="{pdf}">PDF</a> · <a href="{xml}">XML</a>: <q>{CORRECTION}</q>' in page
    assert f'data-testid="fiscal-correction-text">{CORRECTION}</textarea>' in page  # the next one starts from it
    event = b"".join(admin_client.get(xml).streaming_content).decode()
    assert "<tpEvento>110110</tpEvento>" in event and f"<xCorrecao>{CORRECTION}</xCorrecao>" in event
    download = client.get(pdf)
    assert download["Content-Type"] == "application/pdf"
    assert b"".join(download.streaming_content).startswith(b"%PDF")
    assert client.get(f"/fiscal/d/{document.download_token}/cce-2-pdf").status_code == 404  # no such letter
    assert list(
        OrderEvent.objects.filter(order=order, kind__startswith="fiscal_corr").values_list("kind", "actor")
    ) == [("fiscal_correction_requested", "admin"), ("fiscal_corrected", "")]
    buyer = client.get(order.permalink_url).content.decode()
    assert f'href="{pdf}" class="tap-link" data-testid="correction-link">Carta de correção da nota (PDF)</a>' in buyer
    # in English (the site's language switch) it is the invoice's letter, under the page's "Invoice"
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    buyer = client.get(order.permalink_url).content.decode()
    assert 'data-testid="correction-link">Invoice correction letter (PDF)</a>' in buyer
    nfe_page = admin_client.get(f"/admin/fiscal/fiscaldocument/{document.pk}/change/").content.decode()
    assert f'<a href="{xml}">XML da carta de correção nº 1</a>' in nfe_page


def _received_return(order, django_capture_on_commit_callbacks, quantity: int = 1):
    """The buyer returned `quantity` of the order's units: asked, approved and received through orders' services."""
    from orders.services import (
        order_mark_delivered,
        order_ship,
        return_request_approve,
        return_request_create,
        return_request_receive,
    )
    from orders.types import LineQuantity

    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    line = order.lines.get()
    request = return_request_create(
        order_id=order.public_id, lines=[LineQuantity(line.public_id, quantity)], reason_code="changed_mind"
    )
    return_request_approve(return_id=request.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        return_request_receive(return_id=request.public_id)
    return request


def test_the_order_page_issues_the_nfe_de_devolucao_of_a_received_return(
    admin_client,
    client,
    fiscal_store,  # noqa: F811
    django_capture_on_commit_callbacks,
    settings,
) -> None:
    """One of the two coffees came back to a shop that issues its notes by hand: the order page's NF-e box says the
    devolução note is due and offers "Emitir NF-e de devolução" for the received return, the fiscal job issues it
    (sandbox provider: an NF-e of entrada, finalidade 4, CFOP 1202, referencing the sale's chave), the box and the
    NF-e page list it with its DANFE and XML, and the timeline says so."""
    from fiscal.models import FiscalReturnNote
    from kernel.money import format_brl
    from orders.models import OrderEvent

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    sale = FiscalDocument.objects.get()
    settings.FISCAL_ISSUE_ON = "off"  # the merchant issues notes with the buttons (a shop issuing them: next test)
    request = _received_return(order, django_capture_on_commit_callbacks)
    change = f"/admin/orders/order/{order.pk}/change/"
    url = f"/admin/fiscal/{order.public_id}/return-note/"
    page = admin_client.get(change).content.decode()
    button = f'name="nfe_devolucao" value="{request.public_id}" formaction="{url}" formmethod="post"'
    assert button in page and "Devolução de 1 × Café Especial 500 g — <strong" in page
    assert 'data-testid="fiscal-return-note-missing">NF-e de devolução a emitir</strong>' in page
    assert (
        'data-testid="fiscal-return-note-due">1 devolução recebida ainda sem NF-e de devolução: emita-a para '
        "registrar a entrada dos itens.</p>"
    ) in page

    response = admin_client.post(url, {"nfe_devolucao": request.public_id}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "Emissão da NF-e de devolução solicitada. A resposta da SEFAZ aparece no quadro da NF-e e na linha do tempo "
        "do pedido em instantes."
    ]
    assert "Enviada à SEFAZ, aguardando a resposta" in response.content.decode()
    assert 'name="nfe_devolucao"' not in response.content.decode()  # asked: no second button
    admin_client.post(url, {"nfe_devolucao": request.public_id})  # a double submit asks nothing more
    job = FiscalJob.objects.get(action="return")
    invoice = job.payload["invoice"]
    assert (invoice["purpose"], invoice["operation"], invoice["referenced_keys"]) == (
        "return",
        "Devolução de venda",
        [sale.access_key],
    )
    assert [(item["cfop"], item["quantity"], item["unit_price"]) for item in invoice["items"]] == [("1202", 1, 4290)]

    assert job_run(job_id=job.pk) == "return_authorized"
    note = FiscalReturnNote.objects.get()
    assert (note.status, note.document_id, note.requested_by) == ("authorized", sale.pk, "admin")
    xml = note.xml.read().decode()
    assert "<tpNF>0</tpNF>" in xml and "<finNFe>4</finNFe>" in xml and f"<refNFe>{sale.access_key}</refNFe>" in xml
    assert "<natOp>Devolução de venda</natOp>" in xml and "<CFOP>1202</CFOP>" in xml
    page = admin_client.get(change).content.decode()
    danfe, xml_url = (f"/fiscal/d/{sale.download_token}/dev-{request.public_id}-{kind}" for kind in ("danfe", "xml"))
    assert (
        f"NF-e nº {note.number} série {note.series}, autorizada, chave {note.access_key} — "
        f'<a href="{danfe}">DANFE (PDF)</a> · <a href="{xml_url}">XML</a>'
    ) in page
    assert 'name="nfe_devolucao"' not in page
    download = admin_client.get(danfe)
    assert download["Content-Type"] == "application/pdf" and b"".join(download.streaming_content).startswith(b"%PDF")
    assert b"<finNFe>4</finNFe>" in b"".join(admin_client.get(xml_url).streaming_content)
    assert client.get(f"/fiscal/d/{sale.download_token}/dev-ret_outra-danfe").status_code == 404
    nfe_page = admin_client.get(f"/admin/fiscal/fiscaldocument/{sale.pk}/change/").content.decode()
    assert f'<a href="{xml_url}">XML da NF-e de devolução nº {note.number}</a>' in nfe_page
    assert f"nº {note.number} (Autorizada) chave {note.access_key}" in nfe_page
    listed = admin_client.get("/admin/fiscal/fiscalreturnnote/").content.decode()  # the accountant's list
    assert f"NF-e nº {note.number}" in listed and f"NF-e nº {sale.number} — pedido #{order.number}" in listed
    assert format_brl(note.total_amount) in listed and note.access_key in listed
    assert note.total_amount == 4290 + invoice["items"][0]["shipping_amount"]  # the unit and half the freight
    events = OrderEvent.objects.filter(order=order, kind__startswith="fiscal_return_note_")
    assert list(events.values_list("kind", "actor", "internal")) == [
        ("fiscal_return_note_requested", "admin", True),
        ("fiscal_return_note_authorized", "", True),
    ]
    assert sale.access_key in events.last().message
    timeline = admin_client.get(change).content.decode()
    assert "NF-e de devolução autorizada" in timeline


def test_a_return_note_is_refused_for_a_return_not_received_and_a_rejected_one_is_issued_again(
    admin_client,
    fiscal_store,  # noqa: F811
    django_capture_on_commit_callbacks,
) -> None:
    from fiscal.models import FiscalReturnNote
    from orders.services import order_mark_delivered, order_ship, return_request_create
    from orders.types import LineQuantity

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    asked = return_request_create(
        order_id=order.public_id, lines=[LineQuantity(order.lines.get().public_id, 1)], reason_code="defective"
    )
    url = f"/admin/fiscal/{order.public_id}/return-note/"
    response = admin_client.post(url, {"nfe_devolucao": asked.public_id}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "A NF-e de devolução registra a entrada dos itens: marque antes a devolução como recebida (“Itens recebidos”)."
    ]
    response = admin_client.post(url, {"nfe_devolucao": "ret_nenhuma"}, follow=True)
    assert [str(m) for m in response.context["messages"]] == ["Devolução não encontrada neste pedido."]
    assert not FiscalJob.objects.filter(action="return").exists()

    from orders.services import return_request_approve, return_request_receive

    return_request_approve(return_id=asked.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        return_request_receive(return_id=asked.public_id)
    admin_client.post(url, {"nfe_devolucao": asked.public_id})
    FiscalReturnNote.objects.update(status="rejected", sefaz_status="778", sefaz_reason="Rejeição: NCM inexistente")
    FiscalJob.objects.filter(action="return").update(status="done")
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Rejeitada pela SEFAZ (778 — Rejeição: NCM inexistente)" in page
    assert "Emitir novamente a NF-e de devolução" in page
    admin_client.post(url, {"nfe_devolucao": asked.public_id})
    assert list(FiscalJob.objects.filter(action="return").values_list("key", "status")) == [
        (f"{order.public_id}:return:{asked.public_id}-1", "done"),
        (f"{order.public_id}:return:{asked.public_id}-2", "pending"),
    ]
    assert job_run(job_id=FiscalJob.objects.get(action="return", status="pending").pk) == "return_authorized"
    assert FiscalReturnNote.objects.get().provider_ref == f"{asked.public_id}-2"


def test_a_received_return_gets_its_nfe_de_devolucao_without_a_click_and_the_buyer_downloads_it(
    admin_client,
    client,
    fiscal_store,  # noqa: F811
    django_capture_on_commit_callbacks,
) -> None:
    """Merchant gap (closing note, session 47): the NF-e de devolução waited for a staff button, while the shop
    issues the sale's note by itself; a forgotten click left the accountant's month without the entrada. Now the
    receipt of the return asks it (the note records only what staff confirmed came back, at the sale's values), and
    the buyer's order page shows it beside the sale's note with its DANFE and XML."""
    from fiscal.models import FiscalReturnNote
    from orders.models import OrderEvent

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    sale = FiscalDocument.objects.get()
    request = _received_return(order, django_capture_on_commit_callbacks)

    note = FiscalReturnNote.objects.get()
    assert (note.return_ref, note.document_id, note.quantities, note.requested_by) == (
        request.public_id, sale.pk, {"SKU-CAFE-500G": 1}, "",
    )  # fmt: skip
    job = FiscalJob.objects.get(action="return")
    if job.status != FiscalJob.Status.DONE:
        assert job_run(job_id=job.pk) == "return_authorized"
    note.refresh_from_db()
    assert note.status == "authorized"
    assert ("fiscal_return_note_requested", "") in OrderEvent.objects.filter(order=order).values_list("kind", "actor")
    # the order page lists it with its files, nothing due and no button
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert f"NF-e nº {note.number} série {note.series}, autorizada, chave {note.access_key}" in page
    assert 'data-testid="fiscal-return-note-due"' not in page and 'name="nfe_devolucao"' not in page
    # the buyer's page: the devolução note beside the sale's, with its DANFE and XML
    buyer = client.get(order.permalink_url).content.decode()
    danfe, xml = (f"/fiscal/d/{sale.download_token}/dev-{request.public_id}-{kind}" for kind in ("danfe", "xml"))
    key = " ".join(note.access_key[i : i + 4] for i in range(0, 44, 4))
    assert f"NF-e de devolução nº {note.number}, série {note.series}" in buyer
    assert f'data-testid="fiscal-return-access-key">{key}<' in buyer
    link = f'href="{danfe}" class="tap-link" data-testid="return-danfe-link">Baixar DANFE da devolução (PDF)</a>'
    assert link in buyer
    assert f'href="{xml}" class="tap-link" data-testid="return-xml-link">Baixar XML da devolução</a>' in buyer
    assert b"".join(client.get(danfe).streaming_content).startswith(b"%PDF")


def test_a_return_staff_recorded_gets_its_nfe_de_devolucao_too(
    admin_client,
    fiscal_store,  # noqa: F811
    django_capture_on_commit_callbacks,
    settings,
) -> None:
    """Merchant gap (closing note, session 47): a return staff recorded themselves ("Registrar devolução", no buyer
    request) had no NF-e de devolução at all, neither offered nor issued. Now it is issued on the record like a
    request's, kept under the return adjustment; in a shop issuing by hand, the box says it is due and issues it."""
    from fiscal.models import FiscalReturnNote
    from orders.models import Adjustment
    from orders.services import order_mark_delivered, order_ship

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    line = order.lines.get()
    form = {"reason": "Trocou de ideia na loja", "condition": "novo", f"qty_{line.public_id}": "1"}
    settings.FISCAL_ISSUE_ON = "off"
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(f"/admin/orders/order/{order.public_id}/action/return/", form)
    recorded = Adjustment.objects.get(order=order, type="return")
    assert not FiscalReturnNote.objects.exists()
    change = f"/admin/orders/order/{order.pk}/change/"
    page = admin_client.get(change).content.decode()
    assert "Devolução registrada pela loja: 1 × Café Especial 500 g — <strong" in page
    assert 'data-testid="fiscal-return-note-due"' in page
    assert f'name="nfe_devolucao" value="{recorded.public_id}"' in page
    admin_client.post(f"/admin/fiscal/{order.public_id}/return-note/", {"nfe_devolucao": recorded.public_id})
    note = FiscalReturnNote.objects.get()
    assert (note.return_ref, note.quantities, note.requested_by) == (recorded.public_id, {"SKU-CAFE-500G": 1}, "admin")

    # and a shop issuing its notes asks it on the record, with no click
    settings.FISCAL_ISSUE_ON = "paid"
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(f"/admin/orders/order/{order.public_id}/action/return/", form)
    second = Adjustment.objects.filter(order=order, type="return").exclude(pk=recorded.pk).get()
    assert FiscalReturnNote.objects.get(return_ref=second.public_id).quantities == {"SKU-CAFE-500G": 1}


def test_the_nfe_export_lists_the_month_s_nfe_de_devolucao_for_the_accountant(admin_client) -> None:
    """Merchant gap (closing note, session 47): the accountant's CSV of the NF-e had the sales only. An NF-e de
    devolução authorized in November is November's entrada, listed with the sale's chave it references, even when
    the sale was October's."""
    import csv
    import io
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from fiscal.models import FiscalReturnNote

    brt = ZoneInfo("America/Sao_Paulo")
    october = FiscalDocument.objects.create(
        order_ref="order_out", order_number=1001, status="authorized", number=10, series=1,
        access_key="3526" + "1" * 40, issued_at=datetime(2026, 10, 30, 10, 0, tzinfo=brt),
    )  # fmt: skip
    FiscalReturnNote.objects.create(
        document=october, return_ref="ret_nov", provider_ref="ret_nov-1", status="authorized", number=12, series=1,
        access_key="3526" + "3" * 40, protocol="135260000000009", issued_at=datetime(2026, 11, 5, 9, 0, tzinfo=brt),
    )  # fmt: skip
    FiscalReturnNote.objects.create(
        document=october, return_ref="ret_dez", provider_ref="ret_dez-1", status="authorized", number=13, series=1,
        access_key="3526" + "4" * 40, issued_at=datetime(2026, 12, 5, 9, 0, tzinfo=brt),
    )  # fmt: skip

    response = admin_client.get("/admin/fiscal/fiscaldocument/export.csv?issued_at__year=2026&issued_at__month=11")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig")), delimiter=";"))

    assert rows == [
        ["Pedido", "Número", "Série", "Chave de acesso", "Situação", "Ambiente", "Autorizada em", "Cancelada em",
         "Tentativa", "Protocolo", "Motivo SEFAZ", "Finalidade", "NF-e referenciada"],
        ["1001", "12", "1", "3526 " + " ".join(["3333"] * 10), "Autorizada", "Homologação", "05/11/2026 09:00", "",
         "1", "135260000000009", "", "Devolução (entrada)", "3526 " + " ".join(["1111"] * 10)],
    ]  # fmt: skip
    # without a period, the selected sales come with the devolução notes that reference them
    everything = admin_client.get("/admin/fiscal/fiscaldocument/export.csv")
    rows = list(csv.reader(io.StringIO(b"".join(everything.streaming_content).decode("utf-8-sig")), delimiter=";"))
    assert [(row[1], row[11]) for row in rows[1:]] == [("10", "Venda"), ("12", "Devolução (entrada)"),
                                                       ("13", "Devolução (entrada)")]  # fmt: skip


def test_a_return_just_recorded_reads_as_its_note_being_issued_while_the_order_task_waits(
    admin_client,
    fiscal_store,  # noqa: F811
    django_capture_on_commit_callbacks,
) -> None:
    """Browser walk (session 49): right after "Registrar devolução", with the worker still to run the order's change
    task (which asks the NF-e de devolução by itself), the box said in red "1 devolução recebida ainda sem NF-e de
    devolução: emita-a…" with the button. It says the note is being issued, with no button, until that task runs."""
    from fiscal.models import FiscalReturnNote
    from orders.models import Adjustment, OutboxMessage
    from orders.services import order_mark_delivered, order_ship
    from orders.services.dispatch import outbox_process

    order = paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    line = order.lines.get()
    form = {"reason": "Trocou de ideia na loja", "condition": "novo", f"qty_{line.public_id}": "1"}
    with django_capture_on_commit_callbacks(execute=False):  # committed; the worker has not taken its task yet
        admin_client.post(f"/admin/orders/order/{order.public_id}/action/return/", form)
    recorded = Adjustment.objects.get(order=order, type="return")
    change = f"/admin/orders/order/{order.pk}/change/"
    page = admin_client.get(change).content.decode()
    assert "Devolução registrada pela loja: 1 × Café Especial 500 g — <span" in page
    assert 'data-testid="fiscal-return-note-asking">NF-e de devolução em emissão</span>' in page
    assert 'data-testid="fiscal-return-note-due"' not in page and 'name="nfe_devolucao"' not in page

    # the worker runs the task: the note is asked, and the box follows it
    for message in OutboxMessage.objects.filter(status="pending"):
        with django_capture_on_commit_callbacks(execute=True):
            outbox_process(message_id=message.pk)
    note = FiscalReturnNote.objects.get()
    assert note.return_ref == recorded.public_id
    page = admin_client.get(change).content.decode()
    assert f"NF-e nº {note.number} série {note.series}, autorizada" in page  # the sandbox answered at once
    assert 'data-testid="fiscal-return-note-asking"' not in page
