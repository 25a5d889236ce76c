"""Catalog admin: products with photos and variants (prices in reais), categories, the low-stock list."""

from __future__ import annotations

import secrets
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery, Sum
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from kernel.admin_actions import RefusedActionMessage
from kernel.money import format_brl
from shop.admin.catalog_forms import CategoryForm, ProductImageForm, ProductImageFormSet, VariantForm, VariantFormSet
from shop.catalog import spreadsheet
from shop.catalog.images import product_image_thumbnail_make
from shop.catalog.services import ImportResult, catalog_import_apply
from shop.checkout.stock import catalog_cache_bump
from shop.invoicing.lifecycle import fiscal_retry_blocked_soon
from shop.models import Category, Product, ProductImage, SearchSynonym, Variant

STOCK_STATES = (("in", _("Em estoque")), ("low", _("Estoque baixo")), ("out", _("Esgotado")))


def _variant_stock_q(state: str) -> dict[str, object]:
    """Variant filter for a stock state: low = 0 < stock <= threshold; out = stock 0."""
    return {
        "in": {"stock__gt": 0},
        "low": {"stock__gt": 0, "stock__lte": F("low_stock_threshold")},
        "out": {"stock": 0},
    }[state]


class ProductStockStateFilter(admin.SimpleListFilter):
    title = _("estoque")
    parameter_name = "stock_state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> tuple[tuple[str, object], ...]:
        return STOCK_STATES

    def queryset(self, request: HttpRequest, queryset: QuerySet[Product]) -> QuerySet[Product] | None:
        value = self.value()
        if value not in {"in", "low", "out"}:
            return queryset
        active = Variant.objects.filter(product=OuterRef("pk"), active=True)
        if value == "out":
            # Out of stock: no active variant has units left.
            return queryset.exclude(Exists(active.filter(stock__gt=0)))
        return queryset.filter(Exists(active.filter(**_variant_stock_q(value))))


class VariantStockStateFilter(admin.SimpleListFilter):
    title = _("estoque")
    parameter_name = "stock_state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> tuple[tuple[str, object], ...]:
        return STOCK_STATES

    def queryset(self, request: HttpRequest, queryset: QuerySet[Variant]) -> QuerySet[Variant] | None:
        value = self.value()
        if value not in {"in", "low", "out"}:
            return queryset
        return queryset.filter(**_variant_stock_q(value))


class VariantInline(admin.StackedInline):
    model = Variant
    form = VariantForm
    formset = VariantFormSet
    extra = 0
    fieldsets = (
        (None, {"fields": (("sku", "title"), "options", ("price", "compare_at_price", "confirm_free"))}),
        (_("Estoque"), {"fields": (("stock", "low_stock_threshold"), ("allow_backorder", "active", "position"))}),
        (
            _("Embalagem (para o frete)"),
            {
                "fields": (("weight_grams", "length_cm", "width_cm", "height_cm"),),
                "description": _("Peso vazio: vale o peso do produto."),
            },
        ),
        (_("Dados fiscais (NF-e)"), {"fields": ("ncm",)}),
        (_("Identificadores (feeds)"), {"fields": (("gtin", "mpn"),), "classes": ("collapse",)}),
    )


class ProductImageInline(admin.TabularInline):
    model = ProductImage
    form = ProductImageForm
    formset = ProductImageFormSet
    extra = 1
    fields = ("preview", "image", "alt_text", "is_main", "position", "source")
    readonly_fields = ("preview",)

    @admin.display(description=_("prévia"))
    def preview(self, obj: ProductImage) -> str:
        if not obj.pk or not (obj.image or obj.source):
            return ""
        return format_html('<img src="{}" alt="{}" class="admin-thumb">', obj.thumbnail_url, obj.alt_text)


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    form = CategoryForm
    list_display = ("name", "slug", "parent", "position")
    list_editable = ("position",)
    list_select_related = ("parent",)
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}


class CatalogImportForm(forms.Form):
    file = forms.FileField(
        label=_("Planilha (.csv ou .xlsx)"),
        help_text=_(
            "Uma linha por variante, com as colunas da exportação. Células vazias mantêm o valor atual; "
            "fotos são adicionadas pelo endereço (URL), nunca apagadas."
        ),
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,.xlsx,text/csv"}),
    )


def _import_summary(result: ImportResult) -> str:
    """What an import did: five counts, each with its own plural (one sentence cannot agree with all five)."""
    pc, pu, vc, vu, ph = (result.products_created, result.products_updated, result.variants_created,
                          result.variants_updated, result.photos_added)  # fmt: skip
    return gettext(
        "Importação concluída: %(products_created)s, %(products_updated)s; %(variants_created)s, "
        "%(variants_updated)s; %(photos_added)s."
    ) % {
        "products_created": ngettext("%(n)d produto criado", "%(n)d produtos criados", pc) % {"n": pc},
        "products_updated": ngettext("%(n)d atualizado", "%(n)d atualizados", pu) % {"n": pu},
        "variants_created": ngettext("%(n)d variante criada", "%(n)d variantes criadas", vc) % {"n": vc},
        "variants_updated": ngettext("%(n)d atualizada", "%(n)d atualizadas", vu) % {"n": vu},
        "photos_added": ngettext("%(n)d foto adicionada", "%(n)d fotos adicionadas", ph) % {"n": ph},
    }


IMPORT_CACHE_KEY = "shop:catalog-import:%s"
IMPORT_SECONDS = 1800  # the preview's file waits this long for the confirmation


@admin.register(Product)
class ProductAdmin(RefusedActionMessage, admin.ModelAdmin):
    class Media:
        css = {"all": ("shop/admin-catalog.css",)}  # classes instead of style="…" (no inline styles under the CSP)

    change_list_template = "admin/shop/product/catalog_change_list.html"

    list_display = ("title", "category", "price_display", "stock_total", "stock_state", "active")
    list_filter = ("category", "active", ProductStockStateFilter)
    list_select_related = ("category",)
    search_fields = ("title", "slug", "brand", "variants__sku")
    search_help_text = _("Busca por título, marca, slug ou SKU.")
    prepopulated_fields = {"slug": ("title",)}
    readonly_fields = ("public_id", "created_at", "updated_at")
    inlines = (VariantInline, ProductImageInline)
    actions = ("make_active", "make_inactive")
    fieldsets = (
        (None, {"fields": ("title", "slug", "category", "brand", "description", "active")}),
        (_("Entrega"), {"fields": ("requires_shipping", ("weight_grams", "length_cm", "width_cm", "height_cm"))}),
        (
            _("Dados fiscais (NF-e)"),
            {"fields": (("ncm", "cfop", "icms_cst"), ("origin", "unit"), ("ibs_cbs_cst", "ibs_cbs_class"))},
        ),
        (_("Identificação"), {"fields": ("public_id", "created_at", "updated_at")}),
    )

    def get_urls(self) -> list:
        wrap = self.admin_site.admin_view
        return [
            path("exportar.csv", wrap(self.export_csv_view), name="shop_product_export_csv"),
            path("exportar.xlsx", wrap(self.export_xlsx_view), name="shop_product_export_xlsx"),
            path("importar/", wrap(self.import_view), name="shop_product_import"),
            *super().get_urls(),
        ]

    def _export_products(self, request: HttpRequest) -> Any:
        if not self.has_view_permission(request):
            raise PermissionDenied
        # The export follows the list's filters and search; the list's annotations are not needed.
        changelist = self.get_changelist_instance(request)
        return spreadsheet.export_queryset(changelist.get_queryset(request).order_by("title", "pk"))

    def export_csv_view(self, request: HttpRequest) -> StreamingHttpResponse:
        products = self._export_products(request).iterator(chunk_size=500)
        response = StreamingHttpResponse(spreadsheet.csv_rows(products), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="produtos-{timezone.localdate():%Y%m%d}.csv"'
        return response

    def export_xlsx_view(self, request: HttpRequest) -> HttpResponse:
        products = self._export_products(request).iterator(chunk_size=500)
        response = HttpResponse(
            spreadsheet.xlsx_bytes(products),
            content_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        )
        response["Content-Disposition"] = f'attachment; filename="produtos-{timezone.localdate():%Y%m%d}.xlsx"'
        return response

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload → preview with every row's errors (nothing written) → confirm → one transaction."""
        if not (self.has_add_permission(request) and self.has_change_permission(request)):
            raise PermissionDenied
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": gettext("Importar produtos de uma planilha"),
            "headers": [header for _key, header in spreadsheet.COLUMNS],
        }
        form = CatalogImportForm()
        if request.method == "POST" and request.POST.get("token"):
            stored = cache.get(IMPORT_CACHE_KEY % request.POST["token"])
            if not stored or stored["user"] != request.user.pk:
                messages.error(request, gettext("A prévia expirou: envie a planilha de novo."))
                return HttpResponseRedirect(reverse("admin:shop_product_import"))
            plan = spreadsheet.import_plan(spreadsheet.read_rows(stored["name"], stored["data"]))
            if not plan.errors:  # checked again: the catalog may have changed since the preview
                result = catalog_import_apply(plan=plan)
                cache.delete(IMPORT_CACHE_KEY % request.POST["token"])
                messages.success(request, _import_summary(result))
                return HttpResponseRedirect(reverse("admin:shop_product_changelist"))
            context.update(plan=plan, file_name=stored["name"])
        elif request.method == "POST":
            form = CatalogImportForm(request.POST, request.FILES)
            if form.is_valid():
                upload = form.cleaned_data["file"]
                if upload.size > spreadsheet.MAX_BYTES:
                    form.add_error("file", gettext("O arquivo passa de 5 MB: divida-o em partes menores."))
                else:
                    data = upload.read()
                    try:
                        plan = spreadsheet.import_plan(spreadsheet.read_rows(upload.name, data))
                    except spreadsheet.SpreadsheetError as error:
                        form.add_error("file", str(error))
                    else:
                        context.update(plan=plan, file_name=upload.name)
                        if not plan.errors:
                            token = secrets.token_urlsafe(24)
                            cache.set(
                                IMPORT_CACHE_KEY % token,
                                {"user": request.user.pk, "name": upload.name, "data": data},
                                IMPORT_SECONDS,
                            )
                            context["token"] = token
        context["form"] = form
        return TemplateResponse(request, "admin/shop/product/import.html", context)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Product]:
        # Annotations keep the changelist at a fixed number of queries (no per-row variant queries).
        active = Variant.objects.filter(product=OuterRef("pk"), active=True)
        return (
            super()
            .get_queryset(request)
            .annotate(
                min_price=Subquery(active.order_by("price").values("price")[:1]),
                stock_sum=Sum("variants__stock"),
                has_stock=Exists(active.filter(stock__gt=0)),
                has_low=Exists(active.filter(**_variant_stock_q("low"))),
            )
        )

    def save_model(self, request: HttpRequest, obj: Product, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if settings.FISCAL_ISSUE_ON != "off" and not (obj.ncm or "").strip():
            # The NF-e of every order with this product would be blocked ("NCM não informado"), seen only
            # inside each order: say it where the merchant can fix it.
            messages.warning(
                request,
                _(
                    "“%(title)s” está sem NCM: a NF-e dos pedidos com este produto não será emitida até você "
                    "informar o NCM (8 dígitos, em Dados fiscais)."
                )
                % {"title": obj.title},
            )

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "category" and field is not None:
            # Merchant walk: a new store has no category, and the product page only said "Este campo é obrigatório."
            if Category.objects.exists():
                field.error_messages["required"] = gettext("Escolha a categoria do produto.")
            else:
                create = format_html(
                    '<a href="{}" target="_blank" rel="noopener">{}</a>',
                    reverse("admin:shop_category_add"),
                    gettext("crie a primeira categoria"),
                )
                needed = format_html(
                    gettext(
                        "Todo produto fica numa categoria e a loja ainda não tem nenhuma: {} (ou use o “+” ao lado)."
                    ),
                    create,
                )
                field.help_text = needed
                field.error_messages["required"] = needed
        return field

    def render_change_form(
        self, request: HttpRequest, context: dict[str, Any], add: bool = False, change: bool = False,
        form_url: str = "", obj: Any = None,
    ) -> Any:  # fmt: skip
        if request.method == "POST" and any(name.startswith("images-") for name in request.FILES):
            # Shown again with its errors, the page cannot keep the files chosen (browsers do not allow it): say so.
            messages.warning(
                request,
                gettext("As fotos escolhidas não foram enviadas: corrija os erros abaixo e escolha as fotos de novo."),
            )
        return super().render_change_form(request, context, add, change, form_url, obj)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        fiscal_retry_blocked_soon()  # an NCM (or unit, origin) filled in: NF-e blocked for it go now

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        if formset.model is not ProductImage:
            super().save_formset(request, form, formset, change)
            return
        main = next(
            (f.instance for f in formset.forms if f.cleaned_data.get("is_main") and not f.cleaned_data.get("DELETE")),
            None,
        )
        if main is not None:
            # Move the "main" mark first: the database allows one main photo per product at any moment.
            form.instance.images.filter(is_main=True).exclude(pk=main.pk).update(is_main=False)
        super().save_formset(request, form, formset, change)
        for image in form.instance.images.filter(Q(thumbnail="") | Q(thumbnails={})).exclude(image=""):
            product_image_thumbnail_make(image=image)

    @admin.display(description=_("preço"), ordering="min_price")
    def price_display(self, obj: Product) -> str:
        if obj.min_price is None:
            return "—"
        return format_html('<span class="nowrap">{}</span>', format_brl(obj.min_price))

    @admin.display(description=_("estoque total"), ordering="stock_sum")
    def stock_total(self, obj: Product) -> int:
        return obj.stock_sum or 0

    @admin.display(description=_("situação"))
    def stock_state(self, obj: Product) -> str:
        if not obj.has_stock:
            return format_html('<span class="stock-badge stock-out">{}</span>', _("Esgotado"))
        if obj.has_low:
            return format_html('<span class="stock-badge stock-low">{}</span>', _("Estoque baixo"))
        return format_html('<span class="stock-badge stock-ok">{}</span>', _("Em estoque"))

    @admin.action(description=_("Ativar produtos selecionados"), permissions=["change"])
    def make_active(self, request: HttpRequest, queryset: QuerySet[Product]) -> None:
        queryset.update(active=True)
        _catalog_changed()

    @admin.action(description=_("Desativar produtos selecionados"), permissions=["change"])
    def make_inactive(self, request: HttpRequest, queryset: QuerySet[Product]) -> None:
        queryset.update(active=False)
        _catalog_changed()


def _catalog_changed() -> None:
    # A bulk update sends no post_save: checkouts must stop pricing the products as they were.
    catalog_cache_bump()
    transaction.on_commit(catalog_cache_bump)


@admin.register(Variant)
class VariantAdmin(admin.ModelAdmin):
    """All variants; with the "Estoque baixo" filter this is the low-stock list merchants restock from."""

    class Media:
        css = {"all": ("shop/admin-catalog.css",)}

    form = VariantForm
    fieldsets = ((None, {"fields": ("product",)}), *VariantInline.fieldsets)

    list_display = ("sku", "product_title", "title", "price_display", "stock", "low_stock_threshold", "active")
    list_filter = (VariantStockStateFilter, "active", "product__category")
    list_select_related = ("product",)
    search_fields = ("sku", "title", "product__title")
    autocomplete_fields = ("product",)
    ordering = ("stock", "sku")

    def save_model(self, request: HttpRequest, obj: Variant, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        fiscal_retry_blocked_soon()  # the variant's NCM may unblock an NF-e

    @admin.display(description=_("produto"), ordering="product__title")
    def product_title(self, obj: Variant) -> str:
        return obj.product.title

    @admin.display(description=_("preço"), ordering="price")
    def price_display(self, obj: Variant) -> str:
        return format_html('<span class="nowrap">{}</span>', format_brl(obj.price))


@admin.register(SearchSynonym)
class SearchSynonymAdmin(admin.ModelAdmin):
    """The merchant's synonyms of the catalog search (storefront and agents): "camisa, camiseta"."""

    list_display = ("words",)
    search_fields = ("words",)
    search_help_text = _(
        "Cada linha junta termos que a busca trata como iguais: quem busca “camisa” encontra “camiseta”. "
        "Plural, acentos e maiúsculas já são ignorados pela busca; não é preciso listá-los."
    )
