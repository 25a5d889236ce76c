"""The typed catalogue tools of seed 002 as MCP tools: strict input, validated output, domain errors
in the seed's envelope (`status: "error"`), protocol errors as JSON-RPC errors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from bcp_app.protocol.errors import PROTOCOL_ERRORS, ProtocolError
from bcp_app.service.catalogue import TYPED_TOOLS, Caller, TypedTool
from bcp_app.service.catalogue.contracts import describe_validation_error, error_result, input_schema, output_schema
from bcp_app.transports.mcp.core import CallInfo, McpTool, ToolOutcome, output_validator

logger = logging.getLogger("bcp_app.transports.mcp.server")
INTERNAL = error_result("internal", "Erro interno; nada foi alterado. Tente novamente em instantes.").model_dump(
    mode="json", exclude_none=True
)


def invalid_params(content: str, fields: dict[str, str]) -> MCPError:
    """-32602 naming every offending argument (BCP-MCP-05; seed 002 `categria`)."""
    return MCPError(
        PROTOCOL_ERRORS["invalid_request"][1],
        content,
        {
            "code": "invalid_request",
            "content": content,
            "fields": fields,
        },
    )


def _rate_limited(retry_after: int) -> ToolOutcome:
    envelope = error_result(
        "rate_limited",
        "Muitas chamadas; tente novamente depois do intervalo indicado.",
        retry_after_seconds=retry_after,
    )
    return ToolOutcome(structured=envelope.model_dump(mode="json", exclude_none=True))


def _runner(
    tool: TypedTool, resolve_caller: Callable[[CallInfo], Caller], validate_output: Callable[[dict], None]
) -> Callable[[CallInfo], ToolOutcome]:
    def run(call: CallInfo) -> ToolOutcome:
        try:
            args = tool.input_model.model_validate(call.arguments)
        except ValidationError as exc:
            summary, fields = describe_validation_error(exc)
            raise invalid_params(f"Argumentos inválidos para {tool.name}: {summary}", fields) from None
        caller = resolve_caller(call)
        try:
            result = tool.operation(args, caller)
            structured = tool.result.dump_python(result, mode="json", by_alias=True, exclude_none=True)
            # Seed 002: the output is parsed against its contract before it leaves the server.
            tool.result.validate_python(structured)
            validate_output(structured)
        except (ProtocolError, MCPError):
            raise
        except Exception:
            # The agent never sees corrupt data: the developer gets the typed error in the log,
            # the agent the seed's `internal` envelope.
            logger.exception("typed tool %s failed", tool.name)
            structured = INTERNAL
        return ToolOutcome(structured=structured)

    return run


def typed_tools(resolve_caller: Callable[[CallInfo], Caller]) -> list[McpTool]:
    tools = []
    for tool in TYPED_TOOLS:
        output = output_schema(tool.result)
        tools.append(
            McpTool(
                name=tool.name,
                description=tool.full_description,
                input_schema=input_schema(tool.input_model),
                output_schema=output,
                run=_runner(tool, resolve_caller, output_validator(tool.name, output)),
                read_only=not tool.mutates,
                on_rate_limited=_rate_limited,
            )
        )
    return tools
