from django.urls import include, path

from orders import views

app_name = "orders"

urlpatterns = [
    path("orders/<str:token>", views.order_permalink, name="permalink"),
    path("orders/<str:token>/cancelar", views.order_cancel_by_buyer, name="buyer_cancel"),
    path("orders/<str:token>/devolver", views.order_return_by_buyer, name="buyer_return"),
    path("orders/<str:token>/endereco", views.order_destination_by_buyer, name="buyer_destination"),
    path("pedido", views.order_lookup, name="lookup"),
    path("api/v1/", include("orders.api_urls")),
]
