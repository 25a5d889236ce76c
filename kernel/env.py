"""Small typed readers for configuration from environment variables.

Every setting of the shop comes through these helpers so that a wrong value fails at start-up
with the variable's name, instead of surfacing later as a confusing runtime error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

import dj_database_url

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class ConfigError(ValueError):
    """A configuration variable holds a value that cannot be used."""


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(f"{name}={raw!r} is not a boolean (use true/false, 1/0, yes/no, on/off)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError as exc:
        raise ConfigError(f"{name}={raw!r} is not an integer") from exc
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name}={value} must be >= {minimum}")
    return value


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]


@dataclass(frozen=True)
class DatabaseConfig:
    engine: str
    name: str
    user: str = ""
    password: str = ""
    host: str = ""
    port: str = ""
    options: dict[str, str] | None = None


def parse_database_url(url: str) -> DatabaseConfig:
    """Parse `postgres://user:pass@host:port/name?opt=v` or `sqlite:///path` with dj-database-url (the URL
    grammar every Django deployment guide uses), keeping to the two engines the shop supports and refusing a
    URL that names no database."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in {"postgres", "postgresql", "pgsql", "sqlite"}:
        raise ConfigError(f"DATABASE_URL scheme {scheme!r} is not supported (use postgres:// or sqlite:///)")
    try:
        parsed = dj_database_url.parse(url)
    except ValueError as exc:
        raise ConfigError(f"DATABASE_URL {url!r} cannot be read: {exc}") from exc
    name = str(parsed.get("NAME") or "")
    if not name or name == ":memory:":
        raise ConfigError(f"DATABASE_URL {url!r} names no database")
    engine = "django.db.backends.sqlite3" if scheme == "sqlite" else "django.db.backends.postgresql"
    options = {key: str(value) for key, value in (parsed.get("OPTIONS") or {}).items()}
    return DatabaseConfig(
        engine=engine,
        name=name,
        user=str(parsed.get("USER") or ""),
        password=str(parsed.get("PASSWORD") or ""),
        host=str(parsed.get("HOST") or ""),
        port=str(parsed.get("PORT") or ""),
        options=options or None,
    )
