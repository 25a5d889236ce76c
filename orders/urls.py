from django.urls import include, path

from orders import views

app_name = "orders"

urlpatterns = [
    path("orders/<str:token>", views.order_permalink, name="permalink"),
    path("pedido", views.order_lookup, name="lookup"),
    path("api/v1/", include("orders.api_urls")),
]
