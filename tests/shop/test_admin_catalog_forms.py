"""Catalog admin for people: photos uploaded with a thumbnail, prices typed in reais, options as rows,
Portuguese messages on the field for bad input, and nothing saved when the input is bad."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image

from kernel.money import format_brl, parse_brl
from shop.admin.catalog_forms import PhotoField
from shop.admin.store import StoreSettingsForm
from shop.models import Category, Product, ProductImage, SubscriptionPlan, Variant

pytestmark = pytest.mark.django_db


def _jpeg(colour: str = "red", size: tuple[int, int] = (900, 600)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="JPEG")
    return buffer.getvalue()


def _management(prefix: str, total: int, initial: int = 0) -> dict[str, str]:
    return {
        f"{prefix}-TOTAL_FORMS": str(total),
        f"{prefix}-INITIAL_FORMS": str(initial),
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }


def _variant(i: int, sku: str, price: str, compare: str = "", options: tuple[str, ...] = ()) -> dict[str, str]:
    data = {
        f"variants-{i}-sku": sku,
        f"variants-{i}-title": sku,
        f"variants-{i}-price": price,
        f"variants-{i}-compare_at_price": compare,
        f"variants-{i}-stock": "5",
        f"variants-{i}-low_stock_threshold": "3",
        f"variants-{i}-active": "on",
        f"variants-{i}-position": str(i),
    }
    for n in range(6):
        data[f"variants-{i}-options_{n}"] = options[n] if n < len(options) else ""
    return data


def _product_post(category: Category, variants: list[dict[str, str]], photos: list[dict[str, object]]) -> dict:
    data: dict[str, object] = {
        "title": "Camiseta Caju",
        "slug": "camiseta-caju",
        "category": str(category.pk),
        "brand": "Caju",
        "description": "Algodão.",
        "active": "on",
        "requires_shipping": "on",
        "weight_grams": "300",
        **_management("variants", len(variants)),
        **_management("images", len(photos)),
    }
    for variant in variants:
        data.update(variant)
    for i, photo in enumerate(photos):
        data.update({f"images-{i}-{key}": value for key, value in photo.items()})
    return data


@pytest.fixture
def category() -> Category:
    return Category.objects.create(name="Camisetas", slug="camisetas")


def test_parse_brl_accepts_what_people_type() -> None:
    typed = ["35,90", "35.90", "R$ 35,90", "R$\xa035,90", "1.234,56", "1.234", "10", "0,5"]
    assert [parse_brl(text) for text in typed] == [3590, 3590, 3590, 3590, 123456, 123400, 1000, 50]
    assert format_brl(123456) == "R$ 1.234,56"
    for bad, message in [
        ("-1", "O valor não pode ser negativo."),
        ("abc", "Valor inválido: use reais e centavos, por exemplo 35,90."),
        ("35,901", "Use no máximo duas casas decimais, por exemplo 35,90."),
        ("1.23.4", "Valor inválido: use reais e centavos, por exemplo 35,90."),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_brl(bad)


def test_product_with_two_photos_and_two_variants_priced_in_reais(admin_client: Client, category: Category) -> None:
    data = _product_post(
        category,
        [
            _variant(0, "CAJU-P", "35,90", "R$ 49,90", ("tamanho", "P", "cor", "Caju")),
            _variant(1, "CAJU-M", "35.90", "", ("tamanho", "M")),
        ],
        [
            {
                "image": SimpleUploadedFile("frente.jpg", _jpeg("red"), "image/jpeg"),
                "alt_text": "Frente",
                "position": 0,
            },
            {
                "image": SimpleUploadedFile("costas.jpg", _jpeg("blue"), "image/jpeg"),
                "alt_text": "Costas",
                "position": 1,
                "is_main": "on",
            },
        ],
    )
    response = admin_client.post("/admin/shop/product/add/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    product = Product.objects.get(slug="camiseta-caju")
    variants = list(product.variants.order_by("sku").values_list("sku", "price", "compare_at_price", "options"))
    assert variants == [
        ("CAJU-M", 3590, None, {"tamanho": "M"}),
        ("CAJU-P", 3590, 4990, {"tamanho": "P", "cor": "Caju"}),
    ]
    photos = list(product.images.all())
    # the photo marked main comes first on every surface
    assert [(p.alt_text, p.is_main) for p in photos] == [("Costas", True), ("Frente", False)]
    for photo in photos:
        assert photo.image.name.startswith(f"produtos/{product.public_id}/")
        assert photo.thumbnail and photo.thumbnail_url != photo.url
        with Image.open(photo.image.storage.path(photo.thumbnail)) as thumb:
            assert thumb.size == (480, 480)
    # the change page shows the prices as typed in reais and the options as rows
    html = admin_client.get(f"/admin/shop/product/{product.pk}/change/").content.decode()
    assert 'name="variants-0-price" value="35,90"' in html
    assert 'value="49,90"' in html
    # (jsonb keeps keys shortest first: "cor" before "tamanho")
    assert 'name="variants-0-options_0" value="cor"' in html
    assert 'name="variants-0-options_2" value="tamanho"' in html
    assert 'name="variants-0-options_3" value="P"' in html
    # and the media are served (development / make run)
    assert admin_client.get(photos[0].url).status_code == 200


def test_first_photo_becomes_main_when_none_is_marked(admin_client: Client, category: Category) -> None:
    data = _product_post(
        category,
        [_variant(0, "CAJU-U", "10")],
        [{"image": SimpleUploadedFile("a.jpg", _jpeg(), "image/jpeg"), "alt_text": "A", "position": 0}],
    )
    assert admin_client.post("/admin/shop/product/add/", data).status_code == 302
    assert list(ProductImage.objects.values_list("alt_text", "is_main")) == [("A", True)]


@pytest.mark.parametrize(
    ("variant", "photos", "field_message"),
    [
        (_variant(0, "X-1", "-5,00"), [], "O valor não pode ser negativo."),
        (_variant(0, "X-1", "abc"), [], "Valor inválido: use reais e centavos, por exemplo 35,90."),
        (_variant(0, "X-1", "35,90", "20,00"), [], "O preço “de” deve ser maior ou igual ao preço."),
        (_variant(0, "X-1", "35,90", "", ("tamanho",)), [], "Linha 1: informe o nome e o valor da opção."),
        (_variant(0, "X-1", "35,90", "", ("cor", "A", "Cor", "B")), [], "A opção “Cor” aparece duas vezes."),
        ({**_variant(0, "X-1", "35,90"), "variants-0-stock": "-2"}, [], "O estoque não pode ser negativo."),
        (
            _variant(0, "X-1", "35,90"),
            [{"image": SimpleUploadedFile("x.jpg", b"not an image", "image/jpeg"), "position": 0}],
            "Faça upload de uma imagem válida.",
        ),
        (_variant(0, "X-1", "35,90"), [{"alt_text": "sem foto", "position": 0}], "Envie uma foto"),
    ],
)
def test_bad_input_is_refused_in_portuguese_and_nothing_saved(
    admin_client: Client, category: Category, variant: dict, photos: list, field_message: str
) -> None:
    response = admin_client.post("/admin/shop/product/add/", _product_post(category, [variant], photos))
    assert response.status_code == 200
    html = response.content.decode()
    assert field_message in html
    assert "violada" not in html and "constraint" not in html.lower()
    assert (Product.objects.count(), Variant.objects.count(), ProductImage.objects.count()) == (0, 0, 0)


def test_two_main_photos_are_refused(admin_client: Client, category: Category) -> None:
    photos = [
        {"image": SimpleUploadedFile(f"{n}.jpg", _jpeg(), "image/jpeg"), "position": n, "is_main": "on"}
        for n in range(2)
    ]
    response = admin_client.post("/admin/shop/product/add/", _product_post(category, [_variant(0, "Y", "1")], photos))
    assert response.status_code == 200
    assert "Marque só uma foto como principal." in response.content.decode()
    assert Product.objects.count() == 0


def test_moving_the_main_mark_to_another_photo(admin_client: Client, category: Category) -> None:
    product = Product.objects.create(title="P", slug="p", category=category)
    first = ProductImage.objects.create(product=product, source="shop/demo/a.svg", is_main=True, position=0)
    second = ProductImage.objects.create(product=product, source="shop/demo/b.svg", position=1)
    data = {
        "title": "P",
        "slug": "p",
        "category": str(category.pk),
        "weight_grams": "500",
        "active": "on",
        **_management("variants", 0),
        **_management("images", 2, initial=2),
        "images-0-id": str(first.pk),
        "images-0-product": str(product.pk),
        "images-0-source": first.source,
        "images-0-position": "0",
        "images-1-id": str(second.pk),
        "images-1-product": str(product.pk),
        "images-1-source": second.source,
        "images-1-position": "1",
        "images-1-is_main": "on",
    }
    response = admin_client.post(f"/admin/shop/product/{product.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert [image.pk for image in product.images.all()] == [second.pk, first.pk]
    # an old row's static path still gives a working URL
    assert product.images.get(pk=first.pk).url == "/static/shop/demo/a.svg"


def test_variants_without_a_title_are_named_by_their_options(admin_client: Client, category: Category) -> None:
    """Walk-through: a merchant filled size options but no variant title, and the cart (and order) showed two
    identical "Camiseta Caju" lines; the option values now become the title, a typed title still wins."""
    small = {**_variant(0, "CAJU-300", "7,50", "", ("Tamanho", "300 ml")), "variants-0-title": ""}
    large = {**_variant(1, "CAJU-1L", "12,90", "", ("Tamanho", "1 L", "Sabor", "Limão")), "variants-1-title": ""}
    named = {**_variant(2, "CAJU-2L", "19,90", "", ("Tamanho", "2 L")), "variants-2-title": "Família"}
    response = admin_client.post("/admin/shop/product/add/", _product_post(category, [small, large, named], []))
    assert response.status_code == 302, response.content.decode()[:2000]
    titles = dict(Variant.objects.values_list("sku", "title"))
    assert titles == {"CAJU-300": "300 ml", "CAJU-1L": "1 L / Limão", "CAJU-2L": "Família"}
    assert Variant.objects.get(sku="CAJU-300").display_title == "Camiseta Caju — 300 ml"


def test_a_file_that_is_not_an_image_gets_one_message(admin_client: Client, category: Category) -> None:
    """Walk-through: the photo field said both "not an image" and "send a photo" for one bad file."""
    photos = [{"image": SimpleUploadedFile("x.jpg", b"not an image", "image/jpeg"), "position": 0}]
    response = admin_client.post("/admin/shop/product/add/", _product_post(category, [_variant(0, "X-1", "1")], photos))
    html = response.content.decode()
    assert "Faça upload de uma imagem válida." in html
    assert "Envie uma foto" not in html


@pytest.mark.parametrize("size", [(1500, 1000), (3000, 1000)], ids=["over Pillow's limit", "over twice its limit"])
def test_a_photo_with_too_many_pixels_says_so(
    admin_client: Client, category: Category, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    """QA walk: a 20000 × 20000 PNG was refused as "not an image or corrupted". Pillow's limit is lowered so the
    test's photos stay small: 1.5 MP is over it (Pillow warns), 3 MP over twice it (Pillow refuses to open)."""
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1_000_000)
    photos = [{"image": SimpleUploadedFile("big.jpg", _jpeg(size=size), "image/jpeg"), "position": 0}]
    response = admin_client.post("/admin/shop/product/add/", _product_post(category, [_variant(0, "X-1", "1")], photos))
    html = response.content.decode()
    assert "A imagem tem pixels demais (mais de 1 megapixels): reduza a resolução e envie de novo." in html
    assert "Faça upload de uma imagem válida." not in html
    assert not Product.objects.exists()


def test_a_photo_within_the_pixel_limit_is_kept(
    admin_client: Client, category: Category, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1_000_000)
    photos = [{"image": SimpleUploadedFile("ok.jpg", _jpeg(size=(1000, 1000)), "image/jpeg"), "position": 0}]
    response = admin_client.post("/admin/shop/product/add/", _product_post(category, [_variant(0, "X-1", "1")], photos))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert ProductImage.objects.count() == 1


def test_the_store_logo_has_the_same_pixel_limit() -> None:
    assert isinstance(StoreSettingsForm().fields["logo"], PhotoField)


def test_a_product_saved_without_ncm_warns_that_its_nfe_will_be_blocked(
    admin_client: Client, category: Category, settings
) -> None:
    settings.FISCAL_ISSUE_ON = "paid"
    data = _product_post(category, [_variant(0, "CAJU-N", "10")], [])
    response = admin_client.post("/admin/shop/product/add/", data, follow=True)
    page = response.content.decode()
    assert "está sem NCM: a NF-e dos pedidos com este produto não será emitida" in page
    # with the NCM filled (or NF-e issuing off) nothing is said
    data = {**_product_post(category, [_variant(0, "CAJU-M", "10")], []), "slug": "caju-m", "ncm": "0901.21.00"}
    response = admin_client.post("/admin/shop/product/add/", data, follow=True)
    assert response.redirect_chain and Product.objects.filter(slug="caju-m").exists()  # saved
    assert "está sem NCM" not in response.content.decode()


SKU_TWIN = "Já existe o SKU “QA-DUP-1”: SKUs iguais a não ser por maiúsculas e minúsculas se confundem."


def test_two_variants_whose_skus_differ_only_in_case_are_refused(admin_client: Client, category: Category) -> None:
    """QA walk: "QA-DUP-1" and "qa-dup-1" were accepted in one product."""
    variants = [_variant(0, "QA-DUP-1", "10"), _variant(1, "qa-dup-1", "10")]
    response = admin_client.post("/admin/shop/product/add/", _product_post(category, variants, []))
    assert response.status_code == 200
    assert SKU_TWIN in response.content.decode()
    assert not Variant.objects.exists()


def test_a_sku_taken_in_other_letters_by_another_product_is_refused(admin_client: Client, category: Category) -> None:
    other = Product.objects.create(title="Outro", slug="outro", category=category)
    Variant.objects.create(product=other, sku="QA-DUP-1", title="Único", price=1000, stock=1)
    response = admin_client.post(
        "/admin/shop/product/add/", _product_post(category, [_variant(0, "qa-dup-1", "10")], [])
    )
    assert response.status_code == 200
    assert SKU_TWIN in response.content.decode()
    assert list(Variant.objects.values_list("sku", flat=True)) == ["QA-DUP-1"]


def test_a_sku_another_product_has_is_refused_naming_that_product(admin_client: Client, category: Category) -> None:
    """QA walk: a product copied from another kept its SKU, refused as "Variante com este SKU já existe."."""
    other = Product.objects.create(title="Café especial 500 g", slug="outro", category=category)
    Variant.objects.create(product=other, sku="SKU-CAFE-500G", title="Único", price=1000, stock=1)
    response = admin_client.post(
        "/admin/shop/product/add/", _product_post(category, [_variant(0, "SKU-CAFE-500G", "10")], [])
    )
    assert response.status_code == 200
    assert (
        "O SKU “SKU-CAFE-500G” já é do produto “Café especial 500 g”: cada variante precisa de um SKU próprio."
        in response.content.decode()
    )
    assert Variant.objects.count() == 1


def test_a_product_keeps_its_own_sku_when_saved_again(admin_client: Client, category: Category) -> None:
    assert (
        admin_client.post(
            "/admin/shop/product/add/", _product_post(category, [_variant(0, "QA-DUP-1", "10")], [])
        ).status_code
        == 302
    )
    product, variant = Product.objects.get(), Variant.objects.get()
    data = _product_post(category, [_variant(0, "QA-DUP-1", "12")], [])
    data.update(
        {"variants-INITIAL_FORMS": "1", "variants-0-id": str(variant.pk), "variants-0-product": str(product.pk)}
    )
    response = admin_client.post(f"/admin/shop/product/{product.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert Variant.objects.get().price == 1200


def test_a_category_named_like_another_at_the_same_level_is_refused(admin_client: Client, category: Category) -> None:
    """QA walk: two "Cafés" showed twice in the storefront's menu."""
    Category.objects.create(name="Cafés", slug="cafes")
    response = admin_client.post("/admin/shop/category/add/", {"name": " cafés ", "slug": "cafes-2", "position": "0"})
    assert response.status_code == 200
    assert (
        "Já existe a categoria “cafés” neste nível: use outro nome ou edite a que existe." in response.content.decode()
    )
    cafes = Category.objects.get(name="Cafés")
    # the same name under another parent is another category ("Camisetas › Cafés")
    response = admin_client.post(
        "/admin/shop/category/add/",
        {"name": "Cafés", "slug": "camisetas-cafes", "parent": str(category.pk), "position": "0"},
    )
    assert response.status_code == 302
    # and a category saved again keeps its own name
    response = admin_client.post(
        f"/admin/shop/category/{cafes.pk}/change/", {"name": "Cafés", "slug": "cafes", "position": "1"}
    )
    assert response.status_code == 302


def test_a_new_store_is_told_a_product_needs_a_category_and_photos_must_be_chosen_again(admin_client: Client) -> None:
    """Merchant walk: a new store's first product failed on "Este campo é obrigatório." beside an empty category
    list, and the photos chosen were gone from the page shown again, without a word."""
    page = admin_client.get("/admin/shop/product/add/").content.decode()
    link = '<a href="/admin/shop/category/add/" target="_blank" rel="noopener">crie a primeira categoria</a>'
    assert link in page
    data = _product_post(
        Category(pk=None),
        [_variant(0, "CAJU-P", "35,90")],
        [{"image": SimpleUploadedFile("frente.jpg", _jpeg(), "image/jpeg"), "alt_text": "Frente", "position": 0}],
    )
    data["category"] = ""
    response = admin_client.post("/admin/shop/product/add/", data)
    html = response.content.decode()
    assert response.status_code == 200 and not Product.objects.exists()
    assert "Todo produto fica numa categoria e a loja ainda não tem nenhuma: " + link in html
    assert "As fotos escolhidas não foram enviadas: corrija os erros abaixo e escolha as fotos de novo." in html
    # with categories, the message is short; without photos chosen, nothing is said of photos
    category = Category.objects.create(name="Camisetas", slug="camisetas")
    response = admin_client.post("/admin/shop/product/add/", {**_product_post(category, [], []), "category": ""})
    html = response.content.decode()
    assert "Escolha a categoria do produto." in html
    assert "crie a primeira categoria" not in html and "As fotos escolhidas" not in html


def test_a_product_that_cannot_be_removed_says_to_deactivate_it(admin_client: Client, category: Category) -> None:
    """QA walk: removing a discontinued product sold by subscription (or already in a checkout) listed the rows
    keeping it and no way out."""
    product = Product.objects.create(title="Café de assinatura", slug="cafe-assinatura", category=category)
    variant = Variant.objects.create(product=product, sku="CAFE-ASS", title="Único", price=3990, stock=5)
    SubscriptionPlan.objects.create(variant=variant, cycle="monthly", price=3990)
    page = admin_client.get(f"/admin/shop/product/{product.pk}/delete/").content.decode()
    assert "Para tirá-lo da loja, desative-o: desmarque “Ativo” no produto e salve" in page
    assert Product.objects.filter(pk=product.pk).exists()
