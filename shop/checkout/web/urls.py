"""Storefront cart and checkout pages (app_name "checkout"). Literal paths are part of the contracts."""

from django.urls import path, re_path

from shop.checkout.web import boleto_page, pix_page, views

app_name = "checkout"

urlpatterns = [
    path("carrinho/", views.cart_detail, name="cart"),
    path("carrinho/adicionar", views.cart_add, name="cart_add"),
    path("carrinho/alterar", views.cart_change, name="cart_change"),
    path("carrinho/cupom", views.cart_coupon, name="cart_coupon"),
    re_path(r"^carrinho/(?P<cart_id>cart_[0-9a-f]{24})$", views.cart_open, name="cart_open"),
    path("checkout/", views.checkout_start, name="start"),
    path("checkout/<str:checkout_id>", views.checkout_resume, name="resume"),
    path("checkout/<str:checkout_id>/email", views.checkout_email, name="email"),
    path("checkout/<str:checkout_id>/pix", pix_page.pix_page, name="pix"),
    path("checkout/<str:checkout_id>/pix/novo", pix_page.pix_regenerate, name="pix_new"),
    path("checkout/<str:checkout_id>/pix/trocar", pix_page.pix_withdraw, name="pix_withdraw"),
    path("checkout/<str:checkout_id>/cartao", views.card_pending, name="card_pending"),
    path("checkout/<str:checkout_id>/boleto", boleto_page.boleto_page, name="boleto"),
    path("checkout/<str:checkout_id>/status", pix_page.checkout_status, name="status"),
    path("termos", views.terms, name="terms"),
    path("privacidade", views.privacy, name="privacy"),
]
