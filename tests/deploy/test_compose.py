"""docker-compose.yml read against the config/settings/ package, .env.example, the Dockerfile and the README."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

import pytest
import yaml

from tests.deploy.config_names import (
    as_written,
    config_names,
    readme_defaults,
    readme_names,
    settings_defaults,
    settings_names,
)
from tests.deploy.dockerfile import ROOT, parse
from tests.deploy.production import env_example

APP_SERVICES = ("web", "worker", "beat")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def command_text(service: dict[str, Any]) -> str:
    command = service["command"]
    return command if isinstance(command, str) else " ".join(command)


def test_services_and_their_start_order(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"db", "redis", "migrate", *APP_SERVICES}
    assert command_text(services["migrate"]) == "django-admin migrate --noinput"
    assert services["migrate"]["restart"] == "no"
    assert services["migrate"]["depends_on"] == {"db": {"condition": "service_healthy"}}
    for name in APP_SERVICES:
        assert services[name]["depends_on"] == {
            "db": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
            "migrate": {"condition": "service_completed_successfully"},
        }, name
        # only the one-shot service migrates: replicas never race on it
        assert "migrate" not in command_text(services[name])


def test_every_long_running_service_has_a_healthcheck(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        if name == "migrate":
            assert service["healthcheck"] == {"disable": True}
            continue
        assert service["healthcheck"]["test"], name
    assert "/readyz" in " ".join(compose["services"]["web"]["healthcheck"]["test"])


def test_web_and_worker_scale_from_the_environment(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert '--workers "$${WEB_CONCURRENCY:-2}"' in command_text(services["web"])
    assert "uvicorn config.asgi:application" in command_text(services["web"])
    assert '--concurrency "$${CELERY_WORKER_CONCURRENCY:-2}"' in command_text(services["worker"])
    assert command_text(services["beat"]).startswith("celery -A config beat")


def test_secrets_are_the_files_the_settings_read(compose: dict[str, Any]) -> None:
    example = env_example()
    secret_paths = {name: value for name, value in example.items() if value.startswith("/run/secrets/")}
    assert secret_paths == {
        "PIX_PSP_CERT_FILE": "/run/secrets/psp-client.crt",
        "PIX_PSP_KEY_FILE": "/run/secrets/psp-client.key",
        "BCP_SIGNING_KEY_FILE": "/run/secrets/bcp-signing-key.pem",
    }
    assert set(secret_paths) <= settings_names()
    declared = {name: spec["file"] for name, spec in compose["secrets"].items()}
    assert declared == {
        path.removeprefix("/run/secrets/"): f"./secrets/{path.removeprefix('/run/secrets/')}"
        for path in secret_paths.values()
    }
    for name in ("migrate", *APP_SERVICES):
        assert sorted(compose["services"][name]["secrets"]) == sorted(declared), name


def test_volumes_for_postgres_and_media(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert "pgdata:/var/lib/postgresql/data" in services["db"]["volumes"]
    media = parse()[-1].env()["SHOP_VAR_DIR"] + "/media"  # settings: MEDIA_ROOT = VAR_DIR / "media"
    for name in ("web", "worker"):
        assert f"media:{media}" in services[name]["volumes"], name
    assert {"pgdata", "media"} <= set(compose["volumes"])


def test_every_env_name_used_is_known(compose: dict[str, Any]) -> None:
    known = settings_names() | readme_names()
    used = set(env_example())
    for service in compose["services"].values():
        if "command" in service:
            used.update(re.findall(r"\$\$\{([A-Z0-9_]+)", command_text(service)))
    assert used - known == set()
    # and the README documents every variable config/ reads (the settings and config/asgi.py's direct read)
    assert config_names() - readme_names() == set()


def test_every_readme_variable_is_read_by_something(compose: dict[str, Any]) -> None:
    """The other way: a name in the README's table that nothing reads is a setting that was removed."""
    makefile = (ROOT / "Makefile").read_text()
    read = (
        config_names()
        | set(re.findall(r"^([A-Z][A-Z0-9_]*) \?=", makefile, re.MULTILINE))  # HOST, PORT
        | set(re.findall(r"\$\$\{([A-Z0-9_]+)", (ROOT / "docker-compose.yml").read_text()))  # the services' commands
        | {"POSTGRES_PASSWORD"}  # read by the official Postgres image of the compose `db` service (with USER and DB)
    )
    assert readme_names() - read == set()


# Rows whose Default cell says in words what an empty or opaque code default means.
DEFAULTS_IN_WORDS = {
    "DATABASE_URL": "empty: the SQLite file var/shop.sqlite3",
    "DJANGO_SECRET_KEY": "empty: a development key, refused with DEBUG off",
    "DJANGO_EMAIL_BACKEND": "Django's console backend (DEBUG) / its SMTP backend",
    "BOLETO_INSTRUCTIONS": "empty: the built-in text",
    "PIX_SANDBOX_WEBHOOK_URL": "empty: built from BCP_PUBLIC_URL",
    "PIX_KEY": "a demo EVP key",
}


def written_values(cell: str) -> list[str]:
    """The values a Default cell names, in order: `…` as written (`./var` is `var`), and the words empty/none."""
    return [
        quoted.removeprefix("./") if quoted else "empty"
        for quoted, _ in re.findall(r"`([^`]*)`|\b(empty|none)\b", cell)
    ]


def test_readme_defaults_are_the_settings_defaults() -> None:
    """Each variable's Default in the README's table is what config/settings/ falls back to; one that depends on
    DEBUG says so and names both values."""
    documented = readme_defaults()
    with_debug, without_debug = settings_defaults(debug=True), settings_defaults(debug=False)
    wrong = {}
    for name in sorted(with_debug.keys() - DEFAULTS_IN_WORDS.keys()):
        cell, on, off = documented[name], as_written(with_debug[name]), as_written(without_debug[name])
        if on == off:
            ok = written_values(cell)[:1] == [on] and cell.startswith(("`", "empty", "none"))
        elif isinstance(with_debug[name], bool):
            ok = "DEBUG" in cell
        else:
            ok = "DEBUG" in cell and {on, off} <= set(written_values(cell))
        if not ok:
            wrong[name] = (cell, on if on == off else f"{on} (DEBUG) / {off}")
    assert wrong == {}


def test_uvicorn_trusts_proxy_headers_only_from_the_compose_network(compose: dict[str, Any]) -> None:
    # Before (issue 31 §1): FORWARDED_ALLOW_IPS=* and port 8000 open on every interface, so any client chose
    # the IP that the API-key and admin lockouts count.
    (subnet,) = (ipaddress.ip_network(pool["subnet"]) for pool in compose["networks"]["default"]["ipam"]["config"])
    trusted = env_example()["FORWARDED_ALLOW_IPS"].split(",")
    assert "*" not in trusted
    assert all(ipaddress.ip_network(entry.strip()).subnet_of(subnet) for entry in trusted)  # type: ignore[arg-type]
    assert "--proxy-headers" in command_text(compose["services"]["web"])
    # and only the host's TLS proxy reaches `web`: its port is published on loopback
    assert compose["services"]["web"]["ports"] == ["127.0.0.1:8000:8000"]


# Demo defaults that cannot reach a buyer or an agent from a production install configured by .env.example.
DEMO_DEFAULTS_NOT_SEEN = {
    "PIX_MERCHANT_NAME": "a fallback: the BR Code names the razão social of Dados da loja",
    "MELHOR_ENVIO_USER_AGENT": "sent only with CARRIER=melhorenvio, whose section in the README asks for it",
}


def test_env_example_replaces_every_demo_default() -> None:
    """A deployer who copies .env.example and changes its values must meet every setting whose default is the demo
    shop's: before, production mailed buyers from pedidos@loja.example.com.br (DEFAULT_FROM_EMAIL) and named the MCP
    server and the A2A agent card "Loja Exemplo" (SHOP_NAME), as .env.example never mentioned them."""
    demo = {
        name
        for name, value in settings_defaults(debug=False).items()
        if isinstance(value, str) and re.search(r"exemplo|example", value, re.IGNORECASE)
    }
    assert demo - set(env_example()) - DEMO_DEFAULTS_NOT_SEEN.keys() == set()
    assert "PIX_KEY" in env_example()  # the demo key's default is a bare UUID, named here by hand
