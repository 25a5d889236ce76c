"""Catalog: categories, products, product images and variants (with stock)."""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from shop.ids import new_public_id


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
    public_id = models.CharField(max_length=40, unique=True, default=new_product_id, editable=False)
    title = models.CharField(_("título"), max_length=200)
    slug = models.SlugField(_("slug"), max_length=220, unique=True)
    description = models.TextField(_("descrição"), blank=True)
    brand = models.CharField(_("marca"), max_length=120, blank=True)
    category = models.ForeignKey(
        Category, verbose_name=_("categoria"), on_delete=models.PROTECT, related_name="products"
    )
    # Physical goods need shipping or pickup; digital goods do not (BCP §9).
    requires_shipping = models.BooleanField(_("exige entrega"), default=True)
    weight_grams = models.PositiveIntegerField(_("peso (g)"), default=500)
    active = models.BooleanField(_("ativo"), default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("produto")
        verbose_name_plural = _("produtos")
        ordering = ["title"]
        indexes = [models.Index(fields=["active", "category"])]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("shop:product_detail", kwargs={"slug": self.slug})


class ProductImage(models.Model):
    product = models.ForeignKey(Product, on_delete=models.CASCADE, related_name="images")
    # A path under static/ (shipped with the project) or an absolute https URL.
    source = models.CharField(_("imagem (caminho estático ou URL)"), max_length=500)
    alt_text = models.CharField(_("texto alternativo"), max_length=200, blank=True)
    position = models.PositiveIntegerField(_("posição"), default=0)

    class Meta:
        verbose_name = _("imagem")
        verbose_name_plural = _("imagens")
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.source

    @property
    def url(self) -> str:
        if self.source.startswith(("http://", "https://", "/")):
            return self.source
        from django.templatetags.static import static

        return static(self.source)


class Variant(models.Model):
    product = models.ForeignKey(Product, on_delete=models.CASCADE, related_name="variants")
    # The SKU is the variant's public id: BCP checkout `item.id` (e.g. "SKU-CAFE-500G").
    sku = models.CharField(_("SKU"), max_length=64, unique=True)
    title = models.CharField(_("título da variante"), max_length=120, blank=True)
    # Option values such as {"tamanho": "M", "cor": "Preta"}.
    options = models.JSONField(_("opções"), default=dict, blank=True)
    price = models.BigIntegerField(_("preço (centavos)"))
    compare_at_price = models.BigIntegerField(_("preço de (centavos)"), null=True, blank=True)
    stock = models.IntegerField(_("estoque"), default=0)
    low_stock_threshold = models.PositiveIntegerField(_("alerta de estoque baixo"), default=3)
    # Accept orders beyond stock (encomenda): shown as PreOrder.
    allow_backorder = models.BooleanField(_("aceita encomenda"), default=False)
    active = models.BooleanField(_("ativa"), default=True)
    position = models.PositiveIntegerField(_("posição"), default=0)

    class Meta:
        verbose_name = _("variante")
        verbose_name_plural = _("variantes")
        ordering = ["position", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(stock__gte=0), name="variant_stock_non_negative"),
            models.CheckConstraint(condition=Q(price__gte=0), name="variant_price_non_negative"),
            models.CheckConstraint(
                condition=Q(compare_at_price__isnull=True) | Q(compare_at_price__gte=F("price")),
                name="variant_compare_at_not_below_price",
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
    def availability(self) -> str:
        """schema.org availability name: InStock, OutOfStock or PreOrder."""
        if self.stock > 0:
            return "InStock"
        return "PreOrder" if self.allow_backorder else "OutOfStock"


# =================================================================================================
# Checkout engine: shipping, pickup, coupons, checkouts (owner: checkout engine).
# =================================================================================================
