"""The admin speaks Portuguese: our header, Django's own strings missing from its pt-BR catalog, field
labels of every model; English still comes from locale/en."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.utils import translation
from django.utils.html import strip_tags
from django.utils.translation import gettext

from fiscal.models import FiscalDocument
from orders.services import order_place_from_checkout
from payments.card.models import CardPayment
from shop.models import Cart, Category, Checkout, Product, StoreSettings, Variant
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db


def test_django_strings_missing_in_its_pt_br_catalog_are_provided() -> None:
    with translation.override("pt-br"):
        assert gettext("Filter by %(field_name)s") == "Filtrar por %(field_name)s"
        assert gettext("- Select an option -") == "- Selecione uma opção -"
        assert gettext("Home") == "Início"


def test_admin_pages_in_portuguese(admin_client: Client) -> None:
    order_place_from_checkout(checkout=make_checkout())
    home = admin_client.get("/admin/").content.decode()
    assert '<div id="site-name"><a href="/admin/">Loja Exemplo — administração</a></div>' in home
    assert "Administração do Django" not in home
    orders = admin_client.get("/admin/orders/order/").content.decode()
    assert "Filtrar por data" in orders and "Filter by" not in orders
    assert "Início" in orders
    category = Category.objects.create(name="C", slug="c")
    product = Product.objects.create(title="P", slug="p", category=category)
    page = admin_client.get(f"/admin/shop/product/{product.pk}/change/").content.decode()
    for label in ("ID público", "Criado em", "Atualizado em"):
        assert label in page
    for english in ("Public id", "Created at", "Updated at"):
        assert english not in page
    charges = admin_client.get("/admin/payments/pixcharge/").content.decode()
    assert "Status reason" not in charges and "Expires at" not in charges
    # QA walk (a new merchant's first category): the page said "Slug:", the product's page "Endereço (slug):"
    category_page = admin_client.get("/admin/shop/category/add/").content.decode()
    assert '<label class="required" for="id_slug">Endereço (slug):</label>' in category_page
    assert "O fim do endereço da categoria na loja, ex.: /produtos/?category=camisetas." in category_page
    assert ">Slug:<" not in category_page
    # QA walk ("Carrinhos abandonados hoje" → a checkout): every field of the checkout page was labelled in English
    checkout = Checkout.objects.create(buyer_email="ana@example.com.br", ship_cep="01310-100")
    checkout_page = admin_client.get(f"/admin/shop/checkout/{checkout.pk}/change/").content.decode()
    for label in ("E-mail do comprador:", "Situação:", "Pedido:", "Pago em:", "CEP:", "Expira em:", "Cancelado em:"):
        assert f"<label>{label}</label>" in checkout_page
    for english in ("Buyer email", "Public id", "Order id", "Paid at", "Ship cep", "Expires at", "Canceled at"):
        assert english not in checkout_page


def test_english_admin_uses_locale_en(admin_client: Client) -> None:
    admin_client.cookies["django_language"] = "en"
    home = admin_client.get("/admin/", headers={"accept-language": "en"}).content.decode()
    assert "Loja Exemplo — administration" in home
    assert "Orders to ship" in home


def _labels(choices) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(label) for _value, label in choices]


def test_cart_status_and_nfe_environment_choices_are_capitalized_in_both_languages(admin_client: Client) -> None:
    """Walk-through: the NF-e list's filter offered "homologação" / "produção" and a cart's status read "ativo" /
    "cancelado", where every other choice in the admin starts with a capital."""
    page = admin_client.get("/admin/fiscal/fiscaldocument/").content.decode()
    assert ">Homologação</a>" in page and ">Produção</a>" in page
    assert ">homologação</a>" not in page and ">produção</a>" not in page
    store = admin_client.get("/admin/shop/storesettings/", follow=True).content.decode()
    assert ">Homologação (testes, sem valor fiscal)</option>" in store and ">Produção</option>" in store
    with translation.override("pt-br"):
        assert _labels(Cart._meta.get_field("status").choices) == ["Ativo", "Cancelado"]
        assert _labels(FiscalDocument.Environment.choices) == ["Homologação", "Produção"]
    with translation.override("en"):
        assert _labels(Cart._meta.get_field("status").choices) == ["Active", "Canceled"]
        assert _labels(FiscalDocument.Environment.choices) == ["Test environment (homologação)", "Production"]
        assert _labels(StoreSettings._meta.get_field("fiscal_environment").choices) == [
            "Homologação (tests, no fiscal value)",
            "Production",
        ]


OUR_APPS = ("bcp_app", "carriers", "fiscal", "kernel", "orders", "payments", "shop")


@pytest.mark.parametrize("language", ["pt-br", "en"])
def test_every_choice_label_of_our_models_starts_with_a_capital(language: str) -> None:
    """Walk-through: NF-e "pendente" / "autorizada", NF-e jobs "emitir", boletos "pago", subscriptions "ativa",
    shipping labels "comprada", … where every other choice in the admin starts with a capital (and some card and
    Pix labels were Portuguese even in English). A label read inside a sentence uses its own lower-case words."""
    lower = []
    with translation.override(language):
        for model in apps.get_models():
            if model._meta.app_label not in OUR_APPS:
                continue
            for field in model._meta.concrete_fields:
                for value, label in field.flatchoices:
                    text = str(label)
                    if text[:1].islower():
                        lower.append(f"{model._meta.label}.{field.name} {value!r}: {text}")
    assert lower == []
    with translation.override(language):
        assert FiscalDocument.Status.AUTHORIZED.label == {"pt-br": "Autorizada", "en": "Authorized"}[language]
        assert str(CardPayment.Status.PENDING.label) == {"pt-br": "Em análise", "en": "Under review"}[language]


def test_login_lockout_models_and_the_date_widget_note_in_portuguese(admin_client: Client) -> None:
    """Walk-through: the admin home listed django-axes' "Access attempts", "Access failures" and "Access logs"
    (no pt-BR catalog), and the coupon dates said "Note: Enter times in the America/Sao_Paulo timezone"."""
    home = admin_client.get("/admin/").content.decode()
    for portuguese in ("Tentativas de acesso", "Falhas de acesso", "Registros de acesso"):
        assert portuguese in home
    for english in ("Access attempts", "Access failures", "Access logs"):
        assert english not in home
    catalog = admin_client.get("/admin/jsi18n/").content.decode()
    assert "informe os hor\\u00e1rios no %(timezone)s." in catalog


def test_the_date_widget_note_names_the_zone_in_words(admin_client: Client) -> None:
    """Merchant walk: the coupon dates said "informe os horários no fuso America/Sao_Paulo"; the note names the
    zone from the body's data-admin-server-timezone, which the page sets to the zone's human name."""
    page = admin_client.get("/admin/shop/coupon/add/").content.decode()
    assert 'document.body.dataset.adminServerTimezone = "horário de Brasília";' in page
    catalog = admin_client.get("/admin/jsi18n/").content.decode()
    assert "Aten\\u00e7\\u00e3o: informe os hor\\u00e1rios no %(timezone)s. (Seu computador" in catalog
    assert "no fuso" not in catalog
    admin_client.cookies["django_language"] = "en"
    english = admin_client.get("/admin/shop/coupon/add/", headers={"accept-language": "en"}).content.decode()
    assert 'document.body.dataset.adminServerTimezone = "Brasília time";' in english
    catalog = admin_client.get("/admin/jsi18n/", headers={"accept-language": "en"}).content.decode()
    assert "Note: Enter times in %(timezone)s. (You are %(offset)s hour ahead.)" in catalog


def test_the_admin_calendar_writes_month_names_in_lower_case(admin_client: Client) -> None:
    """Portuguese does not capitalise month names ("janeiro", "fev"); Django's pt-BR djangojs catalog does, so
    the admin's date picker showed "Janeiro 2026" (the project's djangojs catalog overrides it)."""
    catalog = admin_client.get("/admin/jsi18n/").content.decode()
    assert '"January": "janeiro"' in catalog and '"December": "dezembro"' in catalog
    assert '"Janeiro"' not in catalog
    assert '"abbrev. month February\\u0004Feb": "fev"' in catalog
    assert '"Previous (%(month)s %(year)s)": "Anterior (%(month)s de %(year)s)"' in catalog


def test_save_messages_do_not_put_o_before_every_model_name(admin_client: Client) -> None:
    """Walk-through: "O categoria “Chás” foi adicionado com sucesso", "O dados da loja … foi alterado"."""
    response = admin_client.post(
        "/admin/shop/category/add/", {"name": "Chás", "slug": "chas", "position": "0"}, follow=True
    )
    html = strip_tags(response.content.decode())  # the name is a link to the row
    assert "Salvo com sucesso: categoria “Chás”." in html
    assert "O categoria" not in html and "foi adicionado" not in html
    category = Category.objects.get(slug="chas")
    response = admin_client.post(
        f"/admin/shop/category/{category.pk}/change/",
        {"name": "Chás e Infusões", "slug": "chas", "position": "0", "_continue": "1"},
        follow=True,
    )
    assert "Alterações salvas: categoria “Chás e Infusões”. Você pode continuar editando abaixo." in strip_tags(
        response.content.decode()
    )


def test_admin_pages_carry_the_shop_icon(client: Client, admin_client: Client) -> None:
    """Walk-through: the admin had no icon link, so the browser asked for /favicon.ico (404) on every page."""
    icon = '<link rel="icon" href="/static/shop/favicon.svg" type="image/svg+xml">'
    assert icon in client.get("/admin/login/").content.decode()
    page = admin_client.get("/admin/shop/coupon/add/").content.decode()
    assert icon in page and "admin/js/calendar.js" in page  # the form's own head scripts are still there


def test_inline_add_links_without_outro_a(admin_client: Client) -> None:
    """Walk-through: the product page offered "Adicionar outro(a) Variante" and "Adicionar outro(a) Foto"."""
    page = admin_client.get("/admin/shop/product/add/").content.decode()
    assert "Adicionar Variante" in page and "Adicionar Foto" in page
    assert "Adicionar outro(a)" not in page


def test_group_and_user_pages_name_permissions_in_the_admins_language(admin_client: Client) -> None:
    """QA walk of a new shop: the group page listed Django's stored English ("Can change pedido") beside
    "Pode reembolsar e cancelar pedidos"; the English admin reads English, our own permissions included."""
    from django.contrib.auth.models import Group, User

    from shop.management.commands.create_staff_groups import Command

    Command().handle()
    financeiro = Group.objects.get(name="Financeiro")
    page = admin_client.get(f"/admin/auth/group/{financeiro.pk}/change/").content.decode()
    assert "Pedidos | pedido | Pode modificar pedido" in page
    assert "Pedidos | pedido | Pode ver faturamento" in page
    assert "Loja | produto | Pode remover produto" in page  # the list to choose from, too
    assert "Can change" not in page and "Can view" not in page and "Can add" not in page
    staff = User.objects.create_user("fabi", password="x", is_staff=True)
    assert "Pode adicionar cupom" in admin_client.get(f"/admin/auth/user/{staff.pk}/change/").content.decode()
    admin_client.cookies["django_language"] = "en"
    english = admin_client.get(
        f"/admin/auth/group/{financeiro.pk}/change/", headers={"accept-language": "en"}
    ).content.decode()
    assert "Can change order" in english and "Can see revenue" in english


# Every registered model's plural, by gender: a new model must be named here (and, when feminine, in
# shop.admin_site.FEMININE_MODELS) so its bulk delete agrees with it.
FEMININE_PLURALS = {
    "axes.AccessAttempt", "axes.AccessFailureLog", "orders.ReturnRequest", "payments.PixCharge", "payments.PixRefund",
    "payments.BoletoRefund", "payments.PixInfraction", "payments.PixRecurringCharge", "fiscal.FiscalDocument",
    "fiscal.FiscalReturnNote", "fiscal.FiscalJob", "fiscal.FiscalWebhook", "shop.Category", "shop.Variant",
    "shop.PackagingBox", "shop.Subscription", "bcp_app.Platform", "bcp_app.A2ATask",
}  # fmt: skip
MASCULINE_PLURALS = {
    "authtoken.TokenProxy", "axes.AccessLog", "orders.Order", "payments.PixPayment", "payments.PixWebhookEvent",
    "payments.CardPayment", "payments.CardRefund", "payments.BoletoPayment", "payments.CardWebhookEvent",
    "payments.PaymentEvent", "payments.PixRecurringChargeWebhookEvent", "payments.PixRecurrenceWebhookEvent",
    "shop.ShippingMethod", "shop.PickupLocation", "shop.Coupon", "shop.CouponRedemption", "shop.Checkout",
    "shop.Product", "shop.SearchSynonym", "shop.CheckoutReminder", "shop.BoletoNotice", "auth.Group", "auth.User",
    "shop.StoreSettings", "shop.SubscriptionPlan", "shop.SubscriptionCycle", "bcp_app.WebhookDelivery",
    "bcp_app.IdempotencyRecord", "bcp_app.Ap2Mandate",
}  # fmt: skip


def test_bulk_delete_agrees_with_the_gender_of_the_plural(admin_user: User, rf: RequestFactory) -> None:
    """Merchant walk: "Remover variantes selecionados", "Remover categorias selecionados"."""
    assert {model._meta.label for model in admin.site._registry} == FEMININE_PLURALS | MASCULINE_PLURALS
    assert not FEMININE_PLURALS & MASCULINE_PLURALS
    request = rf.get("/admin/")
    request.user = admin_user
    with translation.override("pt-br"):
        for model, model_admin in admin.site._registry.items():
            label = dict(model_admin.get_action_choices(request)).get("delete_selected")
            if label is None:
                continue  # this list deletes nothing in bulk
            plural = model._meta.verbose_name_plural
            ending = "selecionadas" if model._meta.label in FEMININE_PLURALS else "selecionados"
            assert label == f"Remover {plural} selecionados".replace("selecionados", ending), model._meta.label
        variants = dict(admin.site._registry[Variant].get_action_choices(request))["delete_selected"]
        assert variants == "Remover variantes selecionadas"
        products = dict(admin.site._registry[Product].get_action_choices(request))["delete_selected"]
        assert products == "Remover produtos selecionados"
    with translation.override("en"):
        assert dict(admin.site._registry[Category].get_action_choices(request))["delete_selected"] == (
            "Delete selected categories"
        )


def test_bulk_delete_of_feminine_models_still_deletes(admin_client: Client) -> None:
    """And its confirmation and result said "remover o categorias selecionado", "Removido 2 categorias com sucesso"."""
    chosen = [Category.objects.create(name=n, slug=n.lower()).pk for n in ("Chás", "Cafés")]
    listing = admin_client.get("/admin/shop/category/").content.decode()
    assert '<option value="delete_selected">Remover categorias selecionadas</option>' in listing
    form = {"action": "delete_selected", "_selected_action": chosen}
    confirm = admin_client.post("/admin/shop/category/", form).content.decode()
    assert "Tem certeza de que deseja remover a seleção (categorias)?" in confirm
    assert "remover o categorias selecionado" not in confirm
    done = admin_client.post("/admin/shop/category/", {**form, "post": "yes"}, follow=True).content.decode()
    assert "Remoção concluída: 2 categorias." in done and "Removido" not in done
    assert not Category.objects.filter(pk__in=chosen).exists()
