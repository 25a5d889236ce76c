"""Output bodies are sent as the presenters build them, without pydantic validating them again (issue 34), in the
output models' member order; the one schema set stays the contract: with `BCP_CHECK_OUTPUT` (on in the whole
suite) a body that is not exactly what its model produces fails (BCP-CHK-02, BCP-ORD-04, BCP-ERR-02)."""

from __future__ import annotations

from typing import Any

import pytest

from bcp_app.protocol.results import body_bytes
from bcp_app.protocol.schemas import CheckoutResponse, ErrorResponse
from bcp_app.protocol.schemas.common import OutputDrift


def _error_built_out_of_order() -> dict[str, Any]:
    # every object's members in another order than its model declares them; an extra member on the envelope
    return {
        "messages": [
            {"content": "Pedido não encontrado.", "severity": "recoverable", "code": "not_found", "type": "error"}
        ],
        "ucp": {
            "capabilities": {"br.dev.bcp.shopping.order": [{"version": "2026-07-28"}]},
            "extra": 1,
            "status": "error",
            "version": "2026-07-28",
        },
    }


def test_produce_sends_the_models_wire_bytes_without_validating_again(settings: Any) -> None:
    body = _error_built_out_of_order()
    expected = body_bytes(ErrorResponse.validated(body))
    for check in (True, False):
        settings.BCP_CHECK_OUTPUT = check
        produced = ErrorResponse.produce(body)
        assert body_bytes(produced) == expected  # member order of the models, nested ones included
        assert list(produced["ucp"]) == ["version", "status", "capabilities", "extra"]
        assert list(produced["messages"][0]) == ["type", "code", "severity", "content"]
    # in production nothing is validated: a body the models would refuse goes out as built (the suite checks it)
    settings.BCP_CHECK_OUTPUT = False
    broken = {**body, "messages": []}
    assert ErrorResponse.produce(broken)["messages"] == []


def test_a_drifting_presenter_fails_under_the_check(settings: Any) -> None:
    settings.BCP_CHECK_OUTPUT = True
    with pytest.raises(OutputDrift, match=r"ErrorResponse"):
        ErrorResponse.produce({**_error_built_out_of_order(), "messages": []})  # min_length=1 refused
    body = _error_built_out_of_order()
    with pytest.raises(OutputDrift, match=r"messages\.0\.type"):
        ErrorResponse.produce({**body, "messages": [{**body["messages"][0], "type": "erro"}]})


def test_a_checkout_body_and_a_wrong_value_in_it(settings: Any) -> None:
    settings.BCP_CHECK_OUTPUT = True
    checkout = {
        "ucp": {"version": "2026-07-28", "capabilities": {}},
        "id": "checkout_1",
        "status": "incomplete",
        "currency": "BRL",
        "line_items": [],
        "totals": [{"type": "total", "amount": 0}],
        "links": [],
        "policies": [],
    }
    assert body_bytes(CheckoutResponse.produce(checkout)) == body_bytes(CheckoutResponse.validated(checkout))
    with pytest.raises(OutputDrift):
        CheckoutResponse.produce({**checkout, "id": 7})
