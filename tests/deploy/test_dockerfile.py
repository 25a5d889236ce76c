"""The image definition read against the settings and the packaging (no Docker engine runs here)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.deploy.config_names import readme_names, settings_names
from tests.deploy.dockerfile import ROOT, parse


def test_two_stages_slim_runtime_and_a_non_root_user() -> None:
    build, runtime = parse()
    assert (build.base, build.name) == ("python:3.13-slim", "build")
    assert (runtime.base, runtime.name) == ("python:3.13-slim", "runtime")
    assert any("pip wheel" in run for run in build.all("RUN"))
    # Dependencies at uv.lock's versions, hash-checked; the shop's own wheel resolves nothing more.
    wheel = build.run_with("pip wheel")
    assert "--require-hashes --wheel-dir /wheels -r requirements.txt" in wheel
    assert "pip wheel --no-deps --wheel-dir /wheels ." in wheel
    # The runtime installs the wheels only: no source tree is copied into it.
    assert runtime.all("COPY") == []
    assert any("--no-index --find-links /wheels loja-bcp" in run for run in runtime.all("RUN"))
    assert runtime.all("USER") == ["loja"]


def test_collectstatic_runs_with_production_settings_so_the_manifest_exists() -> None:
    line = parse()[-1].run_with("collectstatic")
    assert "DJANGO_DEBUG=false" in line.split()
    assert "DJANGO_DEBUG=true" not in line


def test_the_build_stage_copies_everything_the_wheel_maps() -> None:
    """Every code package setup.py packs and every site folder it maps: a package left out of the image
    (the `fiscal` app was) is an ImportError at the first start."""
    copied = {source for args in parse()[0].all("COPY") for source in args.split()[:-1]}
    setup_py = (ROOT / "setup.py").read_text()
    code = re.search(r"^CODE = \[(.*)\]$", setup_py, re.MULTILINE)
    assert code, "setup.py names its code packages in CODE"
    packages = {name.strip().strip('"').rstrip("*") for name in code.group(1).split(",")}
    assert {"shop", "orders", "payments", "bcp_app", "fiscal"} <= packages
    assert {*packages, "templates", "static", "locale", "setup.py", "requirements.txt"} <= copied


def test_healthcheck_probes_healthz_and_cmd_serves_the_asgi_app() -> None:
    runtime = parse()[-1]
    (healthcheck,) = runtime.all("HEALTHCHECK")
    assert "http://127.0.0.1:8000/healthz" in healthcheck
    command = json.loads(runtime.all("CMD")[-1])
    assert command[:2] == ["uvicorn", "config.asgi:application"]
    assert "--proxy-headers" in command


def test_every_env_name_of_the_image_is_a_setting_or_documented() -> None:
    names = set(parse()[-1].env()) - {
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "PIP_NO_CACHE_DIR",
        "PIP_DISABLE_PIP_VERSION_CHECK",
    }
    assert names == {"DJANGO_SETTINGS_MODULE", "SHOP_VAR_DIR", "DJANGO_STATIC_ROOT"}
    assert names - {"DJANGO_SETTINGS_MODULE"} <= settings_names()


def test_dockerignore_keeps_secrets_state_and_caches_out() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {".env", ".env.*", "var/", ".venv/", ".git/", "**/__pycache__/", "secrets/", "staticfiles/"} <= ignored
    # the uvicorn variables the image reads from the environment are documented
    assert {"WEB_CONCURRENCY", "FORWARDED_ALLOW_IPS"} <= readme_names()


def test_requirements_txt_pins_what_uv_lock_pins() -> None:
    """The image and the production smoke test install requirements.txt: it must be uv.lock's export (what CI
    tested), or production runs versions no test ran. `make requirements.txt` after `uv lock`."""
    uv = Path(sys.executable).parent / "uv"
    command = [str(uv), "export", "--frozen", "--no-emit-project", "--no-dev", "--format", "requirements.txt"]
    exported = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout

    def pins(text: str) -> list[str]:
        return [line for line in text.splitlines() if line and not line.startswith("#")]

    committed = pins((ROOT / "requirements.txt").read_text())
    assert committed == pins(exported), "requirements.txt lags behind uv.lock: run `make requirements.txt`"
    assert any(line.startswith("django==") for line in committed)
    assert not any(line.startswith(("pytest==", "ruff==", "playwright==")) for line in committed)  # dev stays out
