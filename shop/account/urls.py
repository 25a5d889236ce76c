""" "Minha conta" (app_name "account")."""

from django.urls import path

from shop.account import views

app_name = "account"

urlpatterns = [
    path("conta/", views.account_home, name="home"),
    path("conta/entrar/<str:token>", views.account_enter, name="enter"),
    path("conta/sair", views.account_leave, name="leave"),
    path("conta/meus-dados.<str:fmt>", views.account_data, name="data"),
    path("conta/excluir", views.account_delete, name="delete"),
]
