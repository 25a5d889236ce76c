"""The packing rule and the cubic weight (carriers/packing.py, carriers/base.py): pure arithmetic."""

from __future__ import annotations

from carriers import Box, Item, Parcel, cubic_weight_g, pack

BOXES = (Box("P", 27, 18, 9, 90), Box("M", 36, 27, 18, 220), Box("G", 54, 36, 27, 480))
SHIRT = Item(weight_g=185, length_cm=26, width_cm=18, height_cm=3, unit_value=7990)


def test_cubic_weight_is_the_correios_divisor_6000_in_grams_rounded_up() -> None:
    assert cubic_weight_g(30, 20, 10) == 1000
    assert cubic_weight_g(27, 18, 9) == 729
    assert cubic_weight_g(1, 1, 1) == 1  # 0.17 g rounds up
    assert Parcel(2070, 36, 27, 18).billable_weight_g == 2916  # cubic beats the real weight
    assert Parcel(5000, 20, 15, 5).billable_weight_g == 5000  # the real weight beats the cubic


def test_one_shirt_goes_in_the_smallest_box_that_fits() -> None:
    assert pack([SHIRT], BOXES) == (Parcel(275, 27, 18, 9, 7990),)


def test_ten_shirts_take_the_medium_box_with_its_weight() -> None:
    ten = Item(**{**SHIRT.__dict__, "quantity": 10})
    assert pack([ten], BOXES) == (Parcel(10 * 185 + 220, 36, 27, 18, 79900),)


def test_what_fits_no_box_together_opens_a_second_parcel() -> None:
    heavy = Item(weight_g=12_000, length_cm=40, width_cm=30, height_cm=20, quantity=3)
    # 3 × 12 kg: two fit the 30 kg limit of G by volume but not by weight (24 kg + 0.48 kg fits; 36 kg not).
    assert pack([heavy], BOXES) == (Parcel(24_480, 54, 36, 27), Parcel(12_480, 54, 36, 27))


def test_without_boxes_units_are_stacked_and_kept_to_the_correios_minimum() -> None:
    # Ten 26×18×3 shirts stacked: 26×18×30, told longest side first.
    assert pack([Item(185, 26, 18, 3, quantity=10)]) == (Parcel(1850, 30, 26, 18),)
    assert pack([Item(50, 10, 5, 1)]) == (Parcel(50, 16, 11, 2),)  # smaller than the minimum box: raised to it


def test_a_stack_over_the_side_limit_starts_a_new_parcel() -> None:
    # Ten 30×20×10 units make a 100 cm stack (the side limit); the eleventh starts the next parcel.
    assert pack([Item(400, 30, 20, 10, quantity=12)]) == (Parcel(4000, 100, 30, 20), Parcel(800, 30, 20, 20))


def test_nothing_to_pack_is_no_parcels() -> None:
    assert pack([], BOXES) == ()
    assert pack([Item(100, 10, 10, 10, quantity=0)], BOXES) == ()
