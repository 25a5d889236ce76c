"""The packing rule: a checkout's units into parcels (boxes), as a person packing the order would.

- Units go heaviest first (then largest) into the current parcel; a parcel takes the **smallest configured box**
  whose inside fits the units (each unit's sorted sides within the box's sorted sides, the units' total volume
  within the box's volume) and whose weight limit holds. When the next unit fits no box together with what is
  already in the parcel, the parcel closes and a new one starts.
- Without boxes the units are stacked: length and width are the largest unit's, height the sum of the heights
  (folded clothes, books). A stack taller than the largest side allowed starts a new parcel.
- A parcel never passes the carriers' common limits (30 kg, 100 cm a side, 200 cm L+W+H) unless one unit alone
  does; and it is never smaller than the Correios' minimum box (16 × 11 × 2 cm).
"""

from __future__ import annotations

from dataclasses import dataclass

from carriers.base import Parcel

MAX_WEIGHT_G = 30_000
MAX_SIDE_CM = 100
MAX_SUM_CM = 200
MIN_SIDES_CM = (16, 11, 2)  # length, width, height


@dataclass(frozen=True)
class Item:
    weight_g: int
    length_cm: int
    width_cm: int
    height_cm: int
    quantity: int = 1
    unit_value: int = 0  # centavos (declared value)

    @property
    def volume(self) -> int:
        return self.length_cm * self.width_cm * self.height_cm


@dataclass(frozen=True)
class Box:
    name: str
    length_cm: int  # inside
    width_cm: int
    height_cm: int
    weight_g: int = 0  # the empty box
    max_weight_g: int = MAX_WEIGHT_G

    @property
    def volume(self) -> int:
        return self.length_cm * self.width_cm * self.height_cm


def _sides(length: int, width: int, height: int) -> tuple[int, int, int]:
    a, b, c = sorted((length, width, height), reverse=True)
    return a, b, c


def _fits(box: Box, units: list[Item]) -> bool:
    inside = _sides(box.length_cm, box.width_cm, box.height_cm)
    for unit in units:
        sides = _sides(unit.length_cm, unit.width_cm, unit.height_cm)
        if any(s > b for s, b in zip(sides, inside, strict=True)):
            return False
    return sum(u.volume for u in units) <= box.volume and sum(u.weight_g for u in units) + box.weight_g <= min(
        box.max_weight_g, MAX_WEIGHT_G
    )


def _stack(units: list[Item]) -> tuple[int, int, int]:
    """(length, width, height) of the units stacked on their largest face."""
    faces = [_sides(u.length_cm, u.width_cm, u.height_cm) for u in units]
    return max(f[0] for f in faces), max(f[1] for f in faces), sum(f[2] for f in faces)


def _stack_ok(units: list[Item]) -> bool:
    length, width, height = _stack(units)
    return (
        max(length, width, height) <= MAX_SIDE_CM
        and length + width + height <= MAX_SUM_CM
        and sum(u.weight_g for u in units) <= MAX_WEIGHT_G
    )


def _minimum(length: int, width: int, height: int) -> tuple[int, int, int]:
    a, b, c = _sides(length, width, height)
    return max(a, MIN_SIDES_CM[0]), max(b, MIN_SIDES_CM[1]), max(c, MIN_SIDES_CM[2])


def _close(units: list[Item], boxes: list[Box]) -> Parcel:
    value = sum(u.unit_value for u in units)
    weight = sum(u.weight_g for u in units)
    box = next((b for b in boxes if _fits(b, units)), None)
    if box is not None:
        length, width, height = _minimum(box.length_cm, box.width_cm, box.height_cm)
        return Parcel(weight + box.weight_g, length, width, height, value)
    length, width, height = _minimum(*_stack(units))
    return Parcel(weight, length, width, height, value)


def pack(items: list[Item], boxes: list[Box] | tuple[Box, ...] = ()) -> tuple[Parcel, ...]:
    """The parcels for `items` (see the module's rule). No items, no parcels."""
    by_size = sorted(boxes, key=lambda b: (b.volume, b.max_weight_g))
    units = [
        Item(i.weight_g, i.length_cm, i.width_cm, i.height_cm, 1, i.unit_value)
        for i in items
        for _ in range(max(i.quantity, 0))
    ]
    units.sort(key=lambda u: (u.weight_g, u.volume), reverse=True)
    parcels: list[Parcel] = []
    current: list[Item] = []
    for unit in units:
        candidate = [*current, unit]
        fits = any(_fits(b, candidate) for b in by_size) if by_size else _stack_ok(candidate)
        if current and not fits:
            parcels.append(_close(current, by_size))
            current = [unit]
        else:
            current = candidate
    if current:
        parcels.append(_close(current, by_size))
    return tuple(parcels)
