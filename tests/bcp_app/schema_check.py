"""Validation of our JSON against the spec's JSON Schemas (`/work/shared/spec/schemas`, or the vendored copy)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SHARED = Path("/work/shared/spec/schemas")
VENDORED = Path(__file__).resolve().parents[2] / "bcp_app" / "jsonschemas"
BASE = "https://bcp.dev.br/draft/schemas/"


def schema_dir() -> Path:
    return SHARED if SHARED.is_dir() else VENDORED


@lru_cache(maxsize=1)
def registry() -> Registry:
    resources = []
    for path in schema_dir().rglob("*.json"):
        document = json.loads(path.read_text())
        resources.append((document["$id"], Resource.from_contents(document)))
    return Registry().with_resources(resources)


def errors(document: Any, ref: str) -> list[str]:
    validator = Draft202012Validator({"$ref": BASE + ref}, registry=registry())
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]
