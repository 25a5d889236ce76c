from django.urls import path

from shop.storefront import discovery, views
from shop.subscriptions import views as subscription_views

app_name = "shop"

urlpatterns = [
    path("", views.home, name="home"),
    path("produtos/", views.product_list, name="product_list"),
    path("produtos/<slug:slug>/", views.product_detail, name="product_detail"),
    path("cep/<str:cep>", views.cep_address, name="cep"),
    path("lembretes/sair/<str:token>", views.reminder_optout_page, name="reminder_optout"),
    # Subscriptions (issue 38): subscribe to a plan; the subscriber's own page by its unguessable token.
    path("assinar/<str:plan_id>/", subscription_views.subscribe_page, name="subscribe"),
    path("assinaturas/<str:token>/", subscription_views.subscription_page, name="subscription_page"),
    path("sitemap.xml", discovery.sitemap, name="sitemap"),
    path("robots.txt", discovery.robots_txt, name="robots"),
    path("feeds/google-merchant.xml", discovery.merchant_feed, name="merchant_feed"),
    path("feeds/catalogo.json", discovery.catalog_feed, name="catalog_feed"),
]
