"""The catalog as a spreadsheet, for a merchant moving from another platform: one row per variant with its
product's columns, written as the orders export writes (CSV with `;`, decimal comma and a BOM for Excel in
pt-BR; XLSX with money shown "R$ 1.234,56"), and read back from CSV or XLSX into an import plan.

Reading never writes: `import_plan` checks every row against the database and returns what would be created or
updated, with each problem as "Linha 7 · Preço: …" in Portuguese. `shop.catalog.services.catalog_import_apply`
writes a plan only when it has no error, all of it in one transaction. An empty cell keeps the current value;
photos are added by URL (never downloaded, never removed).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Prefetch
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from kernel.money import format_brl, format_decimal_comma, parse_brl
from kernel.text import fold
from orders.admin_export import BOM, XLSX_MONEY_FORMAT, formula_safe
from shop.catalog.identifiers import validate_gtin
from shop.catalog.rules import price_problem
from shop.invoicing.validators import validate_ncm
from shop.models import Category, Product, ProductImage, Variant

MAX_BYTES = 5 * 1024 * 1024
MAX_ROWS = 5000

# (key, header): the export's header row; the import also accepts each header without accents or case.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("product", "Produto (slug)"),
    ("title", "Título do produto"),
    ("category", "Categoria"),
    ("brand", "Marca"),
    ("description", "Descrição"),
    ("product_active", "Produto ativo"),
    ("ncm", "NCM"),
    ("photos", "Fotos (URLs)"),
    ("sku", "SKU"),
    ("variant_title", "Variante"),
    ("options", "Opções"),
    ("price", "Preço"),
    ("compare_at_price", "Preço de"),
    ("stock", "Estoque"),
    ("weight_grams", "Peso (g)"),
    ("gtin", "GTIN"),
    ("variant_active", "Variante ativa"),
)
HEADERS = {key: header for key, header in COLUMNS}
MONEY_KEYS = frozenset({"price", "compare_at_price"})
_HEADER_KEYS = {fold(header): key for key, header in COLUMNS} | {key: key for key, _h in COLUMNS}
_SLUG = re.compile(r"^[-a-z0-9_]{1,220}$")
_TRUE = {"sim", "s", "1", "true", "verdadeiro", "ativo", "ativa", "x"}
_FALSE = {"nao", "n", "0", "false", "falso", "inativo", "inativa"}
_URL_SPLIT = re.compile(r"[\s|]+")


class SpreadsheetError(ValueError):
    """The file as a whole cannot be read (format, size, header): nothing to preview."""


# --- export ---------------------------------------------------------------------------------------------------


def _photo_url(image: ProductImage) -> str:
    url = image.url
    return url if url.startswith(("http://", "https://")) else f"{settings.BCP_PUBLIC_URL}{url}"


def _options_text(options: dict[str, Any]) -> str:
    return "; ".join(f"{name}={value}" for name, value in (options or {}).items())


def export_rows(products: Iterable[Product]) -> Iterator[list[object]]:
    """Typed rows (centavos as int), one per variant (all of them, active or not) in the COLUMNS order."""
    for product in products:
        head: dict[str, Any] = {
            "product": product.slug,
            "title": product.title,
            "category": product.category.name,
            "brand": product.brand,
            "description": product.description,
            "product_active": _("sim") if product.active else _("não"),
            "ncm": product.ncm,
            "photos": " ".join(_photo_url(image) for image in product.images.all()),
        }
        variants: list[Variant | None] = [*product.variants.all()] or [None]
        for variant in variants:
            row = dict(head)
            if variant is not None:
                row |= {
                    "sku": variant.sku,
                    "variant_title": variant.title,
                    "options": _options_text(variant.options),
                    "price": variant.price,
                    "compare_at_price": variant.compare_at_price,
                    "stock": variant.stock,
                    "weight_grams": variant.weight_grams,
                    "gtin": variant.gtin,
                    "variant_active": _("sim") if variant.active else _("não"),
                }
            yield [row.get(key) for key, _h in COLUMNS]


def export_queryset(products: Any) -> Any:
    return products.select_related("category").prefetch_related(
        Prefetch("variants", queryset=Variant.objects.order_by("position", "id")),
        Prefetch("images", queryset=ProductImage.objects.order_by("-is_main", "position", "id")),
    )


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_rows(products: Iterable[Product]) -> Iterator[str]:
    writer = csv.writer(_Echo(), delimiter=";")
    yield BOM + writer.writerow([header for _k, header in COLUMNS])
    keys = [key for key, _h in COLUMNS]
    for row in export_rows(products):
        cells: list[object] = []
        for key, value in zip(keys, row, strict=True):
            if key in MONEY_KEYS and value is not None:
                cells.append(format_decimal_comma(int(value)))  # type: ignore[call-overload]
            else:
                cells.append(formula_safe("" if value is None else value))
        yield writer.writerow(cells)


def xlsx_bytes(products: Iterable[Product]) -> bytes:
    from openpyxl import Workbook  # noqa: PLC0415 (0.1 s of import at every start for a rare staff export)
    from openpyxl.cell import WriteOnlyCell  # noqa: PLC0415 (same)

    book = Workbook(write_only=True)
    sheet = book.create_sheet(_("Produtos"))
    sheet.append([header for _k, header in COLUMNS])
    keys = [key for key, _h in COLUMNS]
    for row in export_rows(products):
        cells = []
        for key, value in zip(keys, row, strict=True):
            cell = WriteOnlyCell(sheet)
            if key in MONEY_KEYS and value is not None:
                cell.value = Decimal(int(value)) / 100  # type: ignore[call-overload]
                cell.number_format = XLSX_MONEY_FORMAT
            else:
                cell.value = value
                if isinstance(value, str):
                    cell.data_type = "s"  # "=…" stays text; SKUs and GTINs stay text (leading zeros)
            cells.append(cell)
        sheet.append(cells)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


# --- import: reading the file ---------------------------------------------------------------------------------


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def read_rows(name: str, data: bytes) -> list[tuple[int, dict[str, Any]]]:
    """(line number, {column key: raw cell}) for each non-empty row; raises SpreadsheetError for the file."""
    if len(data) > MAX_BYTES:
        raise SpreadsheetError(_("O arquivo passa de 5 MB: divida-o em partes menores."))
    if not data:
        raise SpreadsheetError(_("O arquivo está vazio."))
    is_xlsx = name.lower().endswith(".xlsx") or data[:2] == b"PK"  # XLSX is a zip file
    table = _xlsx_table(data) if is_xlsx else _csv_table(data)
    if not table:
        raise SpreadsheetError(_("O arquivo está vazio."))
    header = [_HEADER_KEYS.get(fold(_cell_text(cell))) for cell in table[0]]
    if "sku" not in header and "product" not in header:
        raise SpreadsheetError(
            _(
                "A primeira linha deve ter os títulos das colunas, com pelo menos “SKU” ou “Produto (slug)”. "
                "Exporte a planilha atual para ver o modelo."
            )
        )
    rows = []
    for number, cells in enumerate(table[1:], start=2):
        row = {key: cell for key, cell in zip(header, cells, strict=False) if key is not None}
        if any(_cell_text(value) for value in row.values()):
            rows.append((number, row))
    if len(rows) > MAX_ROWS:
        raise SpreadsheetError(_("Até %(n)d linhas por arquivo: divida a planilha.") % {"n": MAX_ROWS})
    return rows


def _csv_table(data: bytes) -> list[list[str]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")  # Excel's "CSV (separado por vírgulas)" in pt-BR
    if "\x00" in text:
        raise SpreadsheetError(_("O arquivo não é um CSV de texto: envie .csv ou .xlsx."))
    first = text.split("\n", 1)[0]
    delimiter = max((";", ",", "\t"), key=first.count)
    return [row for row in csv.reader(io.StringIO(text), delimiter=delimiter)]


def _xlsx_table(data: bytes) -> list[list[Any]]:
    from openpyxl import load_workbook  # noqa: PLC0415 (only the import needs openpyxl)

    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as error:  # openpyxl raises many kinds for a damaged or foreign file
        raise SpreadsheetError(_("Não foi possível ler a planilha: envie um .xlsx ou .csv válido.")) from error
    try:
        sheet = book.worksheets[0]
        return [list(row) for row in sheet.iter_rows(values_only=True, max_row=MAX_ROWS + 2)]
    finally:
        book.close()


# --- import: the plan -----------------------------------------------------------------------------------------


@dataclass
class RowProblem:
    line: int
    column: str  # the header as the merchant sees it
    message: str


@dataclass
class ProductChange:
    slug: str
    product: Product | None  # None: to be created
    values: dict[str, Any] = field(default_factory=dict)
    photos: list[str] = field(default_factory=list)


@dataclass
class VariantChange:
    line: int
    sku: str
    product_slug: str
    variant: Variant | None  # None: to be created
    values: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportPlan:
    products: dict[str, ProductChange] = field(default_factory=dict)
    variants: list[VariantChange] = field(default_factory=list)
    errors: list[RowProblem] = field(default_factory=list)
    warnings: list[RowProblem] = field(default_factory=list)
    preview: list[dict[str, Any]] = field(default_factory=list)  # one entry per row, for the page

    @property
    def counts(self) -> dict[str, int]:
        products = self.products.values()
        return {
            "products_new": sum(1 for p in products if p.product is None),
            "products_changed": sum(1 for p in products if p.product is not None and (p.values or p.photos)),
            "variants_new": sum(1 for v in self.variants if v.variant is None),
            "variants_changed": sum(1 for v in self.variants if v.variant is not None and v.values),
        }


def _bool(raw: str) -> bool | None:
    folded = fold(raw)
    if folded in _TRUE:
        return True
    if folded in _FALSE:
        return False
    raise ValueError(_("use sim ou não."))


def _money(raw: Any) -> int:
    if isinstance(raw, (int, float, Decimal)) and not isinstance(raw, bool):
        try:
            cents = (Decimal(str(raw)) * 100).quantize(Decimal(1))
        except InvalidOperation as error:
            raise ValueError(_("Valor inválido: use reais e centavos, por exemplo 35,90.")) from error
        if cents < 0:
            raise ValueError(_("O valor não pode ser negativo."))
        return int(cents)
    return parse_brl(str(raw))


def _whole(raw: Any, *, minimum: int) -> int:
    text = _cell_text(raw)
    if not re.fullmatch(r"-?\d+", text):
        raise ValueError(_("use um número inteiro, ex.: 10."))
    value = int(text)
    if value < minimum:
        raise ValueError(_("deve ser %(n)d ou mais.") % {"n": minimum})
    return value


def _options(raw: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for part in re.split(r"[;\n]+", raw):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        if not sep:
            name, sep, value = part.partition(":")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(_("escreva nome=valor separados por ponto e vírgula, ex.: tamanho=M; cor=Preta."))
        options[name.strip()[:60]] = value.strip()[:60]
    return options


def _category_index() -> dict[str, Category]:
    index: dict[str, Category] = {}
    for category in Category.objects.all():
        index.setdefault(fold(category.name), category)
        index[category.slug] = category
    return index


def import_plan(rows: list[tuple[int, dict[str, Any]]]) -> ImportPlan:
    """What importing `rows` would do; reads the database (about four queries), writes nothing."""
    plan = ImportPlan()
    skus = {_cell_text(row.get("sku")) for _n, row in rows} - {""}
    slugs = {_cell_text(row.get("product")).lower() for _n, row in rows} - {""}
    variants = {v.sku: v for v in Variant.objects.select_related("product").filter(sku__in=skus)}
    products = {p.slug: p for p in Product.objects.prefetch_related("images").filter(slug__in=slugs)}
    products |= {v.product.slug: v.product for v in variants.values()}
    categories = _category_index()
    seen_skus: dict[str, int] = {}
    for line, row in rows:
        _plan_row(plan, line, row, variants=variants, products=products, categories=categories, seen=seen_skus)
    return plan


def _plan_row(
    plan: ImportPlan,
    line: int,
    row: dict[str, Any],
    *,
    variants: dict[str, Variant],
    products: dict[str, Product],
    categories: dict[str, Category],
    seen: dict[str, int],
) -> None:
    errors_before = len(plan.errors)

    def problem(key: str, message: str) -> None:
        plan.errors.append(RowProblem(line, HEADERS[key], message))

    text = {key: _cell_text(value) for key, value in row.items()}
    sku = text.get("sku", "")
    variant = variants.get(sku) if sku else None
    slug = text.get("product", "").lower()
    if variant is not None and slug and slug != variant.product.slug:
        problem(
            "sku",
            _("o SKU %(sku)s já é do produto “%(slug)s”; uma planilha não muda a variante de produto.")
            % {"sku": sku, "slug": variant.product.slug},
        )
        return
    slug = slug or (variant.product.slug if variant is not None else "")
    if not slug:
        problem("product", _("informe o slug do produto (ex.: camiseta-basica-preta)."))
        return
    if not _SLUG.match(slug):
        problem("product", _("use só letras minúsculas sem acento, números e hífens, ex.: camiseta-basica-preta."))
        return
    change = plan.products.get(slug)
    if change is None:
        change = plan.products[slug] = ProductChange(slug=slug, product=products.get(slug))
    product = change.product
    _plan_product(change, text, problem)
    if text.get("category"):
        category = categories.get(text["category"]) or categories.get(fold(text["category"]))
        if category is None:
            problem(
                "category",
                _("a categoria “%(name)s” não existe: crie-a antes em Categorias.") % {"name": text["category"]},
            )
        elif product is None or product.category_id != category.pk:
            change.values["category"] = category
    elif product is None and "category" not in change.values:
        problem("category", _("um produto novo precisa de categoria."))
    if product is None and not change.values.get("title") and not text.get("title"):
        problem("title", _("um produto novo precisa de título."))
    entry: dict[str, Any] = {
        "line": line,
        "slug": slug,
        "sku": sku,
        "title": change.values.get("title") or (product.title if product else ""),
    }
    if sku:
        if sku in seen:
            problem("sku", _("o SKU %(sku)s já apareceu na linha %(line)d.") % {"sku": sku, "line": seen[sku]})
        else:
            seen[sku] = line
        if len(sku) > 64:
            problem("sku", _("até 64 caracteres."))
        variant_change = VariantChange(line=line, sku=sku, product_slug=slug, variant=variant)
        _plan_variant(variant_change, text, row, problem, plan, line)
        if len(plan.errors) == errors_before:
            plan.variants.append(variant_change)
        entry["action"] = (
            _("criar variante")
            if variant is None
            else (_("atualizar variante") if variant_change.values else _("sem mudança"))
        )
        entry["changes"] = _describe(variant_change.values)
    else:
        entry["action"] = _("criar produto") if product is None else _("atualizar produto")
        entry["changes"] = ""
    entry["errors"] = [p for p in plan.errors[errors_before:]]
    plan.preview.append(entry)


def _plan_product(change: ProductChange, text: dict[str, str], problem: Any) -> None:
    product = change.product
    for key, limit in (("title", 200), ("brand", 120)):
        value = text.get(key, "")
        if value and len(value) > limit:
            problem(key, _("até %(n)d caracteres.") % {"n": limit})
        elif value and (product is None or getattr(product, key) != value):
            change.values[key] = value
    description = text.get("description", "")
    if description and (product is None or product.description != description):
        change.values["description"] = description
    if text.get("product_active"):
        try:
            active = _bool(text["product_active"])
        except ValueError as error:
            problem("product_active", str(error))
        else:
            if product is None or product.active != active:
                change.values["active"] = active
    ncm = text.get("ncm", "")
    if ncm:
        try:
            validate_ncm(ncm)
        except ValidationError as error:
            problem("ncm", " ".join(error.messages))
        else:
            if product is None or product.ncm != ncm:
                change.values["ncm"] = ncm
    if text.get("photos"):
        known = (
            {image.source for image in product.images.all()} | {_photo_url(image) for image in product.images.all()}
            if product is not None
            else set()
        )
        for url in _URL_SPLIT.split(text["photos"]):
            if not url:
                continue
            if not url.startswith(("https://", "http://")) or len(url) > 500:
                problem("photos", _("“%(url)s” não é um endereço de imagem (https://…).") % {"url": url[:60]})
            elif url not in known and url not in change.photos:
                change.photos.append(url)


def _plan_variant(
    change: VariantChange, text: dict[str, str], row: dict[str, Any], problem: Any, plan: ImportPlan, line: int
) -> None:
    variant = change.variant
    values = change.values
    if text.get("variant_title"):
        if len(text["variant_title"]) > 120:
            problem("variant_title", _("até %(n)d caracteres.") % {"n": 120})
        elif variant is None or variant.title != text["variant_title"]:
            values["title"] = text["variant_title"]
    if text.get("options"):
        try:
            options = _options(text["options"])
        except ValueError as error:
            problem("options", str(error))
        else:
            if variant is None or variant.options != options:
                values["options"] = options
    prices: dict[str, int] = {}
    for key, label in (("price", _("O preço")), ("compare_at_price", _("O preço “de”"))):
        if not text.get(key):
            continue
        try:
            prices[key] = _money(row[key])
        except ValueError as error:
            problem(key, str(error))
            continue
        too_high = price_problem(prices[key], label=str(label))
        if too_high:
            problem(key, too_high)
    if variant is None and "price" not in prices and not text.get("price"):
        problem("price", _("uma variante nova precisa de preço, ex.: 35,90."))
    price = prices.get("price", variant.price if variant is not None else None)
    compare = prices.get("compare_at_price", variant.compare_at_price if variant is not None else None)
    if price is not None and compare is not None and compare < price:
        problem("compare_at_price", _("o preço “de” deve ser maior ou igual ao preço."))
    if prices.get("price") == 0:
        plan.warnings.append(RowProblem(line, HEADERS["price"], _("preço R$ 0,00: a variante sairá de graça.")))
    for key, value in prices.items():
        if variant is None or getattr(variant, key) != value:
            values[key] = value
    for key, minimum in (("stock", 0), ("weight_grams", 1)):
        if not text.get(key):
            continue
        try:
            number = _whole(row[key], minimum=minimum)
        except ValueError as error:
            problem(key, str(error))
        else:
            if variant is None or getattr(variant, key) != number:
                values[key] = number
    if text.get("gtin"):
        try:
            validate_gtin(text["gtin"])
        except ValidationError as error:
            problem("gtin", " ".join(error.messages))
        else:
            if variant is None or variant.gtin != text["gtin"]:
                values["gtin"] = text["gtin"]
    if text.get("variant_active"):
        try:
            active = _bool(text["variant_active"])
        except ValueError as error:
            problem("variant_active", str(error))
        else:
            if variant is None or variant.active != active:
                values["active"] = active


# The preview's words for what changes, in the staff's language (the file's column names stay as they are).
_LABELS = {
    "title": gettext_lazy("Variante"),
    "options": gettext_lazy("Opções"),
    "price": gettext_lazy("Preço"),
    "compare_at_price": gettext_lazy("Preço de"),
    "stock": gettext_lazy("Estoque"),
    "weight_grams": gettext_lazy("Peso (g)"),
    "gtin": "GTIN",
    "active": gettext_lazy("Ativa"),
}


def _describe(values: dict[str, Any]) -> str:
    parts = []
    for key, value in values.items():
        if key in MONEY_KEYS:
            shown = format_brl(value)  # as the reader writes amounts: R$ 1.234,56 / R$1,234.56
        elif key == "options":
            shown = _options_text(value)
        elif isinstance(value, bool):
            shown = _("sim") if value else _("não")
        else:
            shown = str(value)
        parts.append(f"{_LABELS.get(key, key)}: {shown}")
    return "; ".join(parts)
