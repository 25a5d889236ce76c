"""The MCP output check against `outputSchema` remembers outputs it found valid (issue 11: the jsonschema
walk was most of a repeated get_order's CPU); it must never let an invalid output through."""

from __future__ import annotations

import pytest

from bcp_app.transports.mcp.tools import VALIDATED_MEMO_SIZE, OutputContractError, compact_json, output_validator

SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}


def test_a_remembered_valid_output_does_not_let_a_different_invalid_one_through() -> None:
    validate = output_validator("get_order", SCHEMA)
    validate({"id": "order_1"})
    validate({"id": "order_1"}, compact_json({"id": "order_1"}).encode())  # remembered: same bytes
    for _ in range(2):  # an invalid output is never remembered
        with pytest.raises(OutputContractError, match="get_order: output violates outputSchema"):
            validate({"id": 7})
    with pytest.raises(OutputContractError):
        validate({"id": 7}, compact_json({"id": 7}).encode())


def test_the_memo_stays_bounded_and_keeps_validating_after_it_is_full() -> None:
    validate = output_validator("get_order", SCHEMA)
    for number in range(VALIDATED_MEMO_SIZE + 5):
        validate({"id": f"order_{number}"})
    with pytest.raises(OutputContractError):
        validate({})
    memo = next(cell.cell_contents for cell in validate.__closure__ if isinstance(cell.cell_contents, set))
    assert len(memo) <= VALIDATED_MEMO_SIZE
