"""Issue 33, checkout input minors: emoji-only names refused; a NUL gives one clear message (no code point) and
the other errors still show; the CPF comes back formatted; "Informe o número" marks the number field."""

from __future__ import annotations

import pytest

from shop.models import Checkout
from tests.shop.test_checkout_storefront import ADDRESS, CONTACT, errors, shop_ready, start_checkout  # noqa: F401

pytestmark = pytest.mark.django_db

NUL_TEXT = "Este campo tem um caractere invisível que não é aceito: apague o campo e digite de novo."


@pytest.mark.parametrize(("first", "last"), [("😀😀", "Souza"), ("Ana", "🙂 …")])
def test_a_name_without_letters_is_refused(client, shop_ready, first, last):  # noqa: F811
    checkout_id = start_checkout(client)
    form = {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "pac", "first_name": first, "last_name": last}
    response = client.post(f"/checkout/{checkout_id}", form)
    expected = {"first_name": "Informe o nome com letras."} if first != "Ana" else {}
    expected |= {"last_name": "Informe o sobrenome com letras."} if last != "Souza" else {}
    assert errors(response) == expected
    assert Checkout.objects.get(public_id=checkout_id).status == "incomplete"


def test_names_in_any_script_pass(client, shop_ready):  # noqa: F811
    checkout_id = start_checkout(client)
    names = {"first_name": "Zoë 🌻", "last_name": "Ōno"}
    form = {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "pac", **names}
    assert errors(client.post(f"/checkout/{checkout_id}", form)) == {}


def test_a_nul_gives_one_clear_message_and_the_other_errors_too(client, shop_ready):  # noqa: F811
    checkout_id = start_checkout(client)
    # given a NUL in the name, the surname left empty and the number missing
    form = {"action": "update", **CONTACT, **ADDRESS, "first_name": "An\x00a", "last_name": "", "number": ""}
    response = client.post(f"/checkout/{checkout_id}", form)
    html = response.content.decode()
    # then the name has one message without a technical code, and the other fields say what they miss
    assert response.status_code == 400
    assert errors(response) == {
        "first_name": NUL_TEXT,
        "last_name": "Informe o sobrenome.",
        "number": "Informe o número (ou S/N).",
        "shipping_option": "Escolha a forma de entrega.",
    }
    assert "U+0000" not in html and "nulos" not in html.lower()
    # and nothing but the e-mail was stored
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.buyer_first_name, checkout.ship_street) == ("", "")


def test_the_missing_number_is_shown_at_the_number_field(client, shop_ready):  # noqa: F811
    checkout_id = start_checkout(client)
    response = client.post(
        f"/checkout/{checkout_id}", {"action": "pay", **CONTACT, **ADDRESS, "shipping_option": "pac", "number": ""}
    )
    assert errors(response) == {"number": "Informe o número (ou S/N)."}
    assert 'id="id_number" name="number" type="text" value="" maxlength="20" aria-invalid="true"' in (
        response.content.decode()
    )


def test_a_too_long_name_or_street_is_refused_naming_the_field_and_kept(client, shop_ready):  # noqa: F811
    """QA walk: a very long name pasted on a phone came back with Django's "Certifique-se de que o valor tenha no
    máximo 100 caracteres (ele possui 161).", which names no field."""
    checkout_id = start_checkout(client)
    name, street = "Maria" + " da Conceição" * 12, "Rua" + " Longa" * 50
    form = {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "pac", "first_name": name, "street": street}
    response = client.post(f"/checkout/{checkout_id}", form)
    assert errors(response) == {
        "first_name": f"Nome: no máximo 100 caracteres (você digitou {len(name)}).",
        "street": f"Rua: no máximo 200 caracteres (você digitou {len(street)}).",
    }
    assert f'value="{name}"' in response.content.decode()  # what was typed stays, to be shortened
    english = client.post(f"/checkout/{checkout_id}", form, HTTP_ACCEPT_LANGUAGE="en")
    assert errors(english)["first_name"] == f"First name: at most 100 characters (you typed {len(name)})."


def test_the_cpf_comes_back_formatted(client, shop_ready):  # noqa: F811
    checkout_id = start_checkout(client)
    form = {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "pac", "tax_id": "52998224725"}
    response = client.post(f"/checkout/{checkout_id}", form)
    assert 'name="tax_id" type="text" value="529.982.247-25"' in response.content.decode()
    assert Checkout.objects.get(public_id=checkout_id).buyer_tax_id == "52998224725"
    assert 'value="529.982.247-25"' in client.get(f"/checkout/{checkout_id}").content.decode()
