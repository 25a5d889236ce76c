"""Portuguese texts for pydantic validation errors of BCP requests (REST bodies, MCP tool arguments and
every operation's request model).

An agent developer reading `invalid_request` must learn which field is wrong and why, in the shop's
language: pydantic's own messages are English ("Input should be greater than or equal to 1").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.utils.translation import ngettext_lazy
from pydantic import ValidationError

_FIXED = {
    "missing": "campo obrigatório",
    "extra_forbidden": "chave desconhecida (não faz parte do contrato)",
    "int_type": "deve ser um número inteiro",
    "int_parsing": "deve ser um número inteiro",
    "int_from_float": "deve ser um número inteiro",
    "float_type": "deve ser um número",
    "float_parsing": "deve ser um número",
    "string_type": "deve ser um texto",
    "bool_type": "deve ser true ou false",
    "bool_parsing": "deve ser true ou false",
    "dict_type": "deve ser um objeto JSON",
    "model_type": "deve ser um objeto JSON",
    "model_attributes_type": "deve ser um objeto JSON",
    "list_type": "deve ser uma lista",
    "string_pattern_mismatch": "formato inválido",
    "uuid_type": "deve ser um UUID",
    "uuid_parsing": "deve ser um UUID",
    "url_parsing": "deve ser uma URL válida",
    "url_scheme": "deve ser uma URL http(s)",
    "datetime_parsing": "deve ser uma data e hora RFC 3339",
    "datetime_type": "deve ser uma data e hora RFC 3339",
}

# Types whose text needs the constraint from the error's ctx.
_BOUNDED = {
    "greater_than_equal": ("ge", "deve ser maior ou igual a {}"),
    "greater_than": ("gt", "deve ser maior que {}"),
    "less_than_equal": ("le", "deve ser no máximo {}"),
    "less_than": ("lt", "deve ser menor que {}"),
}
# pydantic lists a Literal's or an Enum's values in English ("'a', 'b' or 'c'"): the values, said in Portuguese.
_CHOICES = ("literal_error", "enum")
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _choices(expected: str) -> str:
    values = _QUOTED.findall(expected) or [expected]
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} ou {values[-1]}"


# Types whose text counts the constraint (a length): singular or plural by that number.
_COUNTED = {
    "too_short": (
        "min_length",
        ngettext_lazy("precisa de pelo menos %(n)d item", "precisa de pelo menos %(n)d itens", "n"),
    ),
    "too_long": ("max_length", ngettext_lazy("aceita no máximo %(n)d item", "aceita no máximo %(n)d itens", "n")),
    "string_too_short": (
        "min_length",
        ngettext_lazy("precisa de pelo menos %(n)d caractere", "precisa de pelo menos %(n)d caracteres", "n"),
    ),
    "string_too_long": (
        "max_length",
        ngettext_lazy("aceita no máximo %(n)d caractere", "aceita no máximo %(n)d caracteres", "n"),
    ),
}


def error_text(error: Mapping[str, Any]) -> str:
    """One pydantic error (an item of `ValidationError.errors()`) as a short Portuguese phrase."""
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    if kind in _FIXED:
        return _FIXED[kind]
    if kind in _CHOICES and "expected" in ctx:
        return f"deve ser um destes: {_choices(str(ctx['expected']))}"
    if kind in _BOUNDED:
        key, template = _BOUNDED[kind]
        if key in ctx:
            return template.format(ctx[key])
    if kind in _COUNTED:
        key, counted = _COUNTED[kind]
        if isinstance(ctx.get(key), int):
            return str(counted % {"n": ctx[key]})
    cause = ctx.get("error")
    if isinstance(cause, ValueError) and str(cause):
        return str(cause)  # our own validators already speak Portuguese
    # Our custom error types (e.g. control_character) carry their Portuguese text as the message.
    return str(error.get("msg") or "valor inválido")


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CONTROL = re.compile(r"[\x00-\x1f]")


def error_loc(error: Mapping[str, Any]) -> tuple[Any, ...]:
    """The location of what one pydantic error is about: its `loc`, and for a control character (found by the
    field's own check, which pydantic locates at the field) the string's place inside that field."""
    return (*error.get("loc", ()), *((error.get("ctx") or {}).get("below") or ()))


def field_path(loc: Sequence[Any]) -> str:
    """pydantic `loc` → the RFC 9535 JSONPath of the member in what the agent sent (BCP §5.1's path form):
    `("line_items", 0, "quantity")` → `$.line_items[0].quantity`, `("meta", "idempotency-key")` →
    `$.meta['idempotency-key']`, `()` → `$` (the whole body). One form on REST, MCP and A2A."""
    out = "$"
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _NAME.match(str(part)):
            out += f".{part}"
        else:
            quoted = str(part).replace("\\", "\\\\").replace("'", "\\'")
            # RFC 9535 string literals escape controls (a key holding one is the member refused for it)
            quoted = _CONTROL.sub(lambda found: f"\\u{ord(found.group()):04x}", quoted)
            out += f"['{quoted}']"
    return out


def rooted(path: str, under: Sequence[Any]) -> str:
    """A service's JSONPath into the body (`$.line_items[0].id`) named from the request's root when the body sits
    at `under` in what the agent sent (`("cart",)` → `$.cart.line_items[0].id`), as `validate`'s paths are."""
    return field_path(under) + path.removeprefix("$")


def field_problems(
    errors: Sequence[Mapping[str, Any]], *, loc_of: Callable[[Mapping[str, Any]], Sequence[Any]] = error_loc
) -> dict[str, str]:
    """{JSONPath: problema} for every offending member of one validation (the first problem of each member), in
    pydantic's order: what MCP's `invalid_params`, REST's 400 and A2A's -32602 all name (`loc_of`: where an error
    is, when the framework prefixes pydantic's `loc`)."""
    problems: dict[str, str] = {}
    for error in errors:
        problems.setdefault(field_path(loc_of(error)), error_text(error))
    return problems


def summary(problems: Mapping[str, str]) -> str:
    """ "campo: problema; …" — every offending member in one sentence."""
    return "; ".join(f"{field}: {text}" for field, text in problems.items())


def invalid_fields_content(problems: Mapping[str, str]) -> str:
    """The `content` of an `invalid_request` naming every offending member: "Campo inválido $.x: problema" for
    one, "Campos inválidos: $.x: problema; $.y: problema" for several."""
    if len(problems) == 1:
        ((field, text),) = problems.items()
        return f"Campo inválido {field}: {text}"
    return f"Campos inválidos: {summary(problems)}"


def describe(exc: ValidationError) -> tuple[str, dict[str, str]]:
    """("campo: problema; …", {campo: problema}) for MCP's `invalid_params`, every offending key named by its
    JSONPath in the tool's arguments (`$.checkout.line_items[0].quantity`)."""
    problems = field_problems(exc.errors(include_url=False))
    return summary(problems), problems
