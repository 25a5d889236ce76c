"""Catalog forms for people: prices in reais, options as name/value rows, photos with a main one.

Every rule the database enforces (constraints) is checked here first, on the field it concerns, so
the merchant reads a Portuguese sentence next to the field instead of a constraint name.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.forms.models import BaseInlineFormSet
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from PIL import Image

from kernel.money import MoneyField
from shop.catalog.rules import price_problem, zero_price_warning
from shop.models import Category, ProductImage, Variant

OPTION_ROWS = 3  # name/value pairs offered per variant ("tamanho: M", "cor: Preta", …)


class OptionsWidget(forms.MultiWidget):
    """Name/value text boxes, one pair per row, instead of a JSON box."""

    template_name = "shop/widgets/options.html"

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        widgets = []
        for _row in range(OPTION_ROWS):
            widgets.append(forms.TextInput(attrs={"placeholder": _("nome, ex.: tamanho"), "size": 12}))
            widgets.append(forms.TextInput(attrs={"placeholder": _("valor, ex.: M"), "size": 12}))
        super().__init__(widgets, attrs)

    def decompress(self, value: Any) -> list[str]:
        pairs = list(value.items()) if isinstance(value, dict) else []
        flat: list[str] = []
        for name, option in pairs[:OPTION_ROWS]:
            flat += [str(name), str(option)]
        return flat + [""] * (2 * OPTION_ROWS - len(flat))


class OptionsField(forms.MultiValueField):
    def __init__(self, **kwargs: Any) -> None:
        fields = tuple(forms.CharField(max_length=60, required=False) for _i in range(2 * OPTION_ROWS))
        kwargs.setdefault("widget", OptionsWidget())
        super().__init__(fields, require_all_fields=False, required=False, **kwargs)

    def compress(self, data_list: list[str]) -> dict[str, str]:
        options: dict[str, str] = {}
        values = list(data_list) + [""] * (2 * OPTION_ROWS - len(data_list))
        for row in range(OPTION_ROWS):
            name, value = (values[2 * row] or "").strip(), (values[2 * row + 1] or "").strip()
            if not name and not value:
                continue
            if not name or not value:
                raise ValidationError(_("Linha %(n)d: informe o nome e o valor da opção.") % {"n": row + 1})
            if name.lower() in {key.lower() for key in options}:
                raise ValidationError(_("A opção “%(name)s” aparece duas vezes.") % {"name": name})
            options[name] = value
        return options


def _sku_twin(other: str) -> str:
    return _("Já existe o SKU “%(other)s”: SKUs iguais a não ser por maiúsculas e minúsculas se confundem.") % {
        "other": other
    }


class VariantForm(forms.ModelForm):
    price = MoneyField(label=_("Preço (R$)"), help_text=_("Ex.: 35,90"))
    compare_at_price = MoneyField(
        label=_("Preço “de” (R$)"),
        required=False,
        help_text=_("Opcional: o preço antigo, riscado na loja."),
    )
    options = OptionsField(label=_("Opções"), help_text=_("Ex.: tamanho = M, cor = Preta."))
    stock = forms.IntegerField(
        label=_("Estoque"),
        min_value=0,
        initial=0,
        error_messages={"min_value": _("O estoque não pode ser negativo.")},
    )
    # Shown (a checkbox) only once a price of R$ 0,00 was refused: a free variant must be meant.
    confirm_free = forms.BooleanField(label=_("Confirmo o preço R$ 0,00"), required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.is_bound and self._typed_price_is_zero():
            self.fields["confirm_free"].widget = forms.CheckboxInput()

    def _typed_price_is_zero(self) -> bool:
        try:
            return self.fields["price"].clean(self.data.get(self.add_prefix("price"))) == 0
        except ValidationError:
            return False

    class Meta:
        model = Variant
        fields = (
            "product",
            "sku",
            "title",
            "options",
            "price",
            "compare_at_price",
            "stock",
            "low_stock_threshold",
            "allow_backorder",
            "active",
            "position",
            "weight_grams",
            "length_cm",
            "width_cm",
            "height_cm",
            "ncm",
            "gtin",
            "mpn",
        )
        help_texts = {"title": _("Vazio: os valores das opções, ex.: M / Preta.")}

    def clean_sku(self) -> str:
        sku = (self.cleaned_data.get("sku") or "").strip()
        # Buyers, agents and spreadsheets type SKUs in any case: "qa-dup-1" beside "QA-DUP-1" would be two
        # variants nobody can tell apart (the unique index only refuses the same letters).
        twin = (
            Variant.objects.filter(sku__iexact=sku).exclude(pk=self.instance.pk).select_related("product").first()
            if sku
            else None
        )
        if twin is not None and twin.sku != sku:
            raise ValidationError(_sku_twin(twin.sku))
        if twin is not None:
            # Named here, with its product: the unique index's "Variante com este SKU já existe." left staff looking
            # for it among the products (QA walk: a product copied from another kept its SKU).
            raise ValidationError(
                _("O SKU “%(sku)s” já é do produto “%(product)s”: cada variante precisa de um SKU próprio.")
                % {"sku": sku, "product": twin.product.title}
            )
        return sku

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        price, compare_at = cleaned.get("price"), cleaned.get("compare_at_price")
        for name, value, label in (("price", price, _("O preço")), ("compare_at_price", compare_at, _("O preço “de”"))):
            problem = price_problem(value, label=str(label))
            if problem:
                self.add_error(name, problem)
        if price == 0 and "price" in self.changed_data and not cleaned.get("confirm_free"):
            self.add_error("price", zero_price_warning())
        if price is not None and compare_at is not None and compare_at < price:
            self.add_error("compare_at_price", _("O preço “de” deve ser maior ou igual ao preço."))
        options = cleaned.get("options")
        if not (cleaned.get("title") or "").strip() and options:
            # Cart, checkout, order, e-mail and NF-e name a variant "product — title": without a title two sizes
            # of one product would read the same there, so the option values ("300 ml", "M / Preta") become it.
            title_field = Variant._meta.get_field("title")
            cleaned["title"] = " / ".join(options.values())[: title_field.max_length]
        return cleaned


class VariantFormSet(BaseInlineFormSet):
    """Two variants of one product whose SKUs differ only in letter case are refused together (each form's own
    check sees only what is saved)."""

    def clean(self) -> None:
        super().clean()
        seen: dict[str, str] = {}
        for form in self.forms:
            sku = (getattr(form, "cleaned_data", None) or {}).get("sku")
            if not sku or form.cleaned_data.get("DELETE"):
                continue
            first = seen.setdefault(sku.lower(), sku)
            if first != sku:
                form.add_error("sku", _sku_twin(first))


class CategoryForm(forms.ModelForm):
    class Meta:
        model = Category
        fields = ("name", "slug", "parent", "description", "position")
        # QA walk: the category page said "Slug:" (the model's word, English) with no hint, where the product's says
        # what the field is.
        labels = {"slug": capfirst(_("endereço (slug)"))}
        help_texts = {
            "slug": _(
                "O fim do endereço da categoria na loja, ex.: /produtos/?category=camisetas. Preenchido a partir do "
                "nome enquanto você digita; só letras sem acento, números e hífens. Mudá-lo quebra links já "
                "compartilhados."
            )
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        name = (cleaned.get("name") or "").strip()
        twins = Category.objects.filter(name__iexact=name, parent=cleaned.get("parent")).exclude(pk=self.instance.pk)
        if name and twins.exists():
            # QA walk: two "Cafés" showed twice in the storefront's menu, indistinguishable.
            self.add_error(
                "name",
                _("Já existe a categoria “%(name)s” neste nível: use outro nome ou edite a que existe.")
                % {"name": name},
            )
        return cleaned


class PhotoInput(forms.ClearableFileInput):
    """The current photo as a link ("Abrir a foto atual") instead of its storage path: the preview beside it
    already shows it, and a path like produtos/prod_…/foto.jpg means nothing to the merchant."""

    template_name = "shop/widgets/photo_input.html"

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__({"accept": "image/jpeg,image/png,image/webp", **(attrs or {})})


def _too_many_pixels() -> ValidationError:
    megapixels = (Image.MAX_IMAGE_PIXELS or 0) // 1_000_000
    return ValidationError(
        _("A imagem tem pixels demais (mais de %(mp)d megapixels): reduza a resolução e envie de novo.")
        % {"mp": megapixels},
        code="too_many_pixels",
    )


class PhotoField(forms.ImageField):
    """Django's ImageField, except that a photo Pillow refuses for its size in pixels (a decompression bomb to
    Pillow, often just a huge scan) says so, instead of "not an image or corrupted"; one Pillow only warns about
    (up to twice its limit) is refused the same way, since its thumbnails would take that memory too."""

    def to_python(self, data: Any) -> Any:
        try:
            checked = super().to_python(data)
        except ValidationError as exc:
            # the warning is an error too where warnings are raised (tests, `-W error`)
            if isinstance(exc.__cause__, (Image.DecompressionBombError, Image.DecompressionBombWarning)):
                raise _too_many_pixels() from exc
            raise
        image = getattr(checked, "image", None)
        if image is not None and Image.MAX_IMAGE_PIXELS and image.width * image.height > Image.MAX_IMAGE_PIXELS:
            raise _too_many_pixels()
        return checked


class ProductImageForm(forms.ModelForm):
    class Meta:
        model = ProductImage
        fields = ("image", "source", "alt_text", "is_main", "position")
        field_classes = {"image": PhotoField}
        widgets = {
            "image": PhotoInput,
            "alt_text": forms.TextInput(attrs={"class": "photo-alt"}),
            "position": forms.NumberInput(attrs={"class": "photo-position", "min": 0}),
            "source": forms.TextInput(attrs={"class": "photo-source", "placeholder": "https://…"}),
        }

    def _get_validation_exclusions(self) -> set[str]:
        # "One main photo" is checked across the whole formset (ProductImageFormSet); per form it would
        # see the old main photo still in the database while the merchant is moving the mark.
        return {*super()._get_validation_exclusions(), "product"}

    def clean_image(self) -> Any:
        image = self.cleaned_data.get("image")
        if image and getattr(image, "size", 0) > settings.SHOP_IMAGE_MAX_BYTES:
            limit = settings.SHOP_IMAGE_MAX_BYTES // (1024 * 1024)
            raise ValidationError(_("A foto passa de %(mb)d MB: envie uma versão menor.") % {"mb": limit})
        return image

    def save(self, commit: bool = True) -> ProductImage:
        if "image" in self.changed_data:  # a new file: its thumbnails are made again after the save
            self.instance.thumbnail, self.instance.thumbnails = "", {}
        return super().save(commit)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        missing = not cleaned.get("image") and not cleaned.get("source")
        # A file that is not an image already has its own error on the field: one message is enough.
        if not self.cleaned_data.get("DELETE") and missing and "image" not in self.errors:
            self.add_error("image", _("Envie uma foto (ou informe o endereço de uma imagem)."))
        return cleaned


class ProductImageFormSet(BaseInlineFormSet):
    """One main photo per product: the first one when none is marked, an error when two are."""

    def clean(self) -> None:
        super().clean()
        kept = [f for f in self.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]
        mains = [f for f in kept if f.cleaned_data.get("is_main")]
        if len(mains) > 1:
            raise ValidationError(_("Marque só uma foto como principal."))
        if kept and not mains:
            first = min(kept, key=lambda f: f.cleaned_data.get("position") or 0)
            first.instance.is_main = True
            first.cleaned_data["is_main"] = True
