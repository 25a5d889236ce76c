"""UCP's MCP binding (2026-01-11) at `/ucp/mcp`, run by the BCP tools (issue 35 item 1: one engine, two faces). A
platform whose profile is written in UCP 2026-08-25 is answered in 2026-08-25's shapes (`ucp.body_2026_08_25`), as on
the REST face; the binding itself (tools, `_meta.ucp.profile`) is the same in both versions.

The binding is `docs/specification/checkout-mcp.md` and `spec/services/shopping/mcp.openrpc.json` at the UCP spec
repository's tag v2026-01-11: five tools whose arguments are the OpenRPC's params —
`create_checkout{checkout}`, `get_checkout{id}`, `update_checkout{id, checkout}`,
`complete_checkout{id, payment?, idempotency_key}`, `cancel_checkout{id, idempotency_key}` — and the platform's
profile in the request's `_meta.ucp.profile` ("MUST be present in every MCP tool invocation"). `get_order{id}` is
added: the order capability's read, as `GET /ucp/v1/orders/{id}` on the REST face.

Each call's arguments are renamed into the BCP tool's (`bcp_app/protocol/ucp.py`, the REST face's map) and run by
that tool's runner — the same validation, identity, negotiation, idempotency and rate limit — and its result
renamed back into UCP's shapes. A protocol error is the JSON-RPC error BCP gives it, whose `data` also carries UCP's
`{status: "error", errors: [{code, message, severity}]}` ("Error Handling" of the binding).

As on the REST face, a 2026-01-11 platform is answered as 2026-01-11 words it: its profile need not name checkout to
be served the core checkout (`negotiation.with_core_checkout_2026_01_11`, applied by `_core_checkout` to the BCP
checkout tools), and an operation refused for the checkout's status (`ucp.refused_for_status`, REST's 409) is a
JSON-RPC error (`refused_for_status_error`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from mcp.shared.exceptions import MCPError

from bcp_app.protocol import ucp
from bcp_app.protocol.errors import PROTOCOL_ERRORS, ProtocolError
from bcp_app.protocol.results import OperationResult
from bcp_app.service.context import RequestContext
from bcp_app.service.negotiation import with_core_checkout_2026_01_11
from bcp_app.transports.mcp.server import McpAsgiApp, build_server
from bcp_app.transports.mcp.tools import (
    BcpToolSpec,
    CallInfo,
    McpTool,
    ToolOutcome,
    bcp_tools,
    compact_json,
    invalid_params,
)

UUID_SCHEMA = {"type": "string", "minLength": 1, "maxLength": 255, "description": "UUID para repetir com segurança."}
ID_SCHEMA = {"type": "string", "minLength": 1, "maxLength": 100, "description": "Id do checkout ou do pedido."}
OBJECT = {"type": "object"}
CHECKOUT_TOOLS = frozenset(
    {"create_checkout", "get_checkout", "update_checkout", "complete_checkout", "cancel_checkout"}
)
# The JSON-RPC code of a refusal for the checkout's status: BCP's for its other conflicts (HTTP 409 on REST)
CONFLICT_CODE = PROTOCOL_ERRORS["idempotency_conflict"][1]
Renames = tuple[tuple[str, str], ...]
# The BCP tool's `meta`, which this face builds from what the UCP agent sent (`idempotency_key`, `_meta.ucp.profile`):
# its errors name those, not members the agent never saw (`tools.META_KEY_FIELD`, the JSONPaths of `describe`).
META_RENAMES: Renames = (
    ('meta["idempotency-key"]', "idempotency_key"),
    ("$.meta['idempotency-key']", "$.idempotency_key"),
    ('meta["ucp-agent"].profile', "_meta.ucp.profile"),
    ("$.meta['ucp-agent'].profile", "_meta.ucp.profile"),
)


@dataclass(frozen=True)
class UcpToolSpec:
    name: str
    description: str
    params: dict[str, dict[str, Any]]  # OpenRPC param → JSON Schema
    required: tuple[str, ...]
    to_bcp: Callable[[dict[str, Any]], dict[str, Any]]  # UCP arguments (minus ids and keys) → BCP tool arguments
    from_bcp: Callable[[dict[str, Any]], dict[str, Any]]
    read_only: bool = False
    warns: bool = False  # Create/Update: `ucp.with_request_warnings` on the `checkout` argument, as UCP REST
    renames: Callable[[dict[str, Any]], Renames] | None = None  # BCP paths the UCP arguments name otherwise


def _checkout_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    checkout = arguments.get("checkout")
    if not isinstance(checkout, dict):
        raise invalid_params("Argumentos inválidos: `checkout` deve ser um objeto.", {"checkout": "objeto esperado"})
    if "id" in checkout and "id" in arguments:
        # checkout-mcp.md "Identifier Pattern": the payload MUST NOT carry the id the top-level `id` names.
        raise invalid_params("Argumentos inválidos: `checkout.id` não é aceito; use `id`.", {"checkout.id": "proibido"})
    return {"checkout": ucp.checkout_request_to_bcp(checkout)}


def _listed(payment: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(index in the agent's `payment.instruments`, instrument) of each instrument that is an object."""
    instruments = payment.get("instruments")
    return [(k, i) for k, i in enumerate(instruments if isinstance(instruments, list) else []) if isinstance(i, dict)]


def _chosen(payment: dict[str, Any]) -> int | None:
    """Index in `payment.instruments` of the chosen instrument: the one `selected_instrument_id` names, else the one
    marked `selected`, else the only one; None when none is chosen."""
    listed = _listed(payment)
    chosen_id = payment.get("selected_instrument_id")
    named = [k for k, i in listed if chosen_id is not None and i.get("id") == chosen_id]
    marked = [k for k, i in listed if i.get("selected")]
    alone = [k for k, _ in listed] if len(listed) == 1 else []
    return next(iter(named + marked + alone), None)


def _complete_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """`payment` is 2026-01-11's `payment.json` (`instruments[]` with `selected_instrument_id`, or the instrument
    marked `selected`); the BCP complete reads exactly one chosen instrument."""
    payment = arguments.get("payment")
    if payment is None:
        return {"checkout": {}}
    if not isinstance(payment, dict):
        raise invalid_params("Argumentos inválidos: `payment` deve ser um objeto.", {"payment": "objeto esperado"})
    chosen = _chosen(payment)
    if chosen is None:  # BCP's validation names what is wrong
        return {"checkout": {"payment": {"instruments": [i for _, i in _listed(payment)]}}}
    return {"checkout": ucp.complete_request_to_bcp({"payment_data": payment["instruments"][chosen]})}


def _complete_renames(arguments: dict[str, Any]) -> Renames:
    """BCP's paths of what `_complete_arguments` passed on (the BCP tool's `checkout.payment.instruments[0]`, the
    engine's `payment.instruments[0]`) as where the agent put it: `payment.instruments[k]` of its `payment`
    argument, as UCP REST names its `payment_data` (`ucp.COMPLETE_RENAMES`)."""
    payment = arguments.get("payment")
    if not isinstance(payment, dict):
        return ()
    chosen = _chosen(payment)
    if chosen is not None:
        where = f"payment.instruments[{chosen}]"
        return (("checkout.payment.instruments[0]", where), ("payment.instruments[0]", where), ("$.checkout.", "$."))
    passed = tuple((f"checkout.payment.instruments[{j}]", f"payment.instruments[{k}]")
                   for j, (k, _) in enumerate(_listed(payment)))  # fmt: skip
    return (*passed, ("$.checkout.", "$."))


def _renamed_error(exc: MCPError, renames: Renames) -> MCPError:
    """An `invalid_params` of the BCP tool with its message, `content` and `fields` in the UCP tool's names."""
    data = exc.data
    if isinstance(data, dict):
        data = {**data}
        if isinstance(data.get("content"), str):
            data["content"] = ucp.renamed_text(data["content"], renames)
        if isinstance(data.get("fields"), dict):
            data["fields"] = {ucp.renamed_text(str(k), renames): v for k, v in data["fields"].items()}
    return MCPError(exc.code, ucp.renamed_text(exc.message, renames), data)


def _nothing(arguments: dict[str, Any]) -> dict[str, Any]:
    return {}


def _specs() -> list[UcpToolSpec]:
    return [
        UcpToolSpec(
            "create_checkout",
            "Cria uma sessão de checkout (UCP 2026-01-11): checkout.line_items com item.id = SKU e quantity.",
            {"checkout": OBJECT, "idempotency_key": UUID_SCHEMA},
            ("checkout",),
            _checkout_arguments,
            ucp.checkout_to_ucp,
            warns=True,
        ),
        UcpToolSpec(
            "get_checkout",
            "Devolve o estado atual de um checkout.",
            {"id": ID_SCHEMA},
            ("id",),
            _nothing,
            ucp.checkout_to_ucp,
            read_only=True,
        ),
        UcpToolSpec(
            "update_checkout",
            "Substitui todo o estado gravável de um checkout (campos omitidos são limpos).",
            {"id": ID_SCHEMA, "checkout": OBJECT, "idempotency_key": UUID_SCHEMA},
            ("id", "checkout"),
            _checkout_arguments,
            ucp.checkout_to_ucp,
            warns=True,
        ),
        UcpToolSpec(
            "complete_checkout",
            "Conclui o checkout com o instrumento escolhido em payment, de um handler de checkout.payment.handlers "
            "(Pix, cartão com parcelas, boleto); exige idempotency_key.",
            {"id": ID_SCHEMA, "payment": OBJECT, "idempotency_key": UUID_SCHEMA},
            ("id", "idempotency_key"),
            _complete_arguments,
            ucp.checkout_to_ucp,
            renames=_complete_renames,
        ),
        UcpToolSpec(
            "cancel_checkout",
            "Cancela um checkout não terminal; exige idempotency_key.",
            {"id": ID_SCHEMA, "idempotency_key": UUID_SCHEMA},
            ("id", "idempotency_key"),
            _nothing,
            ucp.checkout_to_ucp,
        ),
        UcpToolSpec(
            "get_order",
            "Obtém o estado atual de um pedido (instantâneo completo).",
            {"id": ID_SCHEMA},
            ("id",),
            _nothing,
            ucp.order_to_ucp,
            read_only=True,
        ),
    ]


def _profile(call: CallInfo) -> str:
    holder = call.meta.get("ucp") if isinstance(call.meta, dict) else None
    profile = holder.get("profile") if isinstance(holder, dict) else None
    if not isinstance(profile, str) or not profile:
        raise ProtocolError("invalid_profile_url", "_meta.ucp.profile com a URL do perfil da plataforma é obrigatório.")
    return profile


def ucp_error(exc: ProtocolError) -> MCPError:
    """BCP's JSON-RPC error with UCP 2026-01-11's error object added to its `data` (checkout-mcp.md)."""
    data = {
        **exc.jsonrpc_data(),
        "status": "error",
        "errors": [{"code": exc.code, "message": exc.content, "severity": "requires_buyer_input"}],
    }
    return MCPError(exc.jsonrpc_code, exc.content, data)


def refused_for_status_error(checkout: dict[str, Any]) -> MCPError:
    """A 2026-01-11 update, complete or cancel refused for the checkout's status (`ucp.refused_for_status`: REST
    answers 409) as checkout-mcp.md (tag v2026-01-11) "Error Handling" words an error: a JSON-RPC error whose
    `data` is UCP's error object, here with the unchanged checkout in the error's `details` (REST's 409 body)."""
    refusal = next(
        m for m in checkout["messages"] if m.get("type") == "error" and m.get("code") == "invalid_checkout_status"
    )
    error = {
        "code": refusal["code"],
        "message": refusal["content"],
        "severity": refusal["severity"],
        "details": {"checkout": checkout},
    }
    data = {"code": refusal["code"], "content": refusal["content"], "status": "error", "errors": [error]}
    return MCPError(CONFLICT_CODE, refusal["content"], data)


def _core_checkout(spec: BcpToolSpec) -> BcpToolSpec:
    """A BCP checkout tool run under the capabilities UCP REST runs it under (`ucp_rest._ucp`): a 2026-01-11
    platform whose profile names no checkout is served the core checkout (`with_core_checkout_2026_01_11`)."""
    if spec.name not in CHECKOUT_TOOLS:
        return spec
    execute = spec.execute

    def under_core_checkout(ctx: RequestContext, args: Any) -> OperationResult:
        return execute(replace(ctx, capabilities=with_core_checkout_2026_01_11(ctx.profile, ctx.capabilities)), args)

    return replace(spec, execute=under_core_checkout)


def _runner(spec: UcpToolSpec, bcp_tool: McpTool) -> Callable[[CallInfo], ToolOutcome]:
    allowed = set(spec.params)

    def run(call: CallInfo) -> ToolOutcome:
        arguments = call.arguments
        unknown = sorted(set(arguments) - allowed)
        missing = [name for name in spec.required if name not in arguments and name != "idempotency_key"]
        if "idempotency_key" in spec.required and "idempotency_key" not in arguments and not unknown:
            # BCP-IDEM-02: a missing key is said first, with its own code, as on the other faces
            error = ProtocolError("idempotency_key_required", f"idempotency_key é obrigatório em {spec.name}.")
            raise ucp_error(error)
        if unknown or missing:
            fields = {name: "argumento desconhecido" for name in unknown} | {name: "obrigatório" for name in missing}
            raise invalid_params(f"Argumentos inválidos para {spec.name}: {', '.join(fields)}.", fields)
        names = (*META_RENAMES, *(spec.renames(arguments) if spec.renames is not None else ()))
        try:
            meta: dict[str, Any] = {"ucp-agent": {"profile": _profile(call)}}
            if "idempotency_key" in arguments:
                meta["idempotency-key"] = arguments["idempotency_key"]
            bcp_arguments = {"meta": meta, **spec.to_bcp(arguments)}
            if "id" in arguments:
                bcp_arguments["id"] = arguments["id"]
            outcome = bcp_tool.run(replace(call, arguments=bcp_arguments))
        except ProtocolError as exc:
            raise ucp_error(replace(exc, content=ucp.renamed_text(exc.content, names))) from None
        except MCPError as exc:
            raise _renamed_error(exc, names) from None
        structured = outcome.structured
        if spec.warns:
            structured = ucp.with_request_warnings(structured, arguments.get("checkout"))
        # A platform whose profile is UCP 2026-08-25 gets 2026-08-25's shapes, as on the REST face (`_for_version`)
        late = ucp.platform_ucp_version(outcome.profile) == ucp.UCP_2026_08_25
        body = ucp.renamed_messages((ucp.body_2026_08_25 if late else spec.from_bcp)(structured), names)
        if not late and ucp.refused_for_status(body):
            raise refused_for_status_error(body)
        error = body.get("ucp", {}).get("status") == "error"
        text = ucp.renamed_text(outcome.text or "", names) if error else compact_json(body)
        return ToolOutcome(structured=body, text=text)

    return run


def ucp_tools() -> list[McpTool]:
    bcp = {tool.name: tool for tool in bcp_tools(only={spec.name for spec in _specs()}, adapt=_core_checkout)}
    tools = []
    for spec in _specs():
        schema = {
            "type": "object",
            "properties": spec.params,
            "required": list(spec.required),
            "additionalProperties": False,
        }
        tools.append(
            McpTool(
                name=spec.name,
                description=spec.description,
                input_schema=schema,
                output_schema=None,
                run=_runner(spec, bcp[spec.name]),
                read_only=spec.read_only,
            )
        )
    return tools


INSTRUCTIONS = (
    "Loja brasileira, face UCP 2026-01-11 do mesmo motor BCP (um perfil escrito em UCP 2026-08-25 recebe as formas "
    "dessa versão). Toda chamada leva _meta.ucp.profile (URL do perfil da plataforma); complete_checkout e "
    "cancel_checkout exigem idempotency_key. Valores em centavos de real (BRL)."
)

asgi_app = McpAsgiApp(lambda: build_server(ucp_tools(), title="UCP", instructions=INSTRUCTIONS))
