"""Django's `LocaleMiddleware` without its URL-prefix work when no URLconf uses `i18n_patterns` (issue 34).

Django's asks the path for a language prefix twice per request (`get_language_from_path`: every supported
language tried against the path) even when no pattern has one, and then uses the answer only together with
"prefix patterns are used". This shop has none, so the language comes from the cookie or `Accept-Language` and
the response gets `Vary: Accept-Language` and `Content-Language` exactly as Django's would give them; a URLconf
with `i18n_patterns` gets Django's own behaviour.

A request without cookies (an agent's API call) is answered from its `Accept-Language` alone, as Django would
answer it, remembered per header value: an agent sends the same header on every call, and Django's reading of it
(the cookie jar parsed for nothing, a `LookupError` raised and caught for the absent cookie, the header's tags
walked) was about 1 % of a Get Order (issue 34).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.conf import settings
from django.conf.urls.i18n import is_language_prefix_patterns_used
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.middleware.locale import LocaleMiddleware as DjangoLocaleMiddleware
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation import trans_real


def _prefixed(request: HttpRequest) -> bool:
    return is_language_prefix_patterns_used(getattr(request, "urlconf", settings.ROOT_URLCONF))[0]


@lru_cache(maxsize=256)
def language_of_header(accept: str) -> str:
    """What `get_language_from_request` answers a request without a language cookie whose `Accept-Language` is
    `accept` (Django's own steps, in its order)."""
    for tag, _quality in trans_real.parse_accept_lang_header(accept):
        if tag == "*":
            break
        if not trans_real.language_code_re.search(tag):
            continue
        try:
            return trans_real.get_supported_language_variant(tag)
        except LookupError:
            continue
    try:
        return trans_real.get_supported_language_variant(settings.LANGUAGE_CODE)
    except LookupError:
        return str(settings.LANGUAGE_CODE)


@receiver(setting_changed)
def _languages_changed(*, setting: str, **kwargs: Any) -> None:
    if setting in {"LANGUAGES", "LANGUAGE_CODE"}:
        language_of_header.cache_clear()


class LocaleMiddleware(DjangoLocaleMiddleware):
    def process_request(self, request: HttpRequest) -> None:
        if _prefixed(request):
            super().process_request(request)
            return
        if request.META.get("HTTP_COOKIE"):  # the language cookie comes first (the storefront's language switch)
            language = translation.get_language_from_request(request, check_path=False)
        else:
            language = language_of_header(request.META.get("HTTP_ACCEPT_LANGUAGE", ""))
        translation.activate(language)
        request.LANGUAGE_CODE = translation.get_language()

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if _prefixed(request):
            return super().process_response(request, response)
        if "Vary" in response.headers:
            patch_vary_headers(response, ("Accept-Language",))
        else:
            response.headers["Vary"] = "Accept-Language"  # what patch_vary_headers writes when there is none
        response.headers.setdefault("Content-Language", translation.get_language())
        return response
