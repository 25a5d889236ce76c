from django.urls import path

from shop.storefront import views

app_name = "shop"

urlpatterns = [
    path("", views.home, name="home"),
    path("produtos/", views.product_list, name="product_list"),
    path("produtos/<slug:slug>/", views.product_detail, name="product_detail"),
    path("cep/<str:cep>", views.cep_address, name="cep"),
    path("lembretes/sair/<str:token>", views.reminder_optout_page, name="reminder_optout"),
]
