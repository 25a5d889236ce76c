"""`{% translate %}` for the buyer e-mails' templates (`{% load i18n orders_i18n %}`: the later load wins the name).

Django's tag turns a literal into a lazy translation, then localizes, casts and escapes it on every render: about
67 function calls per tag, the 12 tags of an order e-mail a seventh of its rendering (issue 34). A literal with no
filter, context, `noop` or `as` is translated directly here, to what Django's tag writes: the text translated in
the active language, safe (a template literal is), its doubled percent signs restored. Any other use is Django's own
node. `makemessages` finds these tags as before (it reads the template text, not the library).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.template.base import Parser, Token, Variable
from django.templatetags.i18n import TranslateNode, do_translate
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

register = template.Library()


class LiteralTranslateNode(TranslateNode):
    """A `{% translate "…" %}` of a plain literal."""

    def __init__(self, node: TranslateNode, msgid: str) -> None:
        super().__init__(node.filter_expression, node.noop, node.asvar, node.message_context)
        self.msgid = msgid  # as Django's Variable asks for it: the literal with its percent signs doubled

    def render(self, context: Any) -> SafeString:
        # Safe as Django's tag marks it: the template's own literal (and its translation), never a variable.
        return mark_safe(gettext(self.msgid).replace("%%", "%"))  # noqa: S308


@register.tag("translate")
@register.tag("trans")
def translate(parser: Parser, token: Token) -> TranslateNode:
    node = do_translate(parser, token)
    expression = node.filter_expression
    var = expression.var
    if (
        not node.noop
        and node.asvar is None
        and node.message_context is None
        and not expression.filters
        and expression.is_var
        and isinstance(var, Variable)
        and var.lookups is None
        and isinstance(var.literal, str)
    ):
        return LiteralTranslateNode(node, str(var.literal).replace("%", "%%"))
    return node
