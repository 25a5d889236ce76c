"""Fulfillment evaluation of a checkout (BCP §9): one method (shipping or pickup) for all physical lines.

Ids are stable: methods "method_shipping"/"method_pickup", groups "group_shipping"/"group_pickup",
options = `ShippingMethod.code` ("pac", "sedex", "motoboy", "retirada"), shipping destination
`dest_…` (business-assigned, kept while the checkout has an address), pickup destinations =
`PickupLocation.public_id` (`loc_…`). A single platform-written shipping address is selected
automatically when no `selected_destination_id` is sent; options are never chosen for the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from shop.checkout.cep import UFS, cep_digits, cep_format, cep_uf
from shop.checkout.outputs import OptionView
from shop.checkout.shipping import ShippingConfig, pickup_options, shipping_options
from shop.checkout.types import AddressInput, CheckoutMessage, FulfillmentInput, FulfillmentMethodInput, bounded
from shop.models import Checkout, PickupLocation, new_destination_id

M0 = "$.fulfillment.methods[0]"
DEST0 = f"{M0}.destinations[0]"
SEL_DEST = f"{M0}.selected_destination_id"
SEL_OPT = f"{M0}.groups[0].selected_option_id"

METHOD_IDS = {"shipping": "method_shipping", "pickup": "method_pickup"}
GROUP_IDS = {"shipping": "group_shipping", "pickup": "group_pickup"}

EMPTY_FIELDS: dict[str, str] = {
    "fulfillment_type": "",
    "ship_destination_id": "",
    "ship_first_name": "",
    "ship_last_name": "",
    "ship_phone": "",
    "ship_cep": "",
    "ship_uf": "",
    "ship_city": "",
    "ship_street": "",
    "ship_number": "",
    "ship_complement": "",
    "ship_neighborhood": "",
    "ship_country": "",
    "selected_destination_id": "",
    "selected_option_id": "",
}


def _err(code: str, content: str, path: str) -> CheckoutMessage:
    return CheckoutMessage(type="error", code=code, content=content, severity="recoverable", path=path)


@dataclass
class FulfillmentEvaluation:
    fields: dict[str, str]  # Checkout model columns
    snapshot: dict[str, object]  # {"methods": [...], "available_methods": [...]} in BCP shape
    messages: list[CheckoutMessage] = field(default_factory=list)
    rejections: list[CheckoutMessage] = field(default_factory=list)  # update → unchanged checkout
    selected_option: OptionView | None = None


def split_street_address(value: str) -> tuple[str, str]:
    """ "Rua das Flores, 123" → ("Rua das Flores", "123")."""
    street, sep, number = value.rpartition(",")
    if sep and number.strip():
        return street.strip(), number.strip()
    return value.strip(), ""


def split_extended_address(value: str) -> tuple[str, str]:
    """ "Apto 45 - Jardim Paulista" → ("Apto 45", "Jardim Paulista"); one part is the complement."""
    complement, sep, neighborhood = value.partition(" - ")
    return (complement.strip(), neighborhood.strip()) if sep else (value.strip(), "")


def join_street_address(street: str, number: str) -> str:
    return f"{street}, {number}" if number else street


def join_extended_address(complement: str, neighborhood: str) -> str:
    return " - ".join(part for part in (complement, neighborhood) if part)


def location_destination(location: PickupLocation) -> dict[str, object]:
    return {
        "id": location.public_id,
        "type": "business_location",
        "name": location.name,
        "street_address": join_street_address(location.street, location.number),
        "extended_address": join_extended_address(location.complement, location.neighborhood),
        "address_locality": location.city,
        "address_region": location.uf,
        "postal_code": location.cep,
        "address_country": "BR",
        "opening_hours": location.opening_hours,
    }


def _option_dict(option: OptionView) -> dict[str, object]:
    return {
        "id": option.id,
        "title": option.title,
        "description": option.description,
        "amount": option.amount,
        "carrier": option.carrier,
    }


def _address_fields(address: AddressInput, *, destination_id: str, buyer_first: str, buyer_last: str) -> dict[str, str]:
    def b(value: str, limit: int, member: str) -> str:
        return bounded(value, limit, f"{DEST0}.{member}")

    street, number = b(address.street, 200, "street_address"), b(address.number, 20, "street_address")
    if not street and not number and address.street_address:
        street, number = split_street_address(b(address.street_address, 222, "street_address"))
        street, number = b(street, 200, "street_address"), b(number, 20, "street_address")
    complement = b(address.complement, 100, "extended_address")
    neighborhood = b(address.neighborhood, 100, "extended_address")
    if not complement and not neighborhood and address.extended_address:
        complement, neighborhood = split_extended_address(b(address.extended_address, 203, "extended_address"))
        complement, neighborhood = b(complement, 100, "extended_address"), b(neighborhood, 100, "extended_address")
    raw_cep = b(address.postal_code, 12, "postal_code")
    digits = cep_digits(raw_cep)
    return {
        "ship_destination_id": destination_id,
        "ship_first_name": b(address.first_name, 100, "first_name") or buyer_first,
        "ship_last_name": b(address.last_name, 100, "last_name") or buyer_last,
        "ship_phone": b(address.phone_number, 20, "phone_number"),
        "ship_cep": cep_format(digits) if digits else raw_cep[:9],
        "ship_uf": b(address.address_region, 30, "address_region").upper()[:2],
        "ship_city": b(address.address_locality, 100, "address_locality"),
        "ship_street": street,
        "ship_number": number,
        "ship_complement": complement,
        "ship_neighborhood": neighborhood,
        "ship_country": b(address.address_country or "BR", 2, "address_country").upper(),
    }


def shipping_destination_dict(fields: dict[str, str]) -> dict[str, object]:
    return {
        "id": fields["ship_destination_id"],
        "type": "shipping_address",
        "first_name": fields["ship_first_name"],
        "last_name": fields["ship_last_name"],
        "phone_number": fields["ship_phone"],
        "street_address": join_street_address(fields["ship_street"], fields["ship_number"]),
        "extended_address": join_extended_address(fields["ship_complement"], fields["ship_neighborhood"]),
        "address_locality": fields["ship_city"],
        "address_region": fields["ship_uf"],
        "postal_code": fields["ship_cep"],
        "address_country": fields["ship_country"] or "BR",
    }


def _validate_address(fields: dict[str, str]) -> tuple[list[CheckoutMessage], str | None]:
    """Messages for the stored address, and the CEP digits when the CEP is usable for quotes."""
    messages: list[CheckoutMessage] = []
    digits = cep_digits(fields["ship_cep"])
    usable: str | None = None
    if fields["ship_country"] not in ("", "BR"):
        messages.append(_err("address_undeliverable", _("Entregamos apenas no Brasil."), f"{DEST0}.address_country"))
    if not fields["ship_cep"]:
        messages.append(_err("field_required", _("Informe o CEP."), f"{DEST0}.postal_code"))
    elif digits is None:
        messages.append(_err("field_invalid", _("CEP inválido: use o formato 00000-000."), f"{DEST0}.postal_code"))
    elif cep_uf(digits) is None:
        messages.append(_err("field_invalid", _("CEP inexistente."), f"{DEST0}.postal_code"))
    else:
        uf = cep_uf(digits) or ""
        if not fields["ship_uf"]:
            fields["ship_uf"] = uf
            messages.append(
                CheckoutMessage(
                    type="info",
                    code="address_region_filled",
                    content=_("UF %(uf)s preenchida pelo CEP.") % {"uf": uf},
                    path=f"{DEST0}.address_region",
                )
            )
            usable = digits
        elif fields["ship_uf"] not in UFS:
            messages.append(_err("field_invalid", _("UF inválida."), f"{DEST0}.address_region"))
        elif fields["ship_uf"] != uf:
            messages.append(
                _err(
                    "field_invalid",
                    _("A UF não corresponde ao CEP (o CEP é de %(uf)s).") % {"uf": uf},
                    f"{DEST0}.address_region",
                )
            )
        else:
            usable = digits
    if not fields["ship_street"]:
        messages.append(_err("field_required", _("Informe a rua."), f"{DEST0}.street_address"))
    elif not fields["ship_number"]:
        messages.append(_err("field_required", _("Informe o número (ou S/N)."), f"{DEST0}.street_address"))
    if not fields["ship_city"]:
        messages.append(_err("field_required", _("Informe a cidade."), f"{DEST0}.address_locality"))
    return messages, usable


def evaluate_fulfillment(
    *,
    checkout: Checkout | None,
    data: FulfillmentInput | None,
    physical_line_ids: list[str],
    config: ShippingConfig,
    subtotal_after_discounts: int,
    buyer_first: str,
    buyer_last: str,
) -> FulfillmentEvaluation:
    """Method → destination → options → selected option → snapshot, one function per step."""
    fields = dict(EMPTY_FIELDS)
    result = FulfillmentEvaluation(fields=fields, snapshot={"methods": [], "available_methods": []})
    if not physical_line_ids:
        return result  # digital-only: nothing to fulfill physically
    chosen = _choose_method(data, config, physical_line_ids, result)
    if chosen is None:
        return result
    fields["fulfillment_type"] = chosen.type
    if chosen.type == "shipping":
        selected_destination = _shipping_destination(chosen, checkout, buyer_first, buyer_last, result)
        destinations, options = _shipping_quote(config, subtotal_after_discounts, result)
    else:
        destinations, selected_destination, options = _pickup_destination(chosen, config, result)
    fields["selected_destination_id"] = selected_destination or ""
    result.selected_option = _select_option(chosen, options, selected_destination, result)
    fields["selected_option_id"] = result.selected_option.id if result.selected_option else ""
    result.snapshot["methods"] = [
        _method_snapshot(chosen, physical_line_ids, destinations, selected_destination, options, fields)
    ]
    return result


def _choose_method(
    data: FulfillmentInput | None, config: ShippingConfig, physical_line_ids: list[str], result: FulfillmentEvaluation
) -> FulfillmentMethodInput | None:
    """The one method asked for, if the shop offers it; the others are listed as available."""
    can_ship = bool(config.shipping_methods)
    can_pickup = bool(config.pickup_methods and config.pickup_locations)
    methods = data.methods if data is not None else ()
    chosen = methods[0] if methods else None
    for index in range(1, len(methods)):
        result.rejections.append(
            _err(
                "fulfillment_method_unsupported",
                _("Use um único método de entrega para todos os itens."),
                f"$.fulfillment.methods[{index}]",
            )
        )
    if chosen is not None and not (
        (chosen.type == "shipping" and can_ship) or (chosen.type == "pickup" and can_pickup)
    ):
        result.rejections.append(
            _err(
                "fulfillment_method_unsupported",
                _("Método %(method)r não disponível.") % {"method": chosen.type},
                f"{M0}.type",
            )
        )
        chosen = None
    available = []
    if can_ship and (chosen is None or chosen.type != "shipping"):
        available.append({"type": "shipping", "description": "Entrega no endereço (Correios ou motoboy)"})
    if can_pickup and (chosen is None or chosen.type != "pickup"):
        n = len(config.pickup_locations)
        available.append({"type": "pickup", "description": f"Retirada grátis em {n} loja{'s' if n > 1 else ''}"})
    result.snapshot["available_methods"] = [
        {**a, "line_item_ids": list(physical_line_ids), "fulfillable_on": "now"} for a in available
    ]
    if chosen is None:
        result.messages.append(
            _err("field_required", _("Informe o endereço de entrega ou escolha retirada na loja."), "$.fulfillment")
        )
    return chosen


def _shipping_destination(
    chosen: FulfillmentMethodInput,
    checkout: Checkout | None,
    buyer_first: str,
    buyer_last: str,
    result: FulfillmentEvaluation,
) -> str | None:
    """The delivery address (given now, or the stored one referenced by id) into `fields`; its id if selected."""
    fields = result.fields
    wanted_dest = chosen.selected_destination_id or None
    stored_id = checkout.ship_destination_id if checkout is not None else ""
    if len(chosen.destinations) > 1:
        result.rejections.append(
            _err("field_invalid", _("Informe um único endereço de entrega."), f"{M0}.destinations[1]")
        )
    if chosen.destinations:
        given = chosen.destinations[0]
        dest_id = stored_id or new_destination_id()
        fields.update(_address_fields(given, destination_id=dest_id, buyer_first=buyer_first, buyer_last=buyer_last))
        if wanted_dest is None or wanted_dest in (dest_id, given.id):
            return dest_id
        result.rejections.append(_err("field_invalid", _("Destino de entrega desconhecido."), SEL_DEST))
    elif wanted_dest is not None and checkout is not None and stored_id and wanted_dest == stored_id:
        # The caller references the address it wrote earlier by its id (BCP §9 selection).
        for key in EMPTY_FIELDS:
            if key.startswith("ship_"):
                fields[key] = getattr(checkout, key)
        return stored_id
    elif wanted_dest is not None:
        result.rejections.append(_err("field_invalid", _("Destino de entrega desconhecido."), SEL_DEST))
    return None


def _shipping_quote(
    config: ShippingConfig, subtotal_after_discounts: int, result: FulfillmentEvaluation
) -> tuple[list[dict[str, object]], tuple[OptionView, ...]]:
    """The address checked and presented, and the shipping options for its CEP."""
    fields = result.fields
    if not fields["ship_destination_id"]:
        result.messages.append(_err("field_required", _("Informe o endereço de entrega."), f"{M0}.destinations"))
        return [], ()
    address_messages, usable_cep = _validate_address(fields)
    result.messages.extend(address_messages)
    destinations = [shipping_destination_dict(fields)]
    if usable_cep is None:
        return destinations, ()
    options = shipping_options(
        config=config, cep=usable_cep, uf=fields["ship_uf"], subtotal_after_discounts=subtotal_after_discounts
    )
    if not options:
        result.messages.append(
            _err("address_undeliverable", _("Não entregamos no CEP %(cep)s.") % {"cep": fields["ship_cep"]}, DEST0)
        )
    return destinations, options


def _pickup_destination(
    chosen: FulfillmentMethodInput, config: ShippingConfig, result: FulfillmentEvaluation
) -> tuple[list[dict[str, object]], str | None, tuple[OptionView, ...]]:
    """Every pickup location as a destination, the chosen one, and its pickup options."""
    wanted_dest = chosen.selected_destination_id or None
    destinations = [location_destination(loc) for loc in config.pickup_locations]
    location = next((loc for loc in config.pickup_locations if loc.public_id == wanted_dest), None)
    selected: str | None = None
    if wanted_dest is not None and location is None:
        result.rejections.append(_err("field_invalid", _("Loja de retirada desconhecida."), SEL_DEST))
    elif location is not None:
        selected = location.public_id
    else:
        result.messages.append(_err("field_required", _("Escolha a loja para retirada."), SEL_DEST))
    return destinations, selected, pickup_options(config=config, location=location)


def _select_option(
    chosen: FulfillmentMethodInput,
    options: tuple[OptionView, ...],
    selected_destination: str | None,
    result: FulfillmentEvaluation,
) -> OptionView | None:
    """The option asked for, when it is offered for the selected destination."""
    wanted_option = chosen.groups[0].selected_option_id if chosen.groups else None
    selected_option = next((o for o in options if o.id == wanted_option), None) if wanted_option else None
    if wanted_option and selected_option is None:
        result.rejections.append(_err("field_invalid", _("Opção de entrega indisponível para este destino."), SEL_OPT))
    elif selected_option is None and options and selected_destination:
        result.messages.append(_err("field_required", _("Escolha a forma de entrega."), SEL_OPT))
    if selected_option is not None and not selected_destination:
        return None  # an option only counts for a selected destination
    return selected_option


def _method_snapshot(
    chosen: FulfillmentMethodInput,
    physical_line_ids: list[str],
    destinations: list[dict[str, object]],
    selected_destination: str | None,
    options: tuple[OptionView, ...],
    fields: dict[str, str],
) -> dict[str, object]:
    group = {
        "id": GROUP_IDS[chosen.type],
        "line_item_ids": list(physical_line_ids),
        "options": [_option_dict(o) for o in options],
        "selected_option_id": fields["selected_option_id"] or None,
    }
    return {
        "id": METHOD_IDS[chosen.type],
        "type": chosen.type,
        "line_item_ids": list(physical_line_ids),
        "destinations": destinations,
        "selected_destination_id": selected_destination,
        "groups": [group],
    }
