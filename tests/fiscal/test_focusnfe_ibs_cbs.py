"""IBS/CBS through the Focus NFe boundary (issue 37, part 1): the item and total fields in Focus's names
(NT 2025.002 groups IBSCBS/gIBSCBS and IBSCBSTot), checked by the fake Focus NFe as the SEFAZ checks them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest

from fiscal import ibscbs
from fiscal.models import FiscalDocument, FiscalJob
from fiscal.providers.focusnfe import FocusNFeProvider, focus_body
from fiscal.services import job_run
from kernel.money import apportion
from tests.fiscal.fake_focus import TOKEN, FakeFocusState, fake_focus, ibs_cbs_rejection
from tests.fiscal.helpers import invoice, request_issue

pytestmark = pytest.mark.django_db
RATES_2026 = ibscbs.Rates(cbs=9000, ibs_uf=1000, ibs_mun=0)


@pytest.fixture
def focus(settings) -> Iterator[tuple[FocusNFeProvider, FakeFocusState]]:
    with fake_focus() as (url, state):
        settings.FISCAL_PROVIDER = "focusnfe"
        settings.FISCAL_FOCUSNFE_BASE_URL = url
        settings.FISCAL_FOCUSNFE_TOKEN = TOKEN
        settings.FISCAL_WEBHOOK_SECRET = "s"
        yield FocusNFeProvider.from_settings(), state


def _normal_invoice(*, with_group: bool = True) -> dict[str, Any]:
    body = invoice()
    body["issuer"] = {**body["issuer"], "tax_regime": "normal"}
    item = {**body["items"][0], "icms_cst": "00"}  # 2 × R$ 49,90 = R$ 99,80
    if with_group:
        item["ibs_cbs"] = ibscbs.item_group(cst="000", class_code="000001", base=9980, rates=RATES_2026)
        body["ibs_cbs_totals"] = ibscbs.totals([item["ibs_cbs"]])
    body["items"] = [item]
    return body


def _issue(provider: FocusNFeProvider, body: dict[str, Any]) -> FiscalDocument:
    request_issue()
    FiscalJob.objects.update(payload=body)
    job = FiscalJob.objects.get()
    assert job_run(job_id=job.pk, provider=provider) == "processing"
    job_run(job_id=job.pk, provider=provider)
    return FiscalDocument.objects.get()


def test_normal_regime_sends_the_item_and_total_fields_and_is_authorized(focus) -> None:
    provider, state = focus
    document = _issue(provider, _normal_invoice())
    assert document.status == "authorized"
    sent = state.bodies["order_test-1"]
    item = {key: value for key, value in sent["items"][0].items() if key.startswith(("ibs", "cbs"))}
    # vIBSUF = 99,80 × 0,1 % = 0,0998 → 0,10; vCBS = 99,80 × 0,9 % = 0,8982 → 0,90.
    assert item == {
        "ibs_cbs_situacao_tributaria": "000", "ibs_cbs_classificacao_tributaria": "000001",
        "ibs_cbs_base_calculo": "99.80", "ibs_uf_aliquota": "0.1000", "ibs_uf_valor": "0.10",
        "ibs_mun_aliquota": "0.0000", "ibs_mun_valor": "0.00", "ibs_valor_total": "0.10",
        "cbs_aliquota": "0.9000", "cbs_valor": "0.90",
    }  # fmt: skip
    totals = {key: value for key, value in sent.items() if key.startswith(("ibs", "cbs"))}
    assert totals == {
        "ibs_cbs_base_calculo": "99.80",
        "ibs_uf_valor_total_diferimento": "0.00", "ibs_uf_valor_total_devolucao": "0.00", "ibs_uf_valor_total": "0.10",
        "ibs_mun_valor_total_diferimento": "0.00", "ibs_mun_valor_total_devolucao": "0.00",
        "ibs_mun_valor_total": "0.00", "ibs_valor_total": "0.10", "ibs_valor_total_credito_presumido": "0.00",
        "ibs_valor_total_condicao_suspensiva": "0.00", "cbs_valor_total_diferimento": "0.00",
        "cbs_valor_total_devolucao": "0.00", "cbs_valor_total": "0.90", "cbs_valor_total_credito_presumido": "0.00",
        "cbs_valor_total_condicao_suspensiva": "0.00",
    }  # fmt: skip
    assert sent["regime_tributario_emitente"] == "3"


def test_a_normal_regime_note_without_the_group_is_rejected_1115(focus) -> None:
    provider, _state = focus
    document = _issue(provider, _normal_invoice(with_group=False))
    assert (document.status, document.sefaz_status) == ("rejected", "1115")


def test_a_simples_note_of_2026_sends_no_ibs_cbs_field_and_is_authorized(focus) -> None:
    provider, state = focus
    document = _issue(provider, invoice())
    assert document.status == "authorized"
    sent = state.bodies["order_test-1"]
    assert [key for key in sent if key.startswith(("ibs", "cbs"))] == []
    assert [key for key in sent["items"][0] if key.startswith(("ibs", "cbs"))] == []


def test_the_fake_rejects_what_the_sefaz_rejects() -> None:
    good = focus_body(_normal_invoice())
    assert ibs_cbs_rejection(good) is None
    assert ibs_cbs_rejection({**good, "cbs_valor_total": "0.91"})[0] == "1091"
    assert ibs_cbs_rejection({**good, "ibs_cbs_base_calculo": "99.81"})[0] == "1076"
    wrong_item = {**good["items"][0], "cbs_valor": "0.89"}
    assert ibs_cbs_rejection({**good, "items": [wrong_item]})[0] == "1069"
    no_totals = {key: value for key, value in good.items() if not key.startswith(("ibs", "cbs"))}
    assert ibs_cbs_rejection(no_totals)[0] == "1119"
    # an item's freight share that does not add up to the note's (535), a base that is not vProd + vFrete − vDesc
    with_freight = _normal_invoice()
    with_freight["items"][0] = {**with_freight["items"][0], "shipping_amount": 1890}
    with_freight["shipping_amount"], with_freight["total_amount"] = 1890, 9980 + 1890
    freighted = focus_body(with_freight)
    assert freighted["items"][0]["valor_frete"] == "18.90"
    assert ibs_cbs_rejection(freighted)[0] == "1071"  # the group's base still says 99,80
    with_freight["items"][0]["ibs_cbs"] = ibscbs.item_group(
        cst="000", class_code="000001", base=9980 + 1890, rates=RATES_2026
    )
    with_freight["ibs_cbs_totals"] = ibscbs.totals([with_freight["items"][0]["ibs_cbs"]])
    assert ibs_cbs_rejection(focus_body(with_freight)) is None
    assert ibs_cbs_rejection({**focus_body(with_freight), "valor_frete": "18.00"})[0] == "535"
    # a note total that is not vProd + vFrete + vOutro − vDesc (610): the order's total after units left the order
    assert ibs_cbs_rejection({**focus_body(with_freight), "valor_total": "128.70"})[0] == "610"
    # installment interest as vOutro: in the note's total and in the item's operation value (UB16)
    with_interest = {**with_freight, "other_amount": 500, "total_amount": 9980 + 1890 + 500}
    with_interest["items"] = [{**with_freight["items"][0], "other_amount": 500}]
    assert ibs_cbs_rejection(focus_body(with_interest))[0] == "1071"  # the base still leaves the interest out
    with_interest["items"][0]["ibs_cbs"] = ibscbs.item_group(
        cst="000", class_code="000001", base=9980 + 1890 + 500, rates=RATES_2026
    )
    with_interest["ibs_cbs_totals"] = ibscbs.totals([with_interest["items"][0]["ibs_cbs"]])
    assert ibs_cbs_rejection(focus_body(with_interest)) is None
    assert ibs_cbs_rejection({**focus_body(with_interest), "valor_outras_despesas": "4.00"})[0] == "1072"
    before = focus_body({**_normal_invoice(with_group=False), "issued_at": "2026-01-04T10:00:00-03:00"})
    assert ibs_cbs_rejection(before) is None  # 4 January 2026: the group was not required yet


@pytest.mark.parametrize(
    ("regime", "day", "expected"),
    [
        ("normal", date(2026, 1, 4), False),
        ("normal", date(2026, 1, 5), True),
        ("simples", date(2026, 12, 31), False),
        ("simples", date(2027, 1, 1), True),
        ("mei", date(2027, 1, 1), True),
        ("simples_excesso", date(2026, 6, 1), False),
    ],
)
def test_who_carries_the_group_on_which_day(regime: str, day: date, expected: bool) -> None:
    assert (
        ibscbs.applies(tax_regime=regime, on=day, normal_from=date(2026, 1, 5), simples_from=date(2027, 1, 1))
        is expected
    )


def test_rates_and_rounding() -> None:
    assert ibscbs.parse_rate("0,9") == 9000 and ibscbs.rate_text(9000) == "0.9000"
    assert ibscbs.amount(50, 9000) == 0  # 0,45 centavo → 0
    assert ibscbs.amount(56, 9000) == 1  # 0,504 centavo → 1
    assert ibscbs.amount(500, 1000) == 1  # R$ 5,00 × 0,1 % = 0,5 centavo exactly: half up → 1
    for bad in ("abc", "-1", "100", "0.00001"):
        with pytest.raises(ValueError, match="alíquota inválida"):
            ibscbs.parse_rate(bad)


@pytest.mark.parametrize(
    ("total", "weights", "shares"),
    [
        (1890, [3333, 3333, 3334], [630, 630, 630]),
        (1000, [3333, 3333, 3334], [333, 333, 334]),
        (1, [100, 100], [1, 0]),  # a tie goes to the first item
        (0, [100, 200], [0, 0]),
        (500, [0, 0], [500, 0]),  # items without value: the first one carries it
        (1890, [10000, 5000], [1260, 630]),
    ],
)
def test_apportion_splits_exactly_by_the_items_totals(total: int, weights: list[int], shares: list[int]) -> None:
    assert apportion(total, weights) == shares
    assert sum(shares) == total
