"""The shop's locale and CSP middleware (issue 34: Django's with per-request work left out) answer exactly as
Django's: same active language and `LANGUAGE_CODE`, same `Vary`, `Content-Language` and policy headers."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.middleware.csp import ContentSecurityPolicyMiddleware as DjangoCSP
from django.middleware.locale import LocaleMiddleware as DjangoLocale
from django.test import RequestFactory
from django.utils import translation
from django.utils.csp import CSP
from django.utils.translation import trans_real

from kernel.ops import csp
from kernel.ops.csp import ContentSecurityPolicyMiddleware
from kernel.ops.locale import LocaleMiddleware


def _answer(middleware: type, request: HttpRequest, *, use_nonce: bool = False) -> tuple[HttpResponse, str]:
    seen: dict[str, str] = {}

    def view(request: HttpRequest) -> HttpResponse:
        seen["language"] = translation.get_language()
        if use_nonce:
            str(request._csp_nonce)  # type: ignore[attr-defined]  # what {{ csp_nonce }} does in a template
        return HttpResponse("ok")

    try:
        response = middleware(view)(request)
    finally:
        translation.deactivate()
    return response, seen.get("language", "")


@pytest.mark.parametrize(
    ("path", "headers", "cookies"),
    [
        ("/bcp/v1/orders/order_x", {}, {}),
        ("/bcp/v1/orders/order_x", {"Accept-Language": "en-US,en;q=0.9"}, {}),
        ("/produto/cafe/", {"Accept-Language": "pt-BR"}, {}),
        ("/en/produto/cafe/", {"Accept-Language": "fr"}, {"django_language": "en"}),
        ("/carrinho/", {"Accept-Language": "xx"}, {}),
        # an agent's call: no cookie, its Accept-Language read as Django reads it (remembered per value)
        ("/bcp/v1/orders/order_x", {"Accept-Language": "fr, en;q=0.8"}, {}),
        ("/bcp/v1/orders/order_x", {"Accept-Language": "en-GB"}, {}),
        ("/bcp/v1/orders/order_x", {"Accept-Language": "pt"}, {}),
        ("/bcp/v1/orders/order_x", {"Accept-Language": "*, en"}, {}),
        ("/bcp/v1/orders/order_x", {"Accept-Language": "de-DE,de;q=0.9"}, {}),
        ("/bcp/v1/orders/order_x", {"Accept-Language": "en;q=0.1, pt-BR;q=0.9"}, {}),
        ("/bcp/v1/orders/order_x", {"Accept-Language": "en"}, {"django_language": "pt-br"}),
        ("/bcp/v1/orders/order_x", {"Accept-Language": "pt-BR"}, {"outro": "1"}),
    ],
)
def test_the_locale_middleware_answers_as_djangos(path: str, headers: dict[str, str], cookies: dict[str, str]) -> None:
    factory = RequestFactory(headers=headers)
    answers = []
    for middleware in (DjangoLocale, LocaleMiddleware):
        factory.cookies.load(cookies)
        request = factory.get(path)
        response, language = _answer(middleware, request)
        answers.append((language, request.LANGUAGE_CODE, response["Vary"], response["Content-Language"]))  # type: ignore[attr-defined]
    assert answers[0] == answers[1]


def test_the_locale_middleware_reads_no_language_from_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """No URLconf of the shop uses `i18n_patterns`, so the path is not searched for a language prefix (Django's
    searched it twice per request, for nothing)."""
    searched: list[str] = []
    original = translation.get_language_from_path

    def spy(path: str, *args: Any) -> str | None:
        searched.append(path)
        return original(path, *args)

    monkeypatch.setattr(translation, "get_language_from_path", spy)
    response, language = _answer(LocaleMiddleware, RequestFactory(headers={"Accept-Language": "en"}).get("/en/x"))
    assert (language, response["Content-Language"], searched) == ("en", "en", [])


def test_an_agents_repeated_accept_language_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call without cookies (an agent's) answers from its Accept-Language, which an agent sends the same on every
    call: its tags are walked once per process, not on each call (issue 34); the answer stays Django's."""
    walked: list[str] = []
    original = trans_real.parse_accept_lang_header

    def spy(header: str) -> Any:
        walked.append(header)
        return original(header)

    monkeypatch.setattr(trans_real, "parse_accept_lang_header", spy)
    factory = RequestFactory(headers={"Accept-Language": "en-AU,en;q=0.7,pt;q=0.2"})
    answers = [_answer(LocaleMiddleware, factory.get("/bcp/v1/orders/order_x"))[1] for _ in range(3)]
    assert (answers, walked) == (["en", "en", "en"], ["en-AU,en;q=0.7,pt;q=0.2"])


@pytest.mark.parametrize("use_nonce", [False, True])
def test_the_csp_middleware_answers_as_djangos(settings: Any, use_nonce: bool) -> None:
    settings.SECURE_CSP_REPORT_ONLY = {"default-src": [CSP.SELF], "script-src": [CSP.SELF, CSP.NONCE]}
    answers = []
    for middleware in (DjangoCSP, ContentSecurityPolicyMiddleware):
        request = RequestFactory().get("/")
        response, _ = _answer(middleware, request, use_nonce=use_nonce)
        nonce = str(request._csp_nonce) if use_nonce else "<none>"  # type: ignore[attr-defined]
        answers.append(
            tuple(response[str(h)].replace(nonce, "N") for h in (CSP.HEADER_ENFORCE, CSP.HEADER_REPORT_ONLY))
        )
    assert answers[0] == answers[1]
    assert ("'nonce-N'" in answers[1][0]) is use_nonce


def test_the_csp_policy_without_a_nonce_is_built_once_per_configuration(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Any] = []
    original = csp.build_policy
    monkeypatch.setattr(csp, "build_policy", lambda config, nonce=None: built.append(config) or original(config, nonce))
    settings.SECURE_CSP = {"default-src": [CSP.SELF], "script-src": [CSP.SELF, CSP.NONCE]}
    first, _ = _answer(ContentSecurityPolicyMiddleware, RequestFactory().get("/"))
    again, _ = _answer(ContentSecurityPolicyMiddleware, RequestFactory().get("/"))
    assert first[str(CSP.HEADER_ENFORCE)] == again[str(CSP.HEADER_ENFORCE)] == "default-src 'self'; script-src 'self'"
    assert built == [settings.SECURE_CSP]
    settings.SECURE_CSP = {"default-src": [CSP.NONE]}  # other settings: built again
    changed, _ = _answer(ContentSecurityPolicyMiddleware, RequestFactory().get("/"))
    assert changed[str(CSP.HEADER_ENFORCE)] == "default-src 'none'"
