"""Catalog: categories, products, product images and variants (with stock)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from kernel.ids import new_public_id
from shop.catalog.identifiers import validate_gtin
from shop.invoicing.validators import (
    ORIGINS,
    ibs_cbs_pair_problem,
    validate_cfop,
    validate_ibs_cbs_class,
    validate_ibs_cbs_cst,
    validate_icms_cst,
    validate_ncm,
)


def new_product_id() -> str:
    return new_public_id("prod")


class Category(models.Model):
    name = models.CharField(_("nome"), max_length=120)
    slug = models.SlugField(_("slug"), max_length=140, unique=True)
    parent = models.ForeignKey(
        "self",
        verbose_name=_("categoria pai"),
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="children",
    )
    description = models.TextField(_("descrição"), blank=True)
    position = models.PositiveIntegerField(_("posição"), default=0)

    class Meta:
        verbose_name = _("categoria")
        verbose_name_plural = _("categorias")
        ordering = ["position", "name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("shop:product_list") + f"?category={self.slug}"


class Product(models.Model):
    public_id = models.CharField(_("ID público"), max_length=40, unique=True, default=new_product_id, editable=False)
    title = models.CharField(_("título"), max_length=200)
    slug = models.SlugField(
        _("endereço (slug)"),
        max_length=220,
        unique=True,
        help_text=_(
            "O fim do endereço da página do produto, ex.: /produtos/camiseta-basica-preta/. Preenchido a partir "
            "do título enquanto você digita; só letras sem acento, números e hífens. Mudá-lo quebra links já "
            "compartilhados."
        ),
    )
    description = models.TextField(_("descrição"), blank=True)
    brand = models.CharField(_("marca"), max_length=120, blank=True)
    category = models.ForeignKey(
        Category, verbose_name=_("categoria"), on_delete=models.PROTECT, related_name="products"
    )
    # Physical goods need shipping or pickup; digital goods do not (BCP §9).
    requires_shipping = models.BooleanField(_("exige entrega"), default=True)
    weight_grams = models.PositiveIntegerField(_("peso (g)"), default=500)
    # Package size of one unit for freight quotes; a variant's own measures win, empty = the store's default.
    length_cm = models.PositiveIntegerField(_("comprimento (cm)"), null=True, blank=True)
    width_cm = models.PositiveIntegerField(_("largura (cm)"), null=True, blank=True)
    height_cm = models.PositiveIntegerField(_("altura (cm)"), null=True, blank=True)
    # Fiscal data for the NF-e: an empty NCM blocks issuing (with a message naming the product).
    ncm = models.CharField(_("NCM"), max_length=10, blank=True, validators=[validate_ncm], help_text=_("8 dígitos."))
    # Empty = the store's default CFOP (a sale to another UF takes its 6xxx counterpart automatically).
    cfop = models.CharField(
        _("CFOP"), max_length=5, blank=True, validators=[validate_cfop], help_text=_("Vazio: o CFOP padrão da loja.")
    )
    icms_cst = models.CharField(
        _("CST/CSOSN do ICMS"),
        max_length=3,
        blank=True,
        validators=[validate_icms_cst],
        help_text=_("Vazio: o da loja."),
    )
    origin = models.CharField(_("origem da mercadoria"), max_length=1, blank=True, choices=ORIGINS, default="0")
    unit = models.CharField(_("unidade comercial"), max_length=6, blank=True, default="UN")
    # IBS/CBS of the tax reform (NT 2025.002, group IBSCBS): empty = the store's classification.
    ibs_cbs_cst = models.CharField(
        _("CST do IBS/CBS"),
        max_length=3,
        blank=True,
        validators=[validate_ibs_cbs_cst],
        help_text=_("Vazio: o da loja. 000 = tributação integral; 410 = imunidade e não incidência."),
    )
    ibs_cbs_class = models.CharField(
        _("classificação tributária do IBS/CBS (cClassTrib)"),
        max_length=6,
        blank=True,
        validators=[validate_ibs_cbs_class],
        help_text=_("Vazio: a da loja. 6 dígitos da tabela cClassTrib; os 3 primeiros são o CST (ex.: 000001)."),
    )
    active = models.BooleanField(_("ativo"), default=True)
    created_at = models.DateTimeField(_("criado em"), auto_now_add=True)
    updated_at = models.DateTimeField(_("atualizado em"), auto_now=True)

    class Meta:
        verbose_name = _("produto")
        verbose_name_plural = _("produtos")
        ordering = ["title"]
        indexes = [models.Index(fields=["active", "category"])]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("shop:product_detail", kwargs={"slug": self.slug})

    def clean(self) -> None:
        super().clean()
        problem = ibs_cbs_pair_problem(self.ibs_cbs_cst, self.ibs_cbs_class)
        if problem:
            raise ValidationError({"ibs_cbs_class": problem[0].upper() + problem[1:] + "."})


def _product_image_upload_to(image: ProductImage, filename: str) -> str:
    # One folder per product public id: easy to find in a bucket, no collisions between products.
    return f"produtos/{image.product.public_id}/{filename}"


class ProductImage(models.Model):
    """A product photo: an uploaded file (thumbnail made once at upload) or, for old rows, a path/URL."""

    product = models.ForeignKey(Product, on_delete=models.CASCADE, related_name="images")
    image = models.ImageField(
        _("foto"),
        upload_to=_product_image_upload_to,
        max_length=300,
        blank=True,
        help_text=_("JPEG, PNG ou WebP, até 5 MB."),
    )
    # Storage name of the thumbnail, written once when the photo is saved (no lookup per page view).
    thumbnail = models.CharField(max_length=400, blank=True, editable=False)
    # Storage names of the storefront sizes ({alias: name}, settings.THUMBNAIL_ALIASES), made once at save.
    thumbnails = models.JSONField(default=dict, blank=True, editable=False)
    # Older rows: a path under static/ (shipped with the project) or an absolute https URL.
    source = models.CharField(_("endereço da imagem (opcional)"), max_length=500, blank=True)
    alt_text = models.CharField(
        _("texto alternativo"),
        max_length=200,
        blank=True,
        help_text=_("Descreva a foto para quem usa leitor de tela, ex.: camiseta preta dobrada."),
    )
    is_main = models.BooleanField(_("principal"), default=False)
    position = models.PositiveIntegerField(_("ordem"), default=0)

    class Meta:
        verbose_name = _("foto")
        verbose_name_plural = _("fotos")
        # The main photo first: every surface (storefront, BCP image_url, schema.org) takes images[0].
        ordering = ["-is_main", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["product"],
                condition=Q(is_main=True),
                name="product_image_one_main",
                violation_error_message=_("Só uma foto pode ser a principal."),
            ),
        ]

    def __str__(self) -> str:
        # The admin titles each photo row with this: what the photo shows, else its file name, never a storage
        # path ("produtos/prod_…/x.jpg").
        if self.alt_text:
            return self.alt_text
        name = (self.image.name if self.image else self.source).rstrip("/").rpartition("/")[2]
        return str(_("Foto %(name)s") % {"name": name}) if name else str(_("Foto"))

    @property
    def url(self) -> str:
        if self.image:
            return self.image.url
        if self.source.startswith(("http://", "https://", "/")):
            return self.source

        return static(self.source)

    def alias_url(self, alias: str) -> str:
        """The URL of a storefront size (e.g. "card"); the full photo when it was not made (paths, URLs)."""
        name = (self.thumbnails or {}).get(alias)
        return self.image.storage.url(name) if name else self.url

    @property
    def thumbnail_url(self) -> str:
        """The small version for lists and galleries; the full photo when none was made."""
        if self.thumbnail:
            return self.image.storage.url(self.thumbnail)
        return self.url


class Variant(models.Model):
    product = models.ForeignKey(Product, on_delete=models.CASCADE, related_name="variants")
    # The SKU is the variant's public id: BCP checkout `item.id` (e.g. "SKU-CAFE-500G").
    sku = models.CharField(_("SKU"), max_length=64, unique=True)
    title = models.CharField(_("título da variante"), max_length=120, blank=True)
    # Option values such as {"tamanho": "M", "cor": "Preta"} (edited in the admin as name/value rows).
    options = models.JSONField(_("opções"), default=dict, blank=True)
    # Integer centavos; the admin types and shows them as "R$ 35,90".
    price = models.BigIntegerField(_("preço"))
    compare_at_price = models.BigIntegerField(
        _('preço "de" (riscado)'),
        null=True,
        blank=True,
        help_text=_("Opcional: o preço antigo, maior que o preço atual."),
    )
    stock = models.IntegerField(_("estoque"), default=0)
    low_stock_threshold = models.PositiveIntegerField(_("alerta de estoque baixo"), default=3)
    # Accept orders beyond stock (encomenda): shown as PreOrder.
    allow_backorder = models.BooleanField(_("aceita encomenda"), default=False)
    active = models.BooleanField(_("ativa"), default=True)
    position = models.PositiveIntegerField(_("posição"), default=0)
    # Package size for freight quotes; empty weight = the product's weight.
    weight_grams = models.PositiveIntegerField(_("peso (g)"), null=True, blank=True)
    length_cm = models.PositiveIntegerField(_("comprimento (cm)"), null=True, blank=True)
    width_cm = models.PositiveIntegerField(_("largura (cm)"), null=True, blank=True)
    height_cm = models.PositiveIntegerField(_("altura (cm)"), null=True, blank=True)
    # Empty: the product's NCM (a variant of another material may classify differently).
    ncm = models.CharField(
        _("NCM da variante"), max_length=10, blank=True, validators=[validate_ncm], help_text=_("Vazio: o do produto.")
    )
    # Identifiers for Google Merchant Center and marketplaces (feeds); empty when the merchant does not know them.
    gtin = models.CharField(
        _("GTIN (código de barras)"),
        max_length=14,
        blank=True,
        validators=[validate_gtin],
        help_text=_("EAN/UPC de 8, 12, 13 ou 14 dígitos, se houver."),
    )
    mpn = models.CharField(
        _("código do fabricante (MPN)"), max_length=70, blank=True, help_text=_("Opcional, para o feed do Google.")
    )

    class Meta:
        verbose_name = _("variante")
        verbose_name_plural = _("variantes")
        ordering = ["position", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(stock__gte=0),
                name="variant_stock_non_negative",
                violation_error_message=_("O estoque não pode ser negativo."),
            ),
            models.CheckConstraint(
                condition=Q(price__gte=0),
                name="variant_price_non_negative",
                violation_error_message=_("O preço não pode ser negativo."),
            ),
            models.CheckConstraint(
                condition=Q(compare_at_price__isnull=True) | Q(compare_at_price__gte=F("price")),
                name="variant_compare_at_not_below_price",
                violation_error_message=_('O preço "de" deve ser maior ou igual ao preço.'),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.product.title} — {self.title}" if self.title else self.product.title

    @property
    def display_title(self) -> str:
        return str(self)

    @property
    def in_stock(self) -> bool:
        return self.stock > 0

    @property
    def is_low_stock(self) -> bool:
        return 0 < self.stock <= self.low_stock_threshold

    @property
    def shipping_weight_grams(self) -> int:
        return self.weight_grams if self.weight_grams is not None else self.product.weight_grams

    @property
    def availability(self) -> str:
        """schema.org availability name: InStock, OutOfStock or PreOrder."""
        if self.stock > 0:
            return "InStock"
        return "PreOrder" if self.allow_backorder else "OutOfStock"


SYNONYM_MAX_TERMS = 12
SYNONYM_MAX_TERM_LENGTH = 60


def synonym_terms(words: str) -> list[str]:
    """The terms of a synonym row as typed ("camisa, camiseta" → ["camisa", "camiseta"]), blanks dropped."""
    return [term.strip() for term in (words or "").replace(";", ",").split(",") if term.strip()]


class SearchSynonym(models.Model):
    """Terms the catalog search treats as one ("camisa" finds "Camiseta"), typed by the merchant in the admin.

    Two-way: a search for any term of the row also finds the products named by the others. Read through a cached
    map (`shop.catalog.search.synonyms_map`), dropped after every save or delete.
    """

    words = models.CharField(
        _("termos equivalentes"),
        max_length=400,
        unique=True,
        help_text=_(
            "Separe por vírgula, ex.: camisa, camiseta, blusa. Quem buscar qualquer um dos termos encontra os "
            "produtos que têm os outros. Um termo pode ter mais de uma palavra (fone de ouvido)."
        ),
    )

    class Meta:
        verbose_name = _("sinônimo da busca")
        verbose_name_plural = _("sinônimos da busca")
        ordering = ["words"]

    def __str__(self) -> str:
        return ", ".join(synonym_terms(self.words))

    def clean(self) -> None:
        super().clean()
        terms = synonym_terms(self.words)
        if len(terms) > SYNONYM_MAX_TERMS:
            raise ValidationError({"words": _("Use no máximo %(n)d termos por linha.") % {"n": SYNONYM_MAX_TERMS}})
        for term in terms:
            if len(term) > SYNONYM_MAX_TERM_LENGTH:
                raise ValidationError(
                    {
                        "words": _("“%(term)s” é longo demais: até %(n)d caracteres por termo.")
                        % {"term": term[:20] + "…", "n": SYNONYM_MAX_TERM_LENGTH}
                    }
                )
            if not any(ch.isalnum() for ch in term):
                raise ValidationError({"words": _("“%(term)s” não tem letras nem números.") % {"term": term}})
        folded = {" ".join(term.casefold().split()) for term in terms}
        if len(folded) < 2:
            raise ValidationError(
                {"words": _("Informe pelo menos dois termos diferentes separados por vírgula, ex.: camisa, camiseta.")}
            )
        self.words = ", ".join(terms)


# =================================================================================================
# Checkout engine: shipping, pickup, coupons, checkouts (owner: checkout engine).
# =================================================================================================
