"""A small reader of our Dockerfile: instructions per stage, the runtime ENV, a RUN line by keyword."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)  # (INSTRUCTION, arguments)

    def all(self, instruction: str) -> list[str]:
        return [args for name, args in self.instructions if name == instruction]

    def env(self) -> dict[str, str]:
        values: dict[str, str] = {}
        for args in self.all("ENV"):
            for token in shlex.split(args):
                key, _, value = token.partition("=")
                values[key] = value
        return values

    def run_with(self, keyword: str) -> str:
        matches = [args for args in self.all("RUN") if keyword in args]
        assert len(matches) == 1, f"expected one RUN with {keyword!r}, found {len(matches)}"
        return matches[0]


def _logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    current = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            current += stripped[:-1].strip() + " "
            continue
        lines.append(current + stripped)
        current = ""
    return lines


def parse(path: Path = ROOT / "Dockerfile") -> list[Stage]:
    stages: list[Stage] = []
    for line in _logical_lines(path.read_text()):
        instruction, _, args = line.partition(" ")
        instruction = instruction.upper()
        if instruction == "FROM":
            parts = args.split()
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            stages.append(Stage(base=parts[0], name=name))
        else:
            stages[-1].instructions.append((instruction, args.strip()))
    return stages
