"""Coupons, shipping methods and checkouts in the admin speak reais and Portuguese: amounts typed as
"10,00", constraint rules said on the field, checkout statuses and totals readable."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from shop.models import Checkout, Coupon, PickupLocation, ShippingMethod

pytestmark = pytest.mark.django_db

COUPON = {
    "code": "caju10",
    "title": "Dez reais",
    "kind": "fixed",
    "percent": "",
    "amount": "R$ 10,00",
    "min_subtotal": "50",
    "active": "on",
}


def _assert_refused(response, message: str, constraint: str) -> None:
    """The form comes back with the Portuguese sentence on the field, never the constraint's name."""
    assert response.status_code == 200
    html = response.content.decode()
    assert message in html
    assert constraint not in html and "violada" not in html


def test_coupon_amounts_typed_in_reais(admin_client: Client) -> None:
    assert admin_client.post("/admin/shop/coupon/add/", COUPON).status_code == 302
    coupon = Coupon.objects.get()
    assert (coupon.code, coupon.amount, coupon.min_subtotal) == ("CAJU10", 1000, 5000)
    html = admin_client.get("/admin/shop/coupon/").content.decode()
    assert "R$ 10,00" in html and "R$ 50,00" in html
    page = admin_client.get(f"/admin/shop/coupon/{coupon.pk}/change/").content.decode()
    assert 'name="amount" value="10,00"' in page


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"amount": "dez"}, "Valor inválido: use reais e centavos, por exemplo 35,90."),
        ({"amount": ""}, "Informe o valor do desconto, ex.: 10,00."),
        ({"percent": "10"}, "Cupom de valor fixo não tem percentual: deixe vazio."),
        ({"kind": "percent", "amount": "", "percent": "150"}, "Informe um percentual de 1 a 100."),
        ({"kind": "percent", "percent": "10"}, "Cupom percentual não tem valor em reais: deixe vazio."),
        ({"min_subtotal": "-5"}, "O valor não pode ser negativo."),
        # QA walk: "QA 5!" was accepted, a code no buyer types back the same way
        ({"code": "QA 5!"}, "Use só letras sem acento, números, hífen ou sublinhado, sem espaços (ex.: BEMVINDO10)."),
        ({"code": "NATAL É"}, "Use só letras sem acento, números, hífen ou sublinhado, sem espaços (ex.: BEMVINDO10)."),
    ],
)
def test_bad_coupon_is_refused_on_the_field(admin_client: Client, changes: dict[str, str], message: str) -> None:
    _assert_refused(admin_client.post("/admin/shop/coupon/add/", {**COUPON, **changes}), message, "coupon_kind_value")
    assert Coupon.objects.count() == 0


def test_coupon_code_taken_in_other_letters_and_reversed_dates_are_refused(admin_client: Client) -> None:
    """Walk-through: "maria10" beside an existing "MARIA10" was a 500 (IntegrityError), and a coupon could end
    before it starts."""
    assert admin_client.post("/admin/shop/coupon/add/", COUPON).status_code == 302
    response = admin_client.post("/admin/shop/coupon/add/", {**COUPON, "code": " Caju10 "})
    assert response.status_code == 200
    # QA F9: in the shop's words, on the code field (Django's default read "Cupom com este Código já existe.")
    assert re.search(
        r'<ul class="errorlist"[^>]*id="id_code_error"[^>]*><li>Já existe um cupom com este código.</li>',
        response.content.decode(),
    )
    dates = {"starts_at_0": "31/12/2026", "starts_at_1": "10:00", "ends_at_0": "01/12/2026", "ends_at_1": "10:00"}
    response = admin_client.post("/admin/shop/coupon/add/", {**COUPON, "code": "NATAL", **dates})
    assert response.status_code == 200
    assert "O fim da validade deve ser depois do início." in response.content.decode()
    assert list(Coupon.objects.values_list("code", flat=True)) == ["CAJU10"]


def test_a_coupon_ending_in_the_past_is_refused_and_an_old_one_still_saves(admin_client: Client) -> None:
    """Merchant walk h48: a coupon typed to end on 01/12 (the month before, a slip for 01/01) was saved, already
    expired, with no word. A new or changed end in the past is refused on the field; an expired coupon's other
    fields (switching it off) still save."""
    past = {"ends_at_0": "01/12/2025", "ends_at_1": "23:59"}
    response = admin_client.post("/admin/shop/coupon/add/", {**COUPON, **past})
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["ends_at"] == [
        "O fim da validade (01/12/2025 23:59) já passou: o cupom não valeria para ninguém. Escolha uma data futura."
    ]
    assert Coupon.objects.count() == 0
    assert (
        admin_client.post("/admin/shop/coupon/add/", {**COUPON, "ends_at_0": "01/12/2099", "ends_at_1": "23:59"})[
            "Location"
        ]
        == "/admin/shop/coupon/"
    )
    coupon = Coupon.objects.get()
    Coupon.objects.filter(pk=coupon.pk).update(ends_at=coupon.ends_at.replace(year=2025))  # it has expired since
    switched_off = {**COUPON, "ends_at_0": "01/12/2025", "ends_at_1": "23:59", "active": ""}
    assert admin_client.post(f"/admin/shop/coupon/{coupon.pk}/change/", switched_off).status_code == 302
    assert Coupon.objects.get().active is False


def test_coupon_list_writes_empty_cells_one_way_and_kinds_capitalised(admin_client: Client) -> None:
    """QA F9: the list mixed "-" (empty percent, end date) with "—" (empty R$ columns), and read "percentual"."""
    Coupon.objects.create(code="DEZ", title="Dez por cento", kind="percent", percent=10)
    Coupon.objects.create(code="CAJU", title="Dez reais", kind="fixed", amount=1000)
    html = admin_client.get("/admin/shop/coupon/").content.decode()
    cells = [c.strip() for c in re.findall(r"<td class=\"field-[a-z_]+\"[^>]*>(.*?)</td>", html, re.S)]
    assert "—" in cells and "-" not in cells
    assert '<td class="field-kind">Percentual</td>' in html and '<td class="field-kind">Valor fixo</td>' in html
    assert ">Percentual</a>" in html and ">Valor fixo</a>" in html  # the "tipo" filter
    # stored values are unchanged
    assert sorted(Coupon.objects.values_list("kind", flat=True)) == ["fixed", "percent"]


def test_coupon_code_with_hyphen_and_underscore_is_kept_in_capitals(admin_client: Client) -> None:
    assert admin_client.post("/admin/shop/coupon/add/", {**COUPON, "code": " natal_2026-b "}).status_code == 302
    assert list(Coupon.objects.values_list("code", flat=True)) == ["NATAL_2026-B"]


def test_shipping_method_prices_in_reais_and_days_checked(admin_client: Client) -> None:
    form = {
        "code": "motoboy",
        "title": "Motoboy",
        "kind": "shipping",
        "carrier": "",
        "flat_price": "15,90",
        "free_above": "",
        "days_min": "1",
        "days_max": "2",
        "position": "0",
        "active": "on",
        "rates-TOTAL_FORMS": "0",
        "rates-INITIAL_FORMS": "0",
        "rates-MIN_NUM_FORMS": "0",
        "rates-MAX_NUM_FORMS": "1000",
    }
    bad = admin_client.post("/admin/shop/shippingmethod/add/", {**form, "days_min": "5"})
    assert "O prazo máximo não pode ser menor que o mínimo." in bad.content.decode()
    assert ShippingMethod.objects.count() == 0
    response = admin_client.post("/admin/shop/shippingmethod/add/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert ShippingMethod.objects.get().flat_price == 1590


METHOD = {
    "code": "expressa",
    "title": "Entrega expressa",
    "kind": "shipping",
    "carrier": "",
    "flat_price": "15,00",
    "free_above": "",
    "days_min": "1",
    "days_max": "2",
    "position": "0",
    "active": "on",
    "rates-TOTAL_FORMS": "1",
    "rates-INITIAL_FORMS": "0",
    "rates-MIN_NUM_FORMS": "0",
    "rates-MAX_NUM_FORMS": "1000",
}


def _rate(**fields: str) -> dict[str, str]:
    base = {"uf": "", "cep_start": "", "cep_end": "", "price": "9,90", "days_min": "", "days_max": ""}
    return {f"rates-0-{name}": value for name, value in {**base, **fields}.items()}


@pytest.mark.parametrize(
    ("rate", "message"),
    [
        (
            {"uf": "SP", "cep_start": "01000-000", "cep_end": "05999-999"},
            "Informe a UF ou a faixa de CEP, não as duas.",
        ),
        ({"price": "12,00"}, "Informe a UF ou a faixa de CEP (inicial e final)."),
        ({"cep_start": "01000-000"}, "Informe o CEP inicial e o final da faixa."),
        ({"cep_start": "1000000", "cep_end": "05999-999"}, "CEP inválido: informe os 8 números, ex.: 01310-100."),
        ({"cep_start": "05999-999", "cep_end": "01000000"}, "O CEP final não pode ser menor que o inicial."),
        ({"uf": "XX"}, "UF inválida: use a sigla de 2 letras, ex.: SP."),
        ({"uf": "SP", "days_min": "5", "days_max": "2"}, "O prazo máximo não pode ser menor que o mínimo."),
    ],
)
def test_bad_shipping_rate_is_refused_on_its_field(admin_client: Client, rate: dict[str, str], message: str) -> None:
    """Walk-through: a rate with both a UF and a CEP range answered 'Restrição "shipping_rate_uf_xor_cep_range"
    foi violada.'"""
    response = admin_client.post("/admin/shop/shippingmethod/add/", {**METHOD, **_rate(**rate)})
    _assert_refused(response, message, "shipping_rate_uf_xor_cep_range")
    assert ShippingMethod.objects.count() == 0


def test_shipping_rate_by_uf_or_by_cep_range_is_saved(admin_client: Client) -> None:
    response = admin_client.post("/admin/shop/shippingmethod/add/", {**METHOD, **_rate(uf="sp")})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert list(ShippingMethod.objects.get().rates.values_list("uf", "price")) == [("SP", 990)]
    # a CEP range typed as people write it ("01000-000": a number field refused the dash and showed 1000000)
    by_range = {**METHOD, "code": "faixa", **_rate(cep_start="01000-000", cep_end="05999999")}
    assert admin_client.post("/admin/shop/shippingmethod/add/", by_range).status_code == 302
    method = ShippingMethod.objects.get(code="faixa")
    assert list(method.rates.values_list("cep_start", "cep_end")) == [(1000000, 5999999)]
    html = admin_client.get(f"/admin/shop/shippingmethod/{method.pk}/change/").content.decode()
    assert 'value="01000-000"' in html and 'value="05999-999"' in html


def test_shipping_code_and_flat_price_explained_to_a_new_merchant(admin_client: Client) -> None:
    """QA walk (new merchant, empty shop): the code "Motoboy BH" answered Django's 'Informe um “slug” válido…', and
    a motoboy with CEP ranges and a flat price was offered for São Paulo and Manaus (the flat price serves every CEP
    outside the table) with nothing on the page saying so."""
    page = admin_client.get("/admin/shop/shippingmethod/add/").content.decode()
    assert "ex.: motoboy-bh, correios-pac" in page
    assert "Vazio: o método só aparece para as UFs e faixas de CEP da tabela" in page

    refused = admin_client.post("/admin/shop/shippingmethod/add/", {**METHOD, "code": "Motoboy BH", **_rate(uf="MG")})
    html = refused.content.decode()
    assert "Código inválido: use só letras sem acento, números, hífen ou sublinhado, sem espaços" in html
    assert "“slug” válido" not in html
    assert ShippingMethod.objects.count() == 0

    table_and_flat = {**METHOD, "code": "motoboy-bh", **_rate(cep_start="30000-000", cep_end="31999-999")}
    saved = admin_client.post("/admin/shop/shippingmethod/add/", table_and_flat, follow=True)
    assert "tem preço fixo (R$ 15,00): ele vale para qualquer CEP do Brasil fora das tarifas" in saved.content.decode()
    only_table = {**table_and_flat, "code": "motoboy-2", "flat_price": ""}
    quiet = admin_client.post("/admin/shop/shippingmethod/add/", only_table, follow=True)
    assert "vale para qualquer CEP do Brasil" not in quiet.content.decode()


PICKUP = {
    "name": "Loja Centro",
    "street": "Praça da Sé",
    "number": "100",
    "complement": "",
    "neighborhood": "Sé",
    "city": "São Paulo",
    "opening_hours": "Seg a sex, 9h às 18h",
    "preparation_days": "1",
    "active": "on",
    "position": "0",
}


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"uf": "XX", "cep": "01002-000"}, "uf", "UF inválida: use a sigla de 2 letras, ex.: SP."),
        ({"uf": "SP", "cep": "0100200"}, "cep", "CEP inválido: informe os 8 números, ex.: 01310-100."),
        ({"uf": "RJ", "cep": "01002-000"}, "cep", "Este CEP é de SP, não de RJ."),
    ],
)
def test_bad_pickup_address_is_refused_on_its_field(
    admin_client: Client, fields: dict[str, str], field: str, message: str
) -> None:
    response = admin_client.post("/admin/shop/pickuplocation/add/", {**PICKUP, **fields})
    assert response.status_code == 200
    block = re.search(
        rf'<div class="form-row[^"]*field-{field}[^"]*">(.*?)</div>\s*</div>', response.content.decode(), re.S
    )
    assert block is not None and message in block.group(1)
    assert not PickupLocation.objects.exists()


def test_pickup_address_is_saved_as_buyers_read_it(admin_client: Client) -> None:
    # typed as a merchant might: UF in lower case, CEP without its dash
    response = admin_client.post("/admin/shop/pickuplocation/add/", {**PICKUP, "uf": "sp", "cep": "01002000"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert PickupLocation.objects.values_list("uf", "cep").get() == ("SP", "01002-000")
    html = admin_client.get(f"/admin/shop/pickuplocation/{PickupLocation.objects.get().pk}/change/").content.decode()
    assert "Public id" not in html and "Identificador" in html


def test_checkout_list_in_reais_and_portuguese(admin_client: Client) -> None:
    Checkout.objects.create(status="incomplete", total_amount=699900)
    html = admin_client.get("/admin/shop/checkout/").content.decode()
    assert "R$ 6.999,00" in html and "Incompleto" in html
    assert "699900" not in html
