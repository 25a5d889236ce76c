"""Django's `LocaleMiddleware` without its URL-prefix work when no URLconf uses `i18n_patterns` (issue 34).

Django's asks the path for a language prefix twice per request (`get_language_from_path`: every supported
language tried against the path) even when no pattern has one, and then uses the answer only together with
"prefix patterns are used". This shop has none, so the language comes from the cookie or `Accept-Language` and
the response gets `Vary: Accept-Language` and `Content-Language` exactly as Django's would give them; a URLconf
with `i18n_patterns` gets Django's own behaviour.
"""

from __future__ import annotations

from django.conf import settings
from django.conf.urls.i18n import is_language_prefix_patterns_used
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.middleware.locale import LocaleMiddleware as DjangoLocaleMiddleware
from django.utils import translation
from django.utils.cache import patch_vary_headers


def _prefixed(request: HttpRequest) -> bool:
    return is_language_prefix_patterns_used(getattr(request, "urlconf", settings.ROOT_URLCONF))[0]


class LocaleMiddleware(DjangoLocaleMiddleware):
    def process_request(self, request: HttpRequest) -> None:
        if _prefixed(request):
            super().process_request(request)
            return
        translation.activate(translation.get_language_from_request(request, check_path=False))
        request.LANGUAGE_CODE = translation.get_language()

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if _prefixed(request):
            return super().process_response(request, response)
        patch_vary_headers(response, ("Accept-Language",))
        response.headers.setdefault("Content-Language", translation.get_language())
        return response
