"""Issue 33, bulk catalog: the products, variants, prices, stock and photo URLs export as CSV (Excel in pt-BR:
BOM, `;`, decimal comma) and XLSX (money as R$), and import back from either with a preview; a file with errors
lists each one as "Linha N · Coluna: …" in Portuguese and changes nothing; confirming writes it all at once."""

from __future__ import annotations

import io
import re

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from openpyxl import Workbook, load_workbook

from shop.catalog.services import catalog_import_apply
from shop.catalog.spreadsheet import COLUMNS, import_plan, read_rows
from shop.demo.seed import seed_catalog
from shop.models import Product, ProductImage, Variant

pytestmark = pytest.mark.django_db

HEADER = ";".join(header for _key, header in COLUMNS)


@pytest.fixture
def demo() -> None:
    seed_catalog()


def _upload(admin_client: Client, name: str, data: bytes) -> str:
    response = admin_client.post("/admin/shop/product/importar/", {"file": SimpleUploadedFile(name, data)})
    assert response.status_code == 200
    return response.content.decode()


def _csv(*rows: str) -> bytes:
    return ("\ufeff" + "\r\n".join([HEADER, *rows]) + "\r\n").encode()


def _row(**cells: str) -> str:
    return ";".join(cells.get(key, "") for key, _header in COLUMNS)


def test_the_csv_export_opens_in_excel_with_one_row_per_variant(admin_client: Client, demo: None) -> None:
    response = admin_client.get("/admin/shop/product/exportar.csv", {"q": "camiseta básica preta"})
    text = b"".join(response.streaming_content).decode("utf-8")
    assert response["Content-Disposition"].startswith('attachment; filename="produtos-')
    lines = text.splitlines()
    assert lines[0] == "\ufeff" + HEADER
    row = next(line for line in lines if ";CAM-BAS-PRETA-M;" in line).split(";")
    cells = dict(zip([key for key, _h in COLUMNS], row, strict=True))
    assert {k: cells[k] for k in ("product", "category", "sku", "options", "price", "stock", "ncm")} == {
        "product": "camiseta-basica-preta",
        "category": "Camisetas",
        "sku": "CAM-BAS-PRETA-M",
        "options": "tamanho=M",
        "price": "59,90",
        "stock": "40",
        "ncm": "61091000",
    }
    assert cells["photos"].startswith("http") and cells["photos"].endswith("/media/demo/camiseta-basica-preta.jpg")
    assert len([line for line in lines if line.startswith("camiseta-basica-preta;")]) == 3


def test_the_xlsx_export_has_money_as_reais_and_skus_as_text(admin_client: Client, demo: None) -> None:
    response = admin_client.get("/admin/shop/product/exportar.xlsx")
    sheet = load_workbook(io.BytesIO(response.content)).worksheets[0]
    rows = list(sheet.iter_rows())
    headers = [cell.value for cell in rows[0]]
    row = next(r for r in rows if r[headers.index("SKU")].value == "SKU-CAFE-500G")
    price = row[headers.index("Preço")]
    assert (float(price.value), price.number_format) == (42.90, '"R$" #,##0.00')


def test_an_exported_file_edited_and_imported_back_updates_prices_and_stock(admin_client: Client, demo: None) -> None:
    # given the export, with one price and one stock changed as a merchant would in Excel
    text = b"".join(admin_client.get("/admin/shop/product/exportar.csv").streaming_content).decode("utf-8-sig")
    text = text.replace(";CAM-BAS-PRETA-M;M;tamanho=M;59,90;;40;", ";CAM-BAS-PRETA-M;M;tamanho=M;64,90;;12;")
    assert ";64,90;;12;" in text
    # when it is uploaded, the preview says what changes and nothing is written yet
    html = _upload(admin_client, "produtos.csv", text.encode("utf-8-sig"))
    assert "A importação vai criar 0 produto e 0 variante e atualizar 0 produto e 1 variante." in html
    assert "Preço: R$ 64,90; Estoque: 12" in html
    assert Variant.objects.get(sku="CAM-BAS-PRETA-M").price == 5990
    # when the merchant confirms
    token = re.search(r'name="token" value="([^"]+)"', html)
    assert token is not None
    response = admin_client.post("/admin/shop/product/importar/", {"token": token.group(1)})
    assert response.status_code == 302
    variant = Variant.objects.get(sku="CAM-BAS-PRETA-M")
    assert (variant.price, variant.stock) == (6490, 12)
    assert Variant.objects.get(sku="CAM-BAS-PRETA-P").price == 5990  # untouched rows stay as they were


def test_the_import_preview_writes_amounts_as_the_reader_does(admin_client: Client, demo: None) -> None:
    """Gap: the preview wrote "Preço: R$ 1234,56" whatever the language (no thousands separator, Brazilian
    format in English). Portuguese reads R$ 1.234,56 and English R$1,234.56, as every other amount."""
    data = _csv(_row(sku="CAM-BAS-PRETA-M", price="1234,56", stock="12"))
    html = _upload(admin_client, "produtos.csv", data)
    assert "Preço: R$ 1.234,56; Estoque: 12" in html
    admin_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    html = _upload(admin_client, "produtos.csv", data)
    assert "Price: R$1,234.56; Stock: 12" in html
    assert "R$ 1234,56" not in html and "Preço: " not in html  # the file's column names stay Portuguese


def test_a_file_with_errors_lists_each_row_in_portuguese_and_changes_nothing(admin_client: Client, demo: None) -> None:
    data = _csv(
        _row(sku="CAM-BAS-PRETA-M", price="abc"),
        _row(product="caneca-nova", title="Caneca Nova", category="Inexistente", sku="CAN-NOVA-1", price="29,90"),
        _row(product="sem-titulo", category="Camisetas", sku="SEM-1", price="10"),
        _row(sku="CAM-BAS-PRETA-G", stock="-2", compare_at_price="1,00"),
        _row(sku="CAM-BAS-PRETA-P", price="99.999.999.999,99"),
        _row(sku="CAM-BAS-PRETA-P", stock="3"),
        _row(product="Slug Com Espaço", title="X", category="Camisetas", sku="X-1", price="1,00"),
    )
    html = _upload(admin_client, "erros.csv", data)
    errors = re.findall(r"<li>(Linha \d+ · [^<]+)</li>", html)
    assert errors == [
        "Linha 2 · Preço: Valor inválido: use reais e centavos, por exemplo 35,90.",
        "Linha 3 · Categoria: a categoria “Inexistente” não existe: crie-a antes em Categorias.",
        "Linha 4 · Título do produto: um produto novo precisa de título.",
        "Linha 5 · Preço de: o preço “de” deve ser maior ou igual ao preço.",
        "Linha 5 · Estoque: deve ser 0 ou mais.",
        "Linha 6 · Preço: O preço passa do máximo de R$ 1.000.000,00: confira se não sobrou um zero.",
        "Linha 7 · SKU: o SKU CAM-BAS-PRETA-P já apareceu na linha 6.",
        "Linha 8 · Produto (slug): use só letras minúsculas sem acento, números e hífens, ex.: camiseta-basica-preta.",
    ]
    assert "nada foi alterado" in html
    assert 'name="token"' not in html  # no confirmation offered
    assert not Product.objects.filter(slug__in=["caneca-nova", "sem-titulo"]).exists()
    assert Variant.objects.get(sku="CAM-BAS-PRETA-M").price == 5990


def test_an_xlsx_from_another_platform_creates_products_variants_and_photos(admin_client: Client, demo: None) -> None:
    book = Workbook()
    sheet = book.active
    sheet.append(
        ["produto (slug)", "titulo do produto", "categoria", "sku", "opcoes", "preco", "estoque", "fotos (urls)"]
    )
    sheet.append(
        [
            "caneca-lua",
            "Caneca Lua",
            "casa-cozinha",
            "LUA-P",
            "tamanho=300 ml",
            39.9,
            5,
            "https://cdn.example.com/lua.jpg https://cdn.example.com/lua-2.jpg",
        ]
    )
    sheet.append(["caneca-lua", None, None, "LUA-G", "tamanho=450 ml", "R$ 49,90", 0, None])
    buffer = io.BytesIO()
    book.save(buffer)
    html = _upload(admin_client, "outra-loja.xlsx", buffer.getvalue())
    summary = "A importação vai criar 1 produto e 2 variantes e atualizar 0 produto e 0 variante."
    assert summary in html, re.findall(r"<li>(Linha[^<]+)</li>", html)
    token = re.search(r'name="token" value="([^"]+)"', html)
    assert token is not None
    done = admin_client.post("/admin/shop/product/importar/", {"token": token.group(1)}, follow=True)
    assert (
        "Importação concluída: 1 produto criado, 0 atualizado; 2 variantes criadas, 0 atualizada; 2 fotos adicionadas."
        in done.content.decode()
    )
    product = Product.objects.get(slug="caneca-lua")
    assert product.category.slug == "casa-cozinha"
    assert list(product.variants.order_by("sku").values_list("sku", "title", "price", "stock")) == [
        ("LUA-G", "450 ml", 4990, 0),
        ("LUA-P", "300 ml", 3990, 5),
    ]
    photos = list(product.images.all())
    assert [(p.source, p.is_main) for p in photos] == [
        ("https://cdn.example.com/lua.jpg", True),
        ("https://cdn.example.com/lua-2.jpg", False),
    ]
    # the new product is found by the storefront search at once
    assert "caneca-lua" in admin_client.get("/produtos/", {"q": "canecas lua"}).content.decode()


def test_reading_a_plan_costs_a_fixed_number_of_queries(demo: None, django_assert_max_num_queries) -> None:
    rows = read_rows("x.csv", _csv(*[_row(sku=f"CAM-BAS-PRETA-{s}", stock=str(i)) for i, s in enumerate("PMG")]))
    with django_assert_max_num_queries(5):
        plan = import_plan(rows)
    assert (len(plan.variants), plan.errors) == (3, [])
    assert ProductImage.objects.exists()


def test_a_file_that_is_not_a_spreadsheet_is_refused_on_the_field(admin_client: Client) -> None:
    html = _upload(admin_client, "foto.csv", b"\x00\x01\x02 binario")
    assert "O arquivo não é um CSV de texto: envie .csv ou .xlsx." in html
    html = _upload(admin_client, "vazio.csv", b"nome;cor\r\nx;y\r\n")
    assert "A primeira linha deve ter os títulos das colunas" in html


def test_a_csv_saved_by_excel_in_portuguese_windows_1252_reads_its_accents(admin_client: Client, demo: None) -> None:
    data = (
        HEADER + "\r\n" + _row(product="cafe-especial-500g", sku="SKU-CAFE-500G", variant_title="Moído fino")
    ).encode("cp1252")
    html = _upload(admin_client, "excel.csv", data)
    assert "Variante: Moído fino" in html


def test_applying_a_plan_costs_a_bounded_number_of_statements_per_row(
    demo: None, django_assert_max_num_queries
) -> None:
    rows = read_rows("x.csv", _csv(*[_row(sku=f"CAM-BAS-PRETA-{s}", stock=str(i + 20)) for i, s in enumerate("PMG")]))
    plan = import_plan(rows)
    # savepoint + lock + one UPDATE per changed variant
    with django_assert_max_num_queries(6):
        result = catalog_import_apply(plan=plan)
    assert (result.variants_updated, Variant.objects.get(sku="CAM-BAS-PRETA-G").stock) == (3, 22)
