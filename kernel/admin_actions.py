"""A bulk action the staff member may not run, refused in words: the admins whose actions need a permission
(`@admin.action(permissions=[...])`) put `RefusedActionMessage` before their ModelAdmin base. And the base of the
admins that only look at rows services write (`ReadOnlyAdmin`)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected
from django.contrib.admin.utils import model_format_dict
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows are written by services only; the admin looks, never adds, edits or deletes."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return False


class RefusedActionMessage(admin.ModelAdmin):
    """Django drops an action the user has no permission for from the choices, so a POST of it (a crafted
    request, or a page left open while the permission was taken away) ends in "Nenhuma ação selecionada." or,
    when no action at all is left, in the list without a word. Say instead that this action needs a permission
    the user does not have and that nothing changed."""

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        refused = self._refused_action(request)
        if refused:
            message = _("Você não tem permissão para a ação “%(action)s”. Nada foi alterado.") % {"action": refused}
            self.message_user(request, message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())
        return super().changelist_view(request, extra_context)

    def _refused_action(self, request: HttpRequest) -> str:
        """The description of the posted action when it is one of this admin's and not allowed to the user."""
        if request.method != "POST" or "_save" in request.POST or not request.POST.get("action"):
            return ""
        try:  # the form whose button was pressed (the list has one above and one below), as Django picks it
            name = request.POST.getlist("action")[int(request.POST.get("index", 0))]
        except (ValueError, IndexError):
            return ""
        if not name or name in self.get_actions(request):
            return ""  # allowed (or nothing chosen): Django runs it or says what is missing
        # This admin's own actions (their permissions included) and the site's, as Django gathers them.
        declared: list[Any] = [*(self.actions or ()), *(site_name for site_name, _func in self.admin_site.actions)]
        for action in map(self.get_action, declared):
            if action is not None and action.name == name:
                return str(action.description) % model_format_dict(self.opts)
        return ""  # not an action of this list at all: Django's own answer


@admin.action(permissions=["delete"], description=gettext_lazy("Remover %(verbose_name_plural)s selecionadas"))
def delete_selected_feminine(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
    """Django's bulk delete, named in the feminine: its "Remover %(verbose_name_plural)s selecionados" read
    "Remover variantes selecionados". Same name as Django's action, so a ModelAdmin listing it replaces the site's."""
    return delete_selected(modeladmin, request, queryset)


delete_selected_feminine.__name__ = "delete_selected"
