"""The UCP face of BCP: names, versions and wire shapes of plain UCP, mapped onto BCP's (issue 35 item 1).

BCP is UCP localized for Brazil, so the engine, the operations and their results are BCP's; this module only
renames and reshapes, both ways, as pure functions (no Django, no models):

* names: `br.dev.bcp.shopping.*` ⇄ `dev.ucp.shopping.*` (services, capabilities); our own extensions and the Pix
  handler keep their BCP names on both faces (`br.dev.bcp.pix` is ours; UCP has no fiscal document).
* UCP 2026-01-11 (the version of the public conformance suite and samples; schemas at the spec repository's tag
  v2026-01-11, `source/discovery/profile_schema.json`, `source/schemas/shopping/*.json`): capabilities and
  handlers are *lists* of `{name, …}`, handlers sit in a top-level `payment.handlers[]` of the profile and in
  `checkout.payment.handlers[]`, keys are `signing_keys[]`, totals are never negative, Complete's body is
  `{payment_data: instrument, risk_signals?}`.
* UCP 2026-08-25 (the spec repository's main after v2026-04-08: `source/schemas/ucp.json` `map_order`,
  overview "keys[]" and `supported_versions`): registries are maps as in BCP, so only names change, plus
  `map_order` for the registries' display order.
"""

from __future__ import annotations

import copy
from typing import Any

from bcp_app.protocol.names import PROTOCOL_VERSION

UCP_2026_01_11 = "2026-01-11"
UCP_2026_08_25 = "2026-08-25"
UCP_VERSIONS = (UCP_2026_01_11, UCP_2026_08_25)  # oldest first
UCP_SERVICE = "dev.ucp.shopping"
UCP_SPEC_BASE = "https://ucp.dev/specification"
UCP_SCHEMA_BASE = "https://ucp.dev/schemas"

_BCP_PREFIX = "br.dev.bcp.shopping"
_UCP_PREFIX = "dev.ucp.shopping"
# Capabilities UCP defines under the same local name. Anything else (fiscal_document, permalink…) is a BCP
# extension and keeps its BCP name on the UCP face.
_SHARED = (
    "checkout",
    "fulfillment",
    "discount",
    "order",
    "buyer_consent",
    "ap2_mandate",
    "cart",
    "catalog.search",
    "catalog.lookup",
)
# UCP 2026-01-11 had only these (tag v2026-01-11, source/schemas/shopping/*.json).
CAPABILITIES_2026_01_11 = ("checkout", "fulfillment", "discount", "order", "buyer_consent", "ap2_mandate")


def to_ucp_name(name: str) -> str:
    """`br.dev.bcp.shopping.checkout` → `dev.ucp.shopping.checkout`; BCP-only names stay as they are."""
    if name == _BCP_PREFIX:
        return UCP_SERVICE
    local = name.removeprefix(_BCP_PREFIX + ".")
    return f"{_UCP_PREFIX}.{local}" if local != name and local in _SHARED else name


def to_bcp_name(name: str) -> str:
    """The inverse of `to_ucp_name`."""
    if name == UCP_SERVICE:
        return _BCP_PREFIX
    local = name.removeprefix(_UCP_PREFIX + ".")
    return f"{_BCP_PREFIX}.{local}" if local != name and local in _SHARED else name


def is_ucp_profile(document: Any) -> bool:
    """A platform profile written in UCP: its version is a UCP one, or it names `dev.ucp.*` capabilities."""
    if not isinstance(document, dict) or not isinstance(document.get("ucp"), dict):
        return False
    ucp = document["ucp"]
    if ucp.get("version") in UCP_VERSIONS:
        return True
    capabilities = ucp.get("capabilities")
    names = (
        [c.get("name") for c in capabilities if isinstance(c, dict)]
        if isinstance(capabilities, list)
        else list(capabilities)
        if isinstance(capabilities, dict)
        else []
    )
    return any(isinstance(n, str) and n.startswith(_UCP_PREFIX) for n in names)


def platform_profile_to_bcp(document: dict[str, Any]) -> dict[str, Any]:
    """A UCP platform profile (2026-01-11 lists or 2026-08-25 maps) as the BCP profile negotiation reads.

    Versions become BCP's: negotiation then intersects names only, which is what a UCP business does with a
    platform of an equal or older version (overview "Version Negotiation": a platform version ≤ the business
    version MUST be processed). The original version is kept in `ucp.ucp_version`.
    """
    ucp = document.get("ucp") or {}
    version = ucp.get("version")

    def entry(item: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in item.items() if k != "name"}
        out["version"] = PROTOCOL_VERSION
        if isinstance(out.get("extends"), str):
            out["extends"] = to_bcp_name(out["extends"])
        elif isinstance(out.get("extends"), list):
            out["extends"] = [to_bcp_name(e) if isinstance(e, str) else e for e in out["extends"]]
        return out

    capabilities: dict[str, list[dict[str, Any]]] = {}
    raw = ucp.get("capabilities")
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                capabilities.setdefault(to_bcp_name(item["name"]), []).append(entry(item))
    elif isinstance(raw, dict):
        for name, items in raw.items():
            if isinstance(items, list):
                capabilities[to_bcp_name(name)] = [entry(i) for i in items if isinstance(i, dict)]
    handlers: dict[str, list[dict[str, Any]]] = {}
    raw_handlers = ucp.get("payment_handlers")
    if isinstance(raw_handlers, dict):  # 2026-08-25: a map inside `ucp`
        handlers = {
            name: [{**h, "version": PROTOCOL_VERSION} for h in items if isinstance(h, dict)]
            for name, items in raw_handlers.items()
            if isinstance(items, list)
        }
    payment = document.get("payment")
    if isinstance(payment, dict) and isinstance(payment.get("handlers"), list):  # 2026-01-11: a top-level list
        for h in payment["handlers"]:
            if isinstance(h, dict) and isinstance(h.get("name"), str):
                item = {k: v for k, v in h.items() if k not in ("name", "config_schema", "instrument_schemas")}
                if "config_schema" in h:
                    item["schema"] = h["config_schema"]  # 2026-01-11's name of the handler's config schema
                handlers.setdefault(h["name"], []).append({**item, "version": PROTOCOL_VERSION})
    services: dict[str, Any] = {}
    raw_services = ucp.get("services")
    if isinstance(raw_services, dict):
        for name, value in raw_services.items():
            entries = value if isinstance(value, list) else []  # a 2026-01-11 service object names no transport list
            services[to_bcp_name(name)] = [{**e, "version": PROTOCOL_VERSION} for e in entries if isinstance(e, dict)]
    # 2026-01-11's platform profile has neither services nor handlers (overview.md "Platform Profile" example at
    # v2026-01-11): BCP's schema requires both members, empty is what such a profile says.
    out: dict[str, Any] = {
        "ucp": {
            "version": PROTOCOL_VERSION,
            "ucp_version": version,
            "services": services,
            "capabilities": capabilities,
            "payment_handlers": handlers,
        }
    }
    keys = document.get("keys") if isinstance(document.get("keys"), list) else document.get("signing_keys")
    if isinstance(keys, list):
        out["keys"] = keys
    return out


def _nth_index(items: list[Any], name: str, n: int, key: str = "name", rename: Any = to_bcp_name) -> int | None:
    """Index in `items` of the `n`-th entry whose (renamed) `key` is `name`."""
    seen = -1
    for index, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get(key), str) and rename(item[key]) == name:
            seen += 1
            if seen == n:
                return index
    return None


def profile_path_to_ucp(document: dict[str, Any], path: list[Any]) -> list[Any]:
    """A member path of `platform_profile_to_bcp(document)` (where validation found a fault) as the path of the same
    member in the platform's own UCP `document`: its names (`dev.ucp.shopping.order`), and for 2026-01-11 its lists
    (`ucp.capabilities[2]`, `payment.handlers[0].config_schema`). A path it cannot follow is returned as it is."""
    ucp: dict[str, Any] = document["ucp"] if isinstance(document.get("ucp"), dict) else {}
    if len(path) >= 3 and path[:2] == ["ucp", "capabilities"] and isinstance(path[2], str):
        name, rest = path[2], path[3:]
        raw = ucp.get("capabilities")
        if isinstance(raw, dict):
            key = next((k for k in raw if to_bcp_name(k) == name), name)
            return ["ucp", "capabilities", key, *rest]
        if isinstance(raw, list) and rest and isinstance(rest[0], int):
            index = _nth_index(raw, name, rest[0])
            if index is not None:
                return ["ucp", "capabilities", index, *rest[1:]]
    if len(path) >= 3 and path[:2] == ["ucp", "services"] and isinstance(path[2], str):
        raw = ucp.get("services")
        key = next((k for k in raw if to_bcp_name(k) == path[2]), path[2]) if isinstance(raw, dict) else path[2]
        return ["ucp", "services", key, *path[3:]]
    if len(path) >= 4 and path[:2] == ["ucp", "payment_handlers"] and isinstance(path[3], int):
        payment = document.get("payment")
        handlers = payment.get("handlers") if isinstance(payment, dict) else None
        if not isinstance(ucp.get("payment_handlers"), dict) and isinstance(handlers, list):
            index = _nth_index(handlers, str(path[2]), path[3], rename=lambda n: n)
            if index is not None:
                rest = ["config_schema" if path[4:5] == ["schema"] else p for p in path[4:5]] + path[5:]
                return ["payment", "handlers", index, *rest]
    if path[:1] == ["keys"] and "keys" not in document and "signing_keys" in document:
        return ["signing_keys", *path[1:]]
    return path


def version_newer_than_ours(version: str) -> bool:
    """overview "Version Negotiation": a platform version above ours is `version_unsupported`."""
    return version > UCP_VERSIONS[-1]


# --- discovery -------------------------------------------------------------------------------------------------


def discovery_2026_08_25(bcp_profile: dict[str, Any], *, supported_versions: dict[str, str]) -> dict[str, Any]:
    """Our BCP business profile as UCP 2026-08-25: registries are maps (as in BCP), renamed, with `map_order`."""
    ucp = bcp_profile["ucp"]

    def renamed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for e in entries:
            item = {**e, "version": UCP_2026_08_25}
            if isinstance(item.get("extends"), str):
                item["extends"] = to_ucp_name(item["extends"])
            elif isinstance(item.get("extends"), list):
                item["extends"] = [to_ucp_name(x) for x in item["extends"]]
            out.append(item)
        return out

    services = {to_ucp_name(name): renamed(entries) for name, entries in ucp["services"].items()}
    capabilities = {to_ucp_name(name): renamed(entries) for name, entries in ucp["capabilities"].items()}
    handlers = {name: list(entries) for name, entries in ucp["payment_handlers"].items()}
    return {
        "ucp": {
            "version": UCP_2026_08_25,
            "map_order": {
                "services": list(services),
                "capabilities": list(capabilities),
                "payment_handlers": list(handlers),
            },
            "supported_versions": supported_versions,
            "services": services,
            "capabilities": capabilities,
            "payment_handlers": handlers,
        },
        "keys": bcp_profile.get("keys", []),
    }


def handler_2026_01_11(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """One payment handler as UCP 2026-01-11 `payment_handler_resp` (`name`, `config_schema`,
    `instrument_schemas` are required there)."""
    schema = entry.get("schema") or entry.get("spec") or ""
    return {
        "id": entry["id"],
        "name": name,
        "version": UCP_2026_01_11,
        "spec": entry.get("spec") or schema,
        "config_schema": schema,
        "instrument_schemas": [schema] if schema else [],
        "config": entry.get("config") or {},
    }


def discovery_2026_01_11(
    bcp_profile: dict[str, Any], *, endpoints: dict[str, str], supported_versions: dict[str, str]
) -> dict[str, Any]:
    """Our BCP business profile as UCP 2026-01-11 (`source/discovery/profile_schema.json` at v2026-01-11).

    `endpoints`: transport → URL of the UCP face (`rest`, `mcp`, `a2a`).
    """
    ucp = bcp_profile["ucp"]
    service: dict[str, Any] = {"version": UCP_2026_01_11, "spec": f"{UCP_SPEC_BASE}/overview"}
    if "rest" in endpoints:
        service["rest"] = {"schema": "https://ucp.dev/services/shopping/openapi.json", "endpoint": endpoints["rest"]}
    if "mcp" in endpoints:
        service["mcp"] = {"schema": "https://ucp.dev/services/shopping/openrpc.json", "endpoint": endpoints["mcp"]}
    if "a2a" in endpoints:
        service["a2a"] = {"endpoint": endpoints["a2a"]}
    capabilities = []
    for name, entries in ucp["capabilities"].items():
        ucp_name = to_ucp_name(name)
        for e in entries:
            item: dict[str, Any] = {"name": ucp_name, "version": UCP_2026_01_11}
            if ucp_name.startswith(_UCP_PREFIX + "."):
                local = ucp_name.removeprefix(_UCP_PREFIX + ".")
                if local not in CAPABILITIES_2026_01_11:
                    continue  # not in 2026-01-11: offered on the newer face only
                item["spec"] = f"{UCP_SPEC_BASE}/{local.replace('_', '-')}"
                item["schema"] = f"{UCP_SCHEMA_BASE}/shopping/{local}.json"
            else:
                item["version"] = e.get("version", PROTOCOL_VERSION)  # a BCP extension: BCP's own version
                item["spec"], item["schema"] = e.get("spec"), e.get("schema")
            extends = e.get("extends")
            if isinstance(extends, list):
                extends = extends[0] if extends else None  # 2026-01-11 `extends` is one name
            if isinstance(extends, str):
                item["extends"] = to_ucp_name(extends)
            if "config" in e:
                item["config"] = e["config"]
            capabilities.append(item)
    handlers = [handler_2026_01_11(name, e) for name, entries in ucp["payment_handlers"].items() for e in entries]
    return {
        "ucp": {
            "version": UCP_2026_01_11,
            "supported_versions": supported_versions,
            "services": {UCP_SERVICE: service},
            "capabilities": capabilities,
        },
        "payment": {"handlers": handlers},
        "signing_keys": bcp_profile.get("keys", []),
    }


# --- requests (UCP 2026-01-11 → BCP) --------------------------------------------------------------------------

_BUYER_FIELDS = ("first_name", "last_name", "email", "phone_number", "consent")


def _buyer_to_bcp(buyer: Any) -> Any:
    if not isinstance(buyer, dict):
        return buyer
    out = {k: buyer[k] for k in _BUYER_FIELDS if k in buyer}
    full = buyer.get("full_name")
    if isinstance(full, str) and full.strip() and not out.get("first_name"):
        first, _, last = full.strip().partition(" ")
        out["first_name"] = first
        if last and not out.get("last_name"):
            out["last_name"] = last
    return out


_INSTRUMENT_FIELDS = ("id", "handler_id", "type", "billing_address", "credential", "installments")
# Our extension members of a 2026-01-11 `payment` (`payment["br.dev.bcp.pix"]`, see `checkout_to_ucp`).
_EXTENSION_PREFIX = "br.dev.bcp."


def _instrument_to_bcp(data: Any, *, selected: bool | None = None) -> Any:
    """One UCP instrument as BCP's `InstrumentIn`: display members (`brand`, `last_digits`, the echoed `pix`
    charge…) are not BCP's input and are dropped; what is left BCP validates."""
    if not isinstance(data, dict):
        return data
    out = {k: data[k] for k in _INSTRUMENT_FIELDS if k in data}
    if selected is not None:
        out["selected"] = selected
    elif "selected" in data:
        out["selected"] = data["selected"]
    return out


def payment_request_to_bcp(payment: Any) -> Any:
    """The `payment` of a UCP Create/Update → BCP's `{instruments: [...]}`, so the engine prices the choice at
    update (the Pix discount, card interest) as for a BCP platform, and complete needs no second call.

    * 2026-01-11 (`payment_update_req.json` at the tag: `selected_instrument_id` — "The id of the currently
      selected payment instrument from the instruments array" — and `instruments[]`): the instrument the id names
      is the selected one. An agent that writes back our answer, whose non-card instrument is the extension
      member `payment["br.dev.bcp.pix"]` (cards are the only 2026-01-11 instrument), keeps that choice.
    * 2026-08-25 (BCP's shapes, `instruments[]` each with `selected`): passed through as BCP reads it.

    A `selected_instrument_id` that names no instrument chooses none (the engine would take the first listed
    otherwise); `request_warnings` says so. Handlers (2026-01-11 lists the platform's) are not BCP's input."""
    if not isinstance(payment, dict):
        return payment  # BCP's validation says `payment` must be an object
    instruments = payment.get("instruments")
    if instruments is not None and not isinstance(instruments, list):
        return {"instruments": instruments}
    chosen = payment.get("selected_instrument_id")
    if chosen is None:
        return {"instruments": [_instrument_to_bcp(i) for i in instruments or []]}
    listed = _with_chosen(payment)
    if listed is None:
        return {"instruments": []}
    return {
        "instruments": [_instrument_to_bcp(i, selected=isinstance(i, dict) and i.get("id") == chosen) for i in listed]
    }


def _with_chosen(payment: dict[str, Any]) -> list[Any] | None:
    """`payment.instruments` with the one `selected_instrument_id` names (from our extension member when the agent
    wrote our answer back), or None when it names none."""
    chosen = payment.get("selected_instrument_id")
    listed = list(payment.get("instruments") or [])
    if not any(isinstance(i, dict) and i.get("id") == chosen for i in listed):
        listed += [
            value
            for key, value in payment.items()
            if key.startswith(_EXTENSION_PREFIX) and isinstance(value, dict) and value.get("id") == chosen
        ][:1]
    return listed if any(isinstance(i, dict) and i.get("id") == chosen for i in listed) else None


def checkout_request_to_bcp(body: Any) -> Any:
    """Create/Update body of UCP (2026-01-11 or 2026-08-25) → BCP. Members BCP does not read are dropped: the
    request's `id` (the business assigns ids), `currency` (BRL only: another one gets a warning, `request_warnings`),
    `platform`; an item's `title` (the catalog's title wins, as in UCP). `payment` is the chosen instrument
    (`payment_request_to_bcp`)."""
    if not isinstance(body, dict):
        return body
    out: dict[str, Any] = {}
    lines = body.get("line_items")
    if isinstance(lines, list):
        out["line_items"] = [
            {
                **({"id": li["id"]} if isinstance(li, dict) and "id" in li else {}),
                "item": {"id": li["item"].get("id")}
                if isinstance(li, dict) and isinstance(li.get("item"), dict)
                else (li.get("item") if isinstance(li, dict) else None),
                "quantity": li.get("quantity") if isinstance(li, dict) else None,
            }
            for li in lines
        ]
    elif lines is not None:
        out["line_items"] = lines
    if body.get("buyer") is not None:
        out["buyer"] = _buyer_to_bcp(body["buyer"])
    for name in ("context", "signals", "attribution", "discounts", "fulfillment", "cart_id"):
        if body.get(name) is not None:
            out[name] = body[name]
    if body.get("payment") is not None:
        out["payment"] = payment_request_to_bcp(body["payment"])
    risk = body.get("risk_signals")
    if isinstance(risk, dict) and risk and "signals" not in out:
        out["signals"] = risk
    return out


def complete_request_to_bcp(body: Any) -> Any:
    """Complete body of UCP 2026-01-11 (`payment_data.json`: `{payment_data: instrument, risk_signals?}`) → BCP
    (`{payment: {instruments: [one instrument]}}`). A body already in BCP's shape passes through."""
    if not isinstance(body, dict) or "payment_data" not in body:
        return body
    return {"payment": {"instruments": [_instrument_to_bcp(body.get("payment_data"), selected=True)]}}


# --- responses (BCP → UCP 2026-01-11) -------------------------------------------------------------------------

_NEGATIVE_TOTALS = ("discount", "items_discount")
_TOTAL_TYPES = ("items_discount", "subtotal", "discount", "fulfillment", "tax", "fee", "total")
_SEVERITIES = ("recoverable", "requires_buyer_input", "requires_buyer_review")


def _totals(totals: Any) -> Any:
    """2026-01-11 totals are amounts ≥ 0 of a closed set of types: a discount is shown as its size (the
    `discount` type says it is taken off), other BCP types become `fee` with their display text."""
    if not isinstance(totals, list):
        return totals
    out = []
    for t in totals:
        if not isinstance(t, dict):
            continue
        item = {k: v for k, v in t.items() if k != "lines"}
        if item.get("type") in _NEGATIVE_TOTALS and isinstance(item.get("amount"), int):
            item["amount"] = abs(item["amount"])
        elif item.get("type") not in _TOTAL_TYPES:
            item["type"] = "fee"
        out.append(item)
    return out


def _messages(messages: Any, *, error_response: bool = False) -> Any:
    """Messages in 2026-01-11's shapes. An Error Response (`ucp.status` "error": no resource, e.g. an order this
    platform may not read) keeps BCP's `unrecoverable` (BCP §5.1, §7): 2026-01-11 defines no Error Response, and
    UCP's, from 2026-04-08 on, comes with `unrecoverable` ("no valid resource exists to act on"); a
    `requires_buyer_input` there told the agent to hand the buyer over, who cannot fix it either."""
    if not isinstance(messages, list):
        return messages
    out = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        item = {k: v for k, v in m.items() if k not in ("presentation", "image_url", "url")}
        if item.get("type") == "error" and item.get("severity") not in _SEVERITIES and not error_response:
            # 2026-01-11's checkout has no `unrecoverable`: its own version_unsupported example hands the buyer over.
            item["severity"] = "requires_buyer_input"
        out.append(item)
    return out


def _fulfillment(fulfillment: Any) -> Any:
    if not isinstance(fulfillment, dict):
        return fulfillment
    out = copy.deepcopy(fulfillment)
    for method in out.get("methods") or []:
        for group in method.get("groups") or []:
            for option in group.get("options") or []:
                description = option.get("description")
                if isinstance(description, dict):  # BCP's Description object; 2026-01-11 has a string
                    option["description"] = description.get("plain") or next(iter(description.values()), None)
                option["totals"] = _totals(option.get("totals") or [])
        for destination in method.get("destinations") or []:
            destination.pop("type", None) if destination.get("type") == "shipping_address" else None
    out.pop("available_methods", None)
    return out


def _discounts(discounts: Any) -> Any:
    if not isinstance(discounts, dict):
        return discounts
    out = copy.deepcopy(discounts)
    for applied in out.get("applied") or []:
        applied.pop("provisional", None)
        applied.pop("eligibility", None)
        if isinstance(applied.get("amount"), int):
            applied["amount"] = abs(applied["amount"])
        for allocation in applied.get("allocations") or []:
            if isinstance(allocation.get("amount"), int):
                allocation["amount"] = abs(allocation["amount"])
    return out


def _envelope(ucp: Any) -> dict[str, Any]:
    capabilities = ucp.get("capabilities") if isinstance(ucp, dict) else None
    listed = []
    if isinstance(capabilities, dict):
        for name in capabilities:
            ucp_name = to_ucp_name(name)
            version = UCP_2026_01_11 if ucp_name.startswith(_UCP_PREFIX + ".") else PROTOCOL_VERSION
            listed.append({"name": ucp_name, "version": version})
    out: dict[str, Any] = {"version": UCP_2026_01_11, "capabilities": listed}
    if isinstance(ucp, dict) and ucp.get("status") == "error":
        out["status"] = "error"
    return out


_CONSENT_PREFIX = "br.dev.bcp.consent."
_CONSENT_SHORT = {"sale_or_sharing": "sale_of_data"}


def _buyer(buyer: Any) -> Any:
    """2026-01-11's buyer_consent is the short boolean form (`{"marketing": true, …}`, buyer_consent.json at
    v2026-01-11); BCP answers purpose-keyed objects."""
    if not isinstance(buyer, dict) or not isinstance(buyer.get("consent"), dict):
        return buyer
    consent = {}
    for key, value in buyer["consent"].items():
        if key.startswith(_CONSENT_PREFIX) and isinstance(value, dict):
            local = key.removeprefix(_CONSENT_PREFIX)
            consent[_CONSENT_SHORT.get(local, local)] = bool(value.get("granted"))
    return {**{k: v for k, v in buyer.items() if k != "tax_id"}, "consent": consent}


def checkout_to_ucp(body: dict[str, Any]) -> dict[str, Any]:
    """A BCP checkout response (or §5.3 Error Response) as UCP 2026-01-11 `checkout_resp`."""
    ucp = body.get("ucp") or {}
    out: dict[str, Any] = {"ucp": _envelope(ucp)}
    if ucp.get("status") == "error":
        out["messages"] = _messages(body.get("messages"), error_response=True)
        if "continue_url" in body:
            out["continue_url"] = body["continue_url"]
        return out
    for name, value in body.items():
        if name in ("ucp", "policies", "ap2", "context"):
            continue
        if name == "line_items" and isinstance(value, list):
            value = [{**li, "totals": _totals(li.get("totals"))} for li in value if isinstance(li, dict)]
        elif name == "totals":
            value = _totals(value)
        elif name == "messages":
            value = _messages(value)
        elif name == "fulfillment":
            value = _fulfillment(value)
        elif name == "discounts":
            value = _discounts(value)
        elif name == "buyer":
            value = _buyer(value)
        elif name == "payment":
            continue  # rebuilt below with the handlers
        out[name] = value
    handlers = [
        handler_2026_01_11(name, e)
        for name, entries in (ucp.get("payment_handlers") or {}).items()
        for e in entries
        if isinstance(e, dict)
    ]
    payment: dict[str, Any] = {"handlers": handlers}
    bcp_payment = body.get("payment")
    if isinstance(bcp_payment, dict):
        instruments = [i for i in bcp_payment.get("instruments") or [] if isinstance(i, dict)]
        if instruments:
            chosen = next((i for i in instruments if i.get("selected")), instruments[0])
            payment["selected_instrument_id"] = chosen.get("id")
            # 2026-01-11's `payment_instrument.json` is one of a single schema, the card instrument
            # (`types/card_payment_instrument.json`: `id`, `handler_id`, `type: card`, `brand`, `last_digits`
            # required). A card is listed once it was charged: BCP's `display` then names the brand and last four
            # digits the gateway gave. Before that only `selected_instrument_id` names the choice. A Pix (or other
            # Brazilian) instrument, with the charge the buyer pays, is an extension member of `payment` named
            # after our handler: `payment["br.dev.bcp.pix"]` (payment.json allows additional members).
            cards = [_card_2026_01_11(i) for i in instruments if i.get("type") == "card"]
            if any(cards):
                payment["instruments"] = [card for card in cards if card]
            for instrument in instruments:
                if instrument.get("type") != "card":
                    payment[f"br.dev.bcp.{instrument.get('type')}"] = instrument
        for name, value in bcp_payment.items():
            if name != "instruments":
                payment[name] = value  # e.g. the Pix charge (br.dev.bcp.pix), an extension member
    out["payment"] = payment
    return out


def _card_2026_01_11(instrument: dict[str, Any]) -> dict[str, Any] | None:
    """A BCP card instrument as 2026-01-11's `card_payment_instrument.json`, or None while its brand and last
    digits are unknown (both required there)."""
    display = instrument.get("display")
    if not isinstance(display, dict):
        return None
    brand, last_digits = display.get("brand"), display.get("last_digits")
    if not brand or not last_digits:
        return None
    return {
        "id": instrument.get("id"),
        "handler_id": instrument.get("handler_id"),
        "type": "card",
        "brand": brand,
        "last_digits": last_digits,
    }


def order_to_ucp(body: dict[str, Any]) -> dict[str, Any]:
    """A BCP order (or Error Response) as UCP 2026-01-11 `order.json`."""
    ucp = body.get("ucp") or {}
    out: dict[str, Any] = {"ucp": _envelope(ucp)}
    for name, value in body.items():
        if name in ("ucp", "policies"):
            continue
        if name == "totals":
            value = _totals(value)
        elif name == "messages":
            value = _messages(value, error_response=ucp.get("status") == "error")
        elif name == "line_items" and isinstance(value, list):
            value = [_order_line(li) if isinstance(li, dict) else li for li in value]
        elif name == "adjustments" and isinstance(value, list):
            value = [_adjustment(a) if isinstance(a, dict) else a for a in value]
        out[name] = value
    return out


def _order_line(line: dict[str, Any]) -> dict[str, Any]:
    """2026-01-11's line status is derived from its quantities only (`types/order_line_item.json`: "fulfilled if
    quantity.fulfilled == quantity.total, partial if quantity.fulfilled > 0, otherwise processing"); BCP's
    `removed` (a canceled line, total 0) has no value of its own there, the cancellation is the adjustment."""
    out = {**line, "totals": _totals(line.get("totals"))}
    quantity = line.get("quantity")
    if isinstance(quantity, dict) and isinstance(quantity.get("total"), int):
        total, fulfilled = quantity["total"], int(quantity.get("fulfilled") or 0)
        out["status"] = "fulfilled" if fulfilled == total else "partial" if fulfilled > 0 else "processing"
    return out


def _adjustment(adjustment: dict[str, Any]) -> dict[str, Any]:
    """2026-01-11's `types/adjustment.json`: `{id, type, occurred_at, status, line_items?, amount?, description?}`,
    no `totals`. `amount` ("Amount in minor units (cents) for refunds, credits, price adjustments") is the size of
    BCP's signed `total` (money back is negative there); an adjustment BCP gives no total (a cancellation before
    anything was paid) has none. Its lines carry the quantity affected ("minimum": 1); BCP signs it (−1 for a
    unit taken off the order)."""
    out = {k: v for k, v in adjustment.items() if k != "totals"}
    totals = adjustment.get("totals")
    total = next(
        (t.get("amount") for t in totals if isinstance(t, dict) and t.get("type") == "total")
        if isinstance(totals, list)
        else iter(()),
        None,
    )
    if isinstance(total, int):
        out["amount"] = abs(total)
    lines = adjustment.get("line_items")
    if isinstance(lines, list):
        out["line_items"] = [
            {**li, "quantity": abs(li["quantity"])}
            if isinstance(li, dict) and isinstance(li.get("quantity"), int)
            else li
            for li in lines
            if not (isinstance(li, dict) and li.get("quantity") == 0)
        ]
    return out


# --- paths and envelopes of errors on the UCP face ------------------------------------------------------------

# UCP 2026-01-11's Complete body (`payment_data.json`) is one instrument, BCP's `payment.instruments[0]`.
COMPLETE_RENAMES = (("payment.instruments[0]", "payment_data"), ("payment.instruments", "payment_data"))


def renamed_text(text: str, renames: tuple[tuple[str, str], ...]) -> str:
    """BCP's member paths in a message (`$.payment.instruments[0].credential`, "Campo inválido payment…") as the
    UCP request's names (`$.payment_data.credential`)."""
    for bcp_name, ucp_name in renames:
        text = text.replace(bcp_name, ucp_name)
    return text


def renamed_messages(body: dict[str, Any], renames: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """A response whose `messages[].path` and `content` use the UCP request's names (see `renamed_text`)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return body
    out = []
    for message in messages:
        if isinstance(message, dict):
            message = {
                k: renamed_text(v, renames) if k in ("path", "content") and isinstance(v, str) else v
                for k, v in message.items()
            }
        out.append(message)
    return {**body, "messages": out}


def protocol_error_envelope(version: str) -> dict[str, Any]:
    """The `ucp` member of a protocol error on the UCP face (overview.md, "Negotiation": "Businesses MUST include
    the `ucp` field in every response containing: `version` … `capabilities`: Array of active capabilities for this
    response"): none is active when the request was refused. 2026-08-25's registries are maps."""
    return {"version": version, "capabilities": {} if version == UCP_2026_08_25 else []}


def request_warnings(body: Any) -> list[dict[str, Any]]:
    """Warnings for a Create/Update that asked for something the shop does not do, naming the member, rather than
    answering otherwise in silence: a currency other than BRL (the checkout is priced in BRL, the shop's only
    currency: 2026-01-11's response `currency` is the business's), a `payment.selected_instrument_id` that names
    no instrument (none is chosen). Warnings, not errors: the conformance suite's every Create sends `USD` and
    `selected_instrument_id` with no instruments, and a checkout in BRL is still one the agent can complete."""
    if not isinstance(body, dict):
        return []
    out = []
    currency = body.get("currency")
    if currency is not None and not (isinstance(currency, str) and currency.upper() == "BRL"):
        out.append(
            {
                "type": "warning",
                "code": "currency_unsupported",
                "path": "$.currency",
                "content": f"Moeda {str(currency)[:20]!r} não aceita em currency: esta loja vende só em reais (BRL); "
                "os valores estão em centavos de real.",
            }
        )
    payment = body.get("payment")
    if (
        isinstance(payment, dict)
        and payment.get("selected_instrument_id") is not None
        and _with_chosen(payment) is None
    ):
        out.append(
            {
                "type": "warning",
                "code": "instrument_not_found",
                "path": "$.payment.selected_instrument_id",
                "content": f"{str(payment['selected_instrument_id'])[:100]!r} não é o id de nenhum instrumento de "
                "payment.instruments: nenhum instrumento foi escolhido.",
            }
        )
    return out


def with_request_warnings(body: dict[str, Any], request: Any) -> dict[str, Any]:
    """`body`, BCP's answer to a UCP Create/Update whose UCP body (or MCP `checkout` argument, or A2A intent part)
    was `request`, with `request_warnings(request)` after its messages: the one place the REST, MCP and A2A faces
    add them, so the same input gets the same messages on each. An Error Response is left as it is."""
    warnings = request_warnings(request)
    if not warnings or (body.get("ucp") or {}).get("status") == "error":
        return body
    return {**body, "messages": [*(body.get("messages") or []), *warnings]}


def order_event_to_ucp(body: dict[str, Any], *, event_id: str, created_time: str) -> dict[str, Any]:
    """A BCP order as UCP 2026-01-11's order event webhook body (`openapi.json` `webhooks.orderEvent`: the full
    `order` plus `event_id` and `created_time`, RFC 3339)."""
    return {**order_to_ucp(body), "event_id": event_id, "created_time": created_time}


# --- responses (BCP → UCP 2026-08-25) -------------------------------------------------------------------------


def envelope_2026_08_25(envelope: Any) -> dict[str, Any]:
    """A BCP response's `ucp` envelope as 2026-08-25's (`ucp.json#/$defs/response_checkout_schema` on the spec's main
    before the version cut): the same maps, UCP's names, UCP's version on UCP's capabilities; our extensions and
    handlers keep their BCP names and versions."""
    if not isinstance(envelope, dict):
        return {"version": UCP_2026_08_25}

    def renamed(registry: Any) -> Any:
        if not isinstance(registry, dict):
            return registry
        out = {}
        for name, entries in registry.items():
            ucp_name = to_ucp_name(name)
            ours = not ucp_name.startswith(_UCP_PREFIX)
            out[ucp_name] = [
                e if ours or not isinstance(e, dict) else {**e, "version": UCP_2026_08_25}
                for e in (entries if isinstance(entries, list) else [])
            ]
        return out

    out = {**envelope, "version": UCP_2026_08_25}
    for member in ("services", "capabilities"):
        if member in envelope:
            out[member] = renamed(envelope[member])
    return out


def body_2026_08_25(body: dict[str, Any]) -> dict[str, Any]:
    """A BCP checkout or order (or Error Response) as UCP 2026-08-25: its body shapes are BCP's (maps, signed
    totals: discounts are negative, `common/types/total.json`), so only the envelope's names and versions change."""
    return {**body, "ucp": envelope_2026_08_25(body.get("ucp"))}


def platform_ucp_version(profile: Any) -> str | None:
    """The UCP version a platform's profile was written in (kept by `platform_profile_to_bcp`), None for BCP."""
    ucp = profile.get("ucp") if isinstance(profile, dict) else None
    version = ucp.get("ucp_version") if isinstance(ucp, dict) else None
    return version if version in UCP_VERSIONS else None


def refused_for_status(body: dict[str, Any]) -> bool:
    """The operation was refused for the checkout's status (update, complete or cancel of a `completed` or
    `canceled` checkout, or during `complete_in_progress`: BCP §4.3 answers 200 with the unchanged checkout and an
    `invalid_checkout_status` error). On UCP 2026-01-11 that is a failed request: checkout.md (tag v2026-01-11,
    lines 339-343) "businesses **SHOULD** send back an error indicating the operation is not allowed", and
    checkout-rest.md "Status Codes" (lines 1301-1312) "UCP uses standard HTTP status codes to indicate the success
    or failure of an API request", `200 OK` "The request was successful", `409 Conflict` "The request could not be
    completed due to a conflict". The body stays the checkout with its error message (`status`, `messages`, as
    "Error Responses" lines 1317-1333 show). UCP 2026-04-08 on (checkout-rest.md "Business Outcomes") answers 200,
    as BCP does: only the 2026-01-11 face changes the status. Over MCP (checkout-mcp.md "Error Handling", lines
    565-569: "Error responses follow JSON-RPC 2.0 format", the UCP error object in the error's `data`) the same
    refusal is a JSON-RPC error (`transports/mcp/ucp.py`); the A2A binding (checkout-a2a.md) words no error: the
    reply keeps carrying the checkout and its message."""
    messages = body.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("type") == "error" and m.get("code") == "invalid_checkout_status"
        for m in messages
    )
