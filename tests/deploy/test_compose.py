"""docker-compose.yml read against the config/settings/ package, .env.example, the Dockerfile and the README."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

import pytest
import yaml

from tests.deploy.config_names import readme_names, settings_names
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
    # and the README documents every variable the settings read
    assert settings_names() - readme_names() == set()


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
