from django.urls import path

from shop.store import views as store_views

app_name = "store"

urlpatterns = [
    path("trocas-e-devolucoes", store_views.returns_policy, name="returns"),
    path("entrega", store_views.shipping_policy, name="shipping"),
]
