"""Environment names the shop knows: read by the config/ package, or documented in the README's table."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from tests.deploy.dockerfile import ROOT

ENV_HELPERS = ("env_str", "env_bool", "env_int", "env_list")  # kernel/env.py


def settings_names() -> set[str]:
    text = "\n".join(path.read_text() for path in sorted((ROOT / "config" / "settings").glob("*.py")))
    return set(re.findall(r'env_(?:str|bool|int|list)\(\s*"([A-Z0-9_]+)"', text))


def config_names() -> set[str]:
    """Every environment name config/ reads: the settings' typed helpers and any direct os.environ read
    (config/asgi.py's a2a-sdk switch); DJANGO_SETTINGS_MODULE is Django's own."""
    text = "\n".join(path.read_text() for path in sorted((ROOT / "config").rglob("*.py")))
    direct = set(re.findall(r'os\.(?:environ\.(?:get|setdefault)\(|environ\[|getenv\()\s*"([A-Z0-9_]+)"', text))
    return settings_names() | direct - {"DJANGO_SETTINGS_MODULE"}


def _table_rows() -> list[tuple[list[str], str]]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = []
    for row in section.splitlines():
        if row.startswith("| `"):
            cells = row.split("|")
            rows.append((re.findall(r"`([A-Z0-9_]+)`", cells[1]), cells[2].strip()))
    return rows


def readme_names() -> set[str]:
    return {name for names, _ in _table_rows() for name in names}


def _split_top_level(cell: str) -> list[str]:
    """`a`, `b, c` (x, y), empty → ["`a`", "`b, c` (x, y)", "empty"]: commas inside backticks or brackets
    do not separate."""
    parts, depth, quoted, current = [], 0, False, ""
    for char in cell:
        if char == "`":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
        elif not quoted and depth == 0 and char == ",":
            parts.append(current.strip())
            current = ""
            continue
        current += char
    return [*parts, current.strip()]


def readme_defaults() -> dict[str, str]:
    """Each documented name's default, as written in its row's Default cell: one comma-separated entry per
    name of the row, or one entry for all of them."""
    defaults: dict[str, str] = {}
    for names, cell in _table_rows():
        entries = _split_top_level(cell) if len(names) > 1 else [cell]
        if len(entries) == 1:
            entries = entries * len(names)
        assert len(entries) == len(names), f"README row {names}: {len(names)} names but defaults {cell!r}"
        defaults.update(zip(names, entries, strict=True))
    return defaults


def settings_defaults(debug: bool) -> dict[str, Any]:
    """The default of every typed environment read of config/settings/ whose default is a value, evaluated with
    DJANGO_DEBUG = `debug` (BASE_DIR is the project root, VAR_DIR its `var`); a default computed from
    anything else (a database option) is left out."""
    namespace: dict[str, Any] = {"DEBUG": debug, "BASE_DIR": Path("."), "VAR_DIR": Path("var"), "str": str}
    defaults: dict[str, Any] = {}
    for path in sorted((ROOT / "config" / "settings").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ENV_HELPERS):
                continue
            name = node.args[0]
            assert isinstance(name, ast.Constant), ast.unparse(node)
            given = node.args[1:2] or [k.value for k in node.keywords if k.arg == "default"]
            empty = {"env_str": "", "env_list": []}.get(node.func.id)
            try:
                value = eval(ast.unparse(given[0]), {"__builtins__": {}}, namespace) if given else empty  # noqa: S307
            except (NameError, KeyError, TypeError):
                continue
            defaults[name.value] = value
            # a setting named like its variable feeds the defaults computed from it (CELERY_VISIBILITY_TIMEOUT)
            namespace[name.value] = value
    return defaults


def as_written(value: Any) -> str:
    """A default the way the README's table writes it: `true`, `8000`, `a,b`, `var/media`; empty as "empty"."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        value = ",".join(value)
    text = str(value).removeprefix("./")
    return text or "empty"
