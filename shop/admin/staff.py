"""Staff groups and users: the permission lists read in the admin's language.

Django stores a default permission's name once, in English ("Can view pedido", written by `create_permissions` at
migrate time), and never translates it: a merchant putting together a group read "Can change pedido" beside
"Pode reembolsar e cancelar pedidos" (QA walk of a new shop). Only the label shown changes; the rows stay Django's.
"""

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, Permission, User
from django.db.models import ManyToManyField
from django.forms import ModelMultipleChoiceField
from django.http import HttpRequest
from django.utils.translation import gettext as _

_ACTIONS = ("add", "change", "delete", "view")


def _action_text(action: str) -> str:
    # Words of Django's own pt-BR admin buttons (Adicionar, Modificar, Remover, Visualizar) and of our "Pode ver …".
    return {
        "add": _("Pode adicionar %(model)s"),
        "change": _("Pode modificar %(model)s"),
        "delete": _("Pode remover %(model)s"),
        "view": _("Pode ver %(model)s"),
    }[action]


def permission_label(permission: Permission) -> str:
    """ "Pedidos | pedido | Pode ver pedido" for Django's default permissions; our own keep their (translated) name."""
    name = permission.name
    action, _sep, model_name = permission.codename.partition("_")
    model = permission.content_type.model_class()
    if action in _ACTIONS and model is not None and model_name == model._meta.model_name:
        name = _action_text(action) % {"model": model._meta.verbose_name}
    else:
        name = _(name)
    return f"{permission.content_type} | {name}"


def _with_labels(formfield: Any, db_field: ManyToManyField) -> Any:
    if db_field.name in {"permissions", "user_permissions"} and isinstance(formfield, ModelMultipleChoiceField):
        formfield.label_from_instance = permission_label
    return formfield


class StaffGroupAdmin(GroupAdmin):
    def formfield_for_manytomany(self, db_field: ManyToManyField, request: HttpRequest, **kwargs: Any) -> Any:
        return _with_labels(super().formfield_for_manytomany(db_field, request, **kwargs), db_field)


class StaffUserAdmin(UserAdmin):
    def formfield_for_manytomany(self, db_field: ManyToManyField, request: HttpRequest, **kwargs: Any) -> Any:
        return _with_labels(super().formfield_for_manytomany(db_field, request, **kwargs), db_field)


admin.site.unregister(Group)
admin.site.register(Group, StaffGroupAdmin)
admin.site.unregister(User)
admin.site.register(User, StaffUserAdmin)
