from django.urls import path

from fiscal import views

app_name = "fiscal"
urlpatterns = [
    path("webhooks/provider/", views.provider_webhook, name="webhook"),
    path("d/<str:token>/<str:kind>", views.document_file, name="file"),
]
