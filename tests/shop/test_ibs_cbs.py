"""IBS/CBS of the tax reform on the shop's NF-e (issue 37, part 1; NT 2025.002-RTC): the store's regime and the
dates decide whether the note carries the groups, the product's classification (else the store's) fills them, the
amounts are exact centavos, the sandbox's XML and DANFE show them, and bad codes are refused in Portuguese."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from xml.etree import ElementTree as ET

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from fiscal.models import FiscalDocument, FiscalJob
from fiscal.providers.documents import danfe_lines
from fiscal.providers.focusnfe import focus_body
from fiscal.services import job_run
from orders.models import Adjustment, Order
from orders.net_value import item_discount, lines_net_value
from orders.services import order_cancel, order_ship
from orders.types import LineQuantity
from shop.checkout.services import checkout_complete, checkout_create
from shop.checkout.types import CompleteInput, LineInput, PaymentInput
from shop.invoicing.invoice import build_invoice
from shop.invoicing.selectors import fiscal_documents_bcp
from shop.models import StoreSettings
from tests.fiscal.fake_focus import ibs_cbs_rejection
from tests.shop.checkout_factories import BUYER, full_input, make_coupon, make_shipping, make_variant
from tests.shop.test_completion import CARD_OK
from tests.shop.test_fiscal_lifecycle import run_placed_outbox

pytestmark = pytest.mark.django_db
NS = {"n": "http://www.portalfiscal.inf.br/nfe"}
TODAY = timezone.localdate()


@pytest.fixture
def dates(settings):
    """Both start dates in the past unless a test moves them (the tests do not depend on today's date)."""
    settings.FISCAL_ISSUE_ON = "paid"
    settings.FISCAL_PROVIDER = "sandbox"
    settings.FISCAL_IBSCBS_NORMAL_FROM = TODAY - timedelta(days=30)
    settings.FISCAL_IBSCBS_SIMPLES_FROM = TODAY + timedelta(days=30)
    return settings


def _store(regime: str, **fields: object) -> StoreSettings:
    return StoreSettings.objects.create(
        cnpj="11.222.333/0001-81", state_registration="110042490114", state="SP", tax_regime=regime, **fields
    )


def _paid_order(*lines: LineInput, codes: tuple[str, ...] | None = None, installments: int = 1) -> Order:
    make_shipping()
    payment = PaymentInput(instruments=(replace(CARD_OK, installments=installments),))
    data = replace(
        full_input(*lines, option="pac", codes=codes), buyer=replace(BUYER, tax_id="52998224725"), payment=payment
    )
    checkout = checkout_create(data=data).checkout
    result = checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=payment))
    assert result.checkout.status == "completed", result.messages
    return Order.objects.get(checkout_id=checkout.public_id)


def test_normal_regime_items_carry_the_group_with_exact_centavos(dates) -> None:
    _store("normal")
    make_variant(price=4290, ncm="09012100")  # 2 × R$ 42,90 = R$ 85,80
    order = _paid_order(LineInput("SKU-CAFE-500G", 2))
    invoice, problems = build_invoice(order)
    assert problems == []
    # vBC (UB16) = vProd 85,80 + the item's freight (PAC, R$ 18,90) = R$ 104,70;
    # vIBSUF = 104,70 × 0,10 % = 0,1047 → R$ 0,10; vCBS = 104,70 × 0,90 % = 0,9423 → R$ 0,94; vIBSMun = 0.
    assert invoice["items"][0]["shipping_amount"] == 1890
    assert invoice["items"][0]["ibs_cbs"] == {
        "cst": "000", "class_code": "000001", "base": 10470,
        "ibs_uf_rate": "0.1000", "ibs_uf_amount": 10, "ibs_mun_rate": "0.0000", "ibs_mun_amount": 0,
        "ibs_amount": 10, "cbs_rate": "0.9000", "cbs_amount": 94,
    }  # fmt: skip
    assert invoice["ibs_cbs_totals"] == {
        "base": 10470, "ibs_uf_amount": 10, "ibs_mun_amount": 0, "ibs_amount": 10, "cbs_amount": 94
    }  # fmt: skip


def test_normal_regime_before_its_start_date_has_no_group(dates) -> None:
    dates.FISCAL_IBSCBS_NORMAL_FROM = TODAY + timedelta(days=1)  # e.g. a note of 4 January 2026
    _store("normal")
    make_variant(price=4290, ncm="09012100")
    invoice, problems = build_invoice(_paid_order(LineInput("SKU-CAFE-500G", 1)))
    assert problems == []
    assert "ibs_cbs" not in invoice["items"][0] and "ibs_cbs_totals" not in invoice


@pytest.mark.parametrize("regime", ["simples", "mei"])
def test_simples_and_mei_wait_for_their_date_then_carry_the_group(dates, regime: str) -> None:
    _store(regime)
    make_variant(price=1000, ncm="09012100")
    order = _paid_order(LineInput("SKU-CAFE-500G", 3))
    assert "ibs_cbs_totals" not in build_invoice(order)[0]  # 2026: not yet
    dates.FISCAL_IBSCBS_SIMPLES_FROM = TODAY  # the 2027 switch: a setting, not a code change
    invoice = build_invoice(order)[0]
    # R$ 30,00 + frete R$ 18,90 = R$ 48,90: IBS UF 0,0489 → 0,05; CBS 0,4401 → 0,44.
    assert invoice["ibs_cbs_totals"] == {
        "base": 4890, "ibs_uf_amount": 5, "ibs_mun_amount": 0, "ibs_amount": 5, "cbs_amount": 44
    }  # fmt: skip


def test_product_classification_overrides_the_store_and_410_has_no_amounts(dates) -> None:
    _store("normal")
    make_variant("SKU-A", price=10000, ncm="09012100")
    make_variant("SKU-B", price=5000, ncm="49019900", ibs_cbs_cst="410", ibs_cbs_class="410001")
    invoice, problems = build_invoice(_paid_order(LineInput("SKU-A", 1), LineInput("SKU-B", 1)))
    assert problems == []
    by_sku = {item["sku"]: item["ibs_cbs"] for item in invoice["items"]}
    assert by_sku["SKU-B"] == {"cst": "410", "class_code": "410001"}
    # the freight (R$ 18,90) goes 2:1 by the items' totals: A R$ 12,60, B R$ 6,30; A's base is R$ 112,60
    assert [item["shipping_amount"] for item in invoice["items"]] == [1260, 630]
    assert by_sku["SKU-A"]["cbs_amount"] == 101 and by_sku["SKU-A"]["ibs_uf_amount"] == 11
    assert invoice["ibs_cbs_totals"] == {
        "base": 11260, "ibs_uf_amount": 11, "ibs_mun_amount": 0, "ibs_amount": 11, "cbs_amount": 101
    }  # fmt: skip


def _three_items_with_a_coupon() -> Order:
    """Three items of R$ 33,33 / 33,33 / 33,34, PAC freight R$ 18,90 and a 10 % coupon (R$ 10,00), paid."""
    _store("normal")
    for sku, price in (("SKU-A", 3333), ("SKU-B", 3333), ("SKU-C", 3334)):
        make_variant(sku, price=price, ncm="09012100")
    make_coupon("DEZ")
    return _paid_order(LineInput("SKU-A", 1), LineInput("SKU-B", 1), LineInput("SKU-C", 1), codes=("DEZ",))


def test_freight_and_discount_are_apportioned_to_the_items_and_their_bases(dates) -> None:
    # given three items, freight and a coupon
    order = _three_items_with_a_coupon()
    # when the invoice is built
    invoice, problems = build_invoice(order)
    assert problems == []
    # then each item's vFrete and vDesc add up exactly to the note's (largest remainders get the odd centavos)
    assert (invoice["shipping_amount"], invoice["discount_amount"]) == (1890, 1000)
    assert [(i["shipping_amount"], i["discount_amount"]) for i in invoice["items"]] == [
        (630, 333), (630, 333), (630, 334)
    ]  # fmt: skip
    # and each item's IBS/CBS base is its operation's value: vProd + vFrete − vDesc (UB16)
    assert [i["ibs_cbs"]["base"] for i in invoice["items"]] == [3630, 3630, 3630]
    assert invoice["ibs_cbs_totals"]["base"] == 10000 + 1890 - 1000


def test_a_returned_line_refunds_the_net_value_its_invoice_item_shows(dates) -> None:
    # given the coupon order above, invoiced: each item's vProd − vDesc is what the buyer paid for it
    order = _three_items_with_a_coupon()
    invoice, _problems = build_invoice(order)
    # then the returns' default refund of each line (orders.services.lines_net_value) is that same value
    lines = [(line.public_id, line.unit_price, line.quantity_original) for line in order.lines.all()]
    refunds = [lines_net_value(lines, item_discount(order.totals), {line_id: 1}) for line_id, _, _ in lines]
    assert refunds == [item["total"] - item["discount_amount"] for item in invoice["items"]] == [3000, 3000, 3000]


def test_units_cancelled_before_the_note_take_their_share_of_the_discount_with_them(dates) -> None:
    # given the coupon order above, of which SKU-A shipped and the rest was cancelled before any NF-e
    order = _three_items_with_a_coupon()
    first = order.lines.get(sku="SKU-A")
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(first.public_id, 1)])
    order_cancel(order_id=order.public_id, reason="Sem estoque")
    order.refresh_from_db()
    # when the note is built
    invoice, problems = build_invoice(order)
    assert problems == []
    # then it bills SKU-A at what was paid for it: its own R$ 3,33 of the coupon, not the whole R$ 10,00
    assert [(i["sku"], i["total"], i["discount_amount"]) for i in invoice["items"]] == [("SKU-A", 3333, 333)]
    assert invoice["discount_amount"] == 333
    # and vNF is what the buyer kept paying: paid less the cancellation's refund (R$ 33,33 − 3,33 + frete 18,90)
    refunded = -sum(Adjustment.objects.filter(order=order, type="refund").values_list("amount", flat=True))
    assert invoice["total_amount"] == order.paid_amount - refunded == 3333 - 333 + 1890
    # which the SEFAZ's sums accept (610: vNF = vProd + vFrete + vOutro − vDesc; 537: the items' vDesc)
    assert ibs_cbs_rejection(focus_body(invoice)) is None


def test_installment_interest_is_the_notes_other_charges_and_part_of_the_items_base(dates) -> None:
    # given a card in 6 installments with interest (3 free, 1,99 % a month after)
    _store("normal", card_interest_free_installments=3, card_monthly_interest_bp=199)
    make_variant("SKU-A", price=10000, ncm="09012100")
    make_variant("SKU-B", price=5000, ncm="09012100")
    order = _paid_order(LineInput("SKU-A", 1), LineInput("SKU-B", 1), installments=6)
    interest = next(entry["amount"] for entry in order.totals if entry["type"] == "fee")
    # when the note is built
    invoice, problems = build_invoice(order)
    assert problems == []
    # then the interest is vOutro, split 2:1 by the items' totals, inside each item's IBS/CBS base (UB16)
    assert invoice["other_amount"] == interest > 0
    assert sum(item["other_amount"] for item in invoice["items"]) == interest
    assert [i["ibs_cbs"]["base"] for i in invoice["items"]] == [
        i["total"] + i["shipping_amount"] + i["other_amount"] for i in invoice["items"]
    ]
    # and vNF is the order's total, which the SEFAZ's sums accept
    assert invoice["total_amount"] == order.total_amount
    assert ibs_cbs_rejection(focus_body(invoice)) is None


def test_a_class_of_another_cst_blocks_the_issue_naming_the_product(dates) -> None:
    _store("normal", ibs_cbs_cst="410", ibs_cbs_class="410001")
    make_variant(price=1000, ncm="09012100", title="Café", ibs_cbs_class="000001")  # CST from the store: 410
    _invoice, problems = build_invoice(_paid_order(LineInput("SKU-CAFE-500G", 1)))
    assert problems == [
        "produto “Café” (SKU SKU-CAFE-500G): a classificação tributária 000001 não pertence ao CST 410 "
        "(os 3 primeiros dígitos são o CST)"
    ]


def test_sandbox_xml_and_danfe_show_the_groups(dates) -> None:
    _store("normal")
    make_variant(price=4290, ncm="09012100")
    order = _paid_order(LineInput("SKU-CAFE-500G", 2))
    run_placed_outbox(order)
    assert job_run(job_id=FiscalJob.objects.get().pk) == "authorized"
    document = FiscalDocument.objects.get()
    root = ET.fromstring(document.xml.read())  # noqa: S314 (our own sandbox's XML)
    group = root.find(".//n:det/n:imposto/n:IBSCBS", NS)
    assert group is not None
    values = {el.tag.split("}")[1]: el.text for el in group.iter() if len(el) == 0}
    assert values == {
        "CST": "000", "cClassTrib": "000001", "vBC": "104.70", "pIBSUF": "0.1000", "vIBSUF": "0.10",
        "pIBSMun": "0.0000", "vIBSMun": "0.00", "vIBS": "0.10", "pCBS": "0.9000", "vCBS": "0.94",
    }  # fmt: skip
    assert root.findtext(".//n:det/n:prod/n:vFrete", namespaces=NS) == "18.90"
    totals = root.find(".//n:total/n:IBSCBSTot", NS)
    assert totals is not None
    assert totals.findtext("n:vBCIBSCBS", namespaces=NS) == "104.70"
    assert totals.findtext("n:gIBS/n:gIBSUF/n:vIBSUF", namespaces=NS) == "0.10"
    assert totals.findtext("n:gIBS/n:vIBS", namespaces=NS) == "0.10"
    assert totals.findtext("n:gCBS/n:vCBS", namespaces=NS) == "0.94"
    lines = danfe_lines(
        invoice=FiscalJob.objects.get().payload, access_key=document.access_key, number=1, series=1,
        protocol="1", at=timezone.now(),
    )  # fmt: skip
    assert lines[-4:] == [
        "IBS/CBS (Reforma Tributária):",
        "Base de cálculo do IBS/CBS: R$ 104,70",
        "IBS UF: R$ 0,10  IBS Município: R$ 0,00  IBS total: R$ 0,10",
        "CBS: R$ 0,94",
    ]
    # What agents see in the fiscal document extension.
    assert fiscal_documents_bcp(order.public_id)[0]["ibs_cbs"] == {
        "base": 10470, "ibs_state": 10, "ibs_municipal": 0, "ibs": 10, "cbs": 94
    }  # fmt: skip


def test_a_simples_note_in_2026_has_neither_group_nor_totals(dates) -> None:
    _store("simples")
    make_variant(price=4290, ncm="09012100")
    order = _paid_order(LineInput("SKU-CAFE-500G", 1))
    run_placed_outbox(order)
    assert job_run(job_id=FiscalJob.objects.get().pk) == "authorized"
    xml = FiscalDocument.objects.get().xml.read()
    assert b"IBSCBS" not in xml
    assert "ibs_cbs" not in fiscal_documents_bcp(order.public_id)[0]


def _errors(instance) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        instance.full_clean()
    return caught.value.message_dict


def test_admin_validation_of_the_classification_in_portuguese() -> None:
    product = make_variant(ncm="09012100").product
    product.ibs_cbs_cst, product.ibs_cbs_class = "200", "20001"
    assert _errors(product) == {
        "ibs_cbs_cst": [
            "CST do IBS/CBS 200 ainda não é calculado pela loja: use 000 (tributação integral) ou 410 "
            "(imunidade e não incidência)."
        ],
        "ibs_cbs_class": [
            "Classificação tributária (cClassTrib) inválida: informe os 6 dígitos da tabela (ex.: 000001)."
        ],
    }
    product.ibs_cbs_cst, product.ibs_cbs_class = "000", "410001"
    assert _errors(product) == {
        "ibs_cbs_class": [
            "A classificação tributária 410001 não pertence ao CST 000 (os 3 primeiros dígitos são o CST)."
        ]
    }
    store = StoreSettings(ibs_cbs_cst="410", ibs_cbs_class="000001")
    assert _errors(store)["ibs_cbs_class"] == [
        "A classificação tributária 000001 não pertence ao CST 410 (os 3 primeiros dígitos são o CST)."
    ]


def test_defaults_are_the_full_taxation_pair_and_the_legal_dates_and_rates(settings) -> None:
    store = StoreSettings()
    assert (store.ibs_cbs_cst, store.ibs_cbs_class) == ("000", "000001")
    legal_dates = (settings.FISCAL_IBSCBS_NORMAL_FROM, settings.FISCAL_IBSCBS_SIMPLES_FROM)
    assert legal_dates == (date(2026, 1, 5), date(2027, 1, 1))
    assert (settings.FISCAL_CBS_RATE, settings.FISCAL_IBS_UF_RATE, settings.FISCAL_IBS_MUN_RATE) == (9000, 1000, 0)
