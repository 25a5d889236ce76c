"""Bounded fuzzing of every agent-facing transport; no request may produce a 5xx (issue 13, "Done when").

- `/bcp/v1`: schemathesis in negative mode (no 5xx), in positive mode with its response checks (no 5xx, every
  response conforms to the OpenAPI, every schema-valid request accepted: ST202, issue 31), and
  hypothesis-built hostile bodies (control characters, deep nesting, wrong types);
- `/bcp/mcp` and `/bcp/a2a` over a live uvicorn: JSON-RPC messages with odd ids (null, float, object,
  bool), any method, params and arguments of any JSON shape with any text (NUL and C0 included),
  deeply nested values, bodies over the cap and bytes that are not UTF-8.

Example counts are fixed and small so the whole module stays well under a minute. BCP-ERR-05/06.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import positive_data_acceptance, response_schema_conformance

from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.rest_helpers import catalog
from tests.bcp_app.test_a2a_helpers import (
    EXTENSION,
    SEED_HEADERS,
    SEED_PROFILE,
    LiveServer,
    live_fixture,  # noqa: F401 (fixture "live")
    server_fixture,  # noqa: F401 (fixture "server")
)
from tests.bcp_app.test_mcp_protocol import BCP_TOOLS, TYPED_TOOLS

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def fuzz(examples: int) -> hypothesis_settings:
    # Fixed seed-free derandomized runs: the same examples every time, a bounded count, no example database.
    return hypothesis_settings(
        max_examples=examples, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )


HOSTILE_TEXT = st.text(st.characters(codec="utf-8"), max_size=20) | st.sampled_from(
    ["\x00", "a\x00b", "\x07", "\x1b[31m", "\t\n", "𝄞", "\ufeff", "' OR 1=1 --", "%00", "A" * 300]
)
IDS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | HOSTILE_TEXT
    | st.just({"a": 1})
    | (st.just([1]))
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | HOSTILE_TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(HOSTILE_TEXT, children, max_size=4),
    max_leaves=12,
)
MCP_TOOLS = sorted(BCP_TOOLS | TYPED_TOOLS)  # every tool the server lists
DEEP = b"[" * 5000 + b"]" * 5000
INTERNALS = ("Traceback", "recursion", "codec can't")


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def mangle(document: Any, how: str) -> bytes:
    """The JSON text of `document`, or one of the ways a hostile client breaks it."""
    raw = json.dumps(document).encode()
    if how == "deep":
        return raw[:-1] + b', "deep": ' + DEEP + b"}" if raw.endswith(b"}") else DEEP
    if how == "not-utf8":
        return raw.replace(b'"', b'"\xff', 1)
    if how == "huge":
        return raw[:-1] + b', "pad": "' + b"x" * 30_000 + b'"}' if raw.endswith(b"}") else b"[" + b"0," * 15_000 + b"0]"
    return raw


def check(response: httpx.Response, failures: list[str], what: str) -> None:
    if response.status_code >= 500 or any(word in response.text for word in INTERNALS):
        failures.append(f"{what}: {response.status_code} {response.text[:300]}")


@pytest.fixture
def capped(settings: Any) -> Any:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 20_000  # "huge" bodies stay cheap to send
    return settings


def test_json_rpc_fuzz_on_mcp_finds_no_5xx(server: LiveServer, capped: Any) -> None:
    failures: list[str] = []
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    meta = {"ucp-agent": {"profile": SEED_PROFILE}}

    @given(
        request_id=IDS,
        method=st.sampled_from(["tools/call", "tools/list", "initialize", "ping"]) | HOSTILE_TEXT,
        tool=st.sampled_from(MCP_TOOLS) | HOSTILE_TEXT,
        arguments=JSON,
        with_meta=st.booleans(),
        how=st.sampled_from(["plain", "plain", "plain", "deep", "not-utf8", "huge"]),
    )
    @fuzz(120)
    def run(request_id: Any, method: Any, tool: Any, arguments: Any, with_meta: bool, how: str) -> None:
        if isinstance(arguments, dict) and with_meta:
            arguments = {"meta": meta, **arguments}
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": method,
            "params": {"name": tool, "arguments": arguments} if method == "tools/call" else arguments,
        }
        response = httpx.post(f"{server.base_url}/bcp/mcp", content=mangle(message, how), headers=headers, timeout=30)
        check(response, failures, f"MCP {how} {json.dumps(message)[:200]}")

    run()
    assert failures == []


def test_json_rpc_fuzz_on_a2a_finds_no_5xx(server: LiveServer, capped: Any) -> None:
    failures: list[str] = []
    part = (
        st.fixed_dictionaries({"text": HOSTILE_TEXT})
        | st.fixed_dictionaries({"data": JSON, "mediaType": st.just("application/json") | HOSTILE_TEXT})
        | JSON
    )

    @given(
        request_id=IDS,
        method=st.sampled_from(["SendMessage", "SendMessage", "GetTask", "CancelTask"]) | HOSTILE_TEXT,
        parts=st.lists(part, max_size=3),
        message_id=IDS,
        context_id=st.none() | IDS,
        extra=JSON,
        how=st.sampled_from(["plain", "plain", "plain", "deep", "not-utf8", "huge"]),
    )
    @fuzz(120)
    def run(
        request_id: Any, method: Any, parts: list[Any], message_id: Any, context_id: Any, extra: Any, how: str
    ) -> None:
        message: dict[str, Any] = {
            "role": "ROLE_USER",
            "parts": parts,
            "messageId": message_id,
            "extensions": [EXTENSION],
        }
        if context_id is not None:
            message["contextId"] = context_id
        if isinstance(extra, dict):
            message["metadata"] = extra
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"message": message}}
        response = httpx.post(f"{server.a2a_url}", content=mangle(body, how), headers=SEED_HEADERS, timeout=30)
        check(response, failures, f"A2A {how} {json.dumps(body)[:200]}")

    run()
    assert failures == []


def test_hostile_rest_bodies_find_no_5xx(server: LiveServer, capped: Any) -> None:
    catalog()
    failures: list[str] = []
    headers = {
        "content-type": "application/json",
        "BCP-Agent": SEED_HEADERS["BCP-Agent"],
        "Idempotency-Key": "0b9f3c62-8c3e-4c57-9d3e-3c8f1d7a2b10",
    }
    paths = st.sampled_from(
        [
            "/checkout-sessions",
            "/checkout-sessions/checkout_x",
            "/checkout-sessions/x/complete",
            "/checkout-sessions/x/cancel",
            "/catalog/search",
            "/catalog/lookup",
            "/catalog/product",
        ]
    )
    line = st.fixed_dictionaries({"item": st.fixed_dictionaries({"id": HOSTILE_TEXT}) | JSON, "quantity": JSON})
    body = st.fixed_dictionaries(
        {},
        optional={
            "line_items": st.lists(line, max_size=2) | JSON,
            "buyer": st.dictionaries(HOSTILE_TEXT, HOSTILE_TEXT, max_size=3),
            "context": JSON,
            "signals": JSON,
            "query": HOSTILE_TEXT,
            "ids": st.lists(HOSTILE_TEXT, max_size=3),
            "id": HOSTILE_TEXT,
            "payment": JSON,
            "discounts": JSON,
        },
    )

    @given(path=paths, document=body | JSON, how=st.sampled_from(["plain", "plain", "deep", "not-utf8", "huge"]))
    @fuzz(100)
    def run(path: str, document: Any, how: str) -> None:
        method = "PUT" if path == "/checkout-sessions/checkout_x" else "POST"
        response = httpx.request(
            method, f"{server.base_url}/bcp/v1{path}", content=mangle(document, how), headers=headers, timeout=30
        )
        check(response, failures, f"REST {method} {path} {how} {json.dumps(document)[:200]}")

    run()
    assert failures == []


@pytest.mark.django_db(transaction=True)
def test_schemathesis_negative_mode_finds_no_5xx(fake_platform: FakePlatform, bcp_settings: Any) -> None:
    catalog()
    agent_header = f'profile="{fake_platform.publish()}"'
    schema = schemathesis.openapi.from_wsgi("/bcp/v1/openapi.json", get_wsgi_application())
    failures: list[str] = []
    skipped: list[str] = []
    fuzzed = 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy(generation_mode=GenerationMode.NEGATIVE))
        @fuzz(10)
        def run(case: Any) -> None:
            case.headers = {**(case.headers or {}), "BCP-Agent": agent_header}
            response = case.call()
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:200]}")

        try:
            run()
        except Unsatisfiable:
            skipped.append(operation.label)  # nothing invalid to generate (e.g. a GET with only a path id)
        else:
            fuzzed += 1
    assert failures == []
    assert fuzzed >= 6, skipped


@pytest.mark.django_db(transaction=True)
def test_schemathesis_positive_mode_every_valid_request_is_accepted_st202(
    fake_platform: FakePlatform, bcp_settings: Any
) -> None:
    """Issue 31: what the OpenAPI calls valid is accepted (no 400/422), answered without a 5xx, and the answer
    conforms to the OpenAPI. A profile that negotiates every capability, so catalog and cart are exercised."""
    catalog()
    bcp_settings.BCP_RATE_LIMITS = {name: ("", "") for name in bcp_settings.BCP_RATE_LIMITS}  # no 429 masking
    agent_header = f'profile="{fake_platform.publish()}"'
    schema = schemathesis.openapi.from_wsgi("/bcp/v1/openapi.json", get_wsgi_application())
    checks = [not_a_server_error, response_schema_conformance, positive_data_acceptance]
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE))
        @fuzz(25)
        def run(case: Any) -> None:
            case.headers = {
                **(case.headers or {}),
                "BCP-Agent": agent_header,
                "Idempotency-Key": "0b9f3c62-8c3e-4c57-9d3e-3c8f1d7a2b10",
            }
            response = case.call()
            try:
                case.validate_response(response, checks=checks)
            except FailureGroup as group:
                failures.extend(
                    f"{case.method} {case.formatted_path}: {failure.title} {response.status_code} {response.text[:200]}"
                    for failure in group.exceptions
                )

        run()
    assert len(operations) == 18  # with the subscription extension's three and the order actions' two
    assert failures == []
