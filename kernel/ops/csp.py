"""Django's `ContentSecurityPolicyMiddleware` with the policy of a response that used no nonce built once per
configuration (issue 34).

Django builds the header from the settings on every response. Without a nonce (the API's JSON, a page whose
templates asked for none) the result depends on the configuration alone, so it is kept per configuration object
(settings replaced, e.g. by a test, are a new object and built anew); a response whose request used its nonce
gets Django's own build with it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.middleware.csp import ContentSecurityPolicyMiddleware as DjangoCSPMiddleware
from django.middleware.csp import get_nonce
from django.utils.csp import CSP, build_policy

_built: dict[int, tuple[Any, str]] = {}  # id(config) → (config, its policy without a nonce)


def policy_without_nonce(config: Any) -> str:
    kept = _built.get(id(config))
    if kept is None or kept[0] is not config:
        if len(_built) >= 16:
            _built.clear()
        kept = _built[id(config)] = (config, build_policy(config, None))
    return kept[1]


class ContentSecurityPolicyMiddleware(DjangoCSPMiddleware):
    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if get_nonce(request):  # the page used its nonce: the policy names it
            return super().process_response(request, response)
        sentinel = object()
        if (enforce := getattr(response, "_csp_config", sentinel)) is sentinel:
            enforce = settings.SECURE_CSP
        if (report_only := getattr(response, "_csp_ro_config", sentinel)) is sentinel:
            report_only = settings.SECURE_CSP_REPORT_ONLY
        for header, config in ((CSP.HEADER_ENFORCE, enforce), (CSP.HEADER_REPORT_ONLY, report_only)):
            if config and header not in response:
                response.headers[str(header)] = policy_without_nonce(config)
        return response
