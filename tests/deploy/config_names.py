"""Environment names the shop knows: read by the config/settings/ package, or documented in the README's table."""

from __future__ import annotations

import re

from tests.deploy.dockerfile import ROOT


def settings_names() -> set[str]:
    text = "\n".join(path.read_text() for path in sorted((ROOT / "config" / "settings").glob("*.py")))
    return set(re.findall(r'env_(?:str|bool|int|list)\(\s*"([A-Z0-9_]+)"', text))


def readme_names() -> set[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for row in section.splitlines():
        if row.startswith("| `"):
            first_cell = row.split("|")[1]
            names.update(re.findall(r"`([A-Z0-9_]+)`", first_cell))
    return names
