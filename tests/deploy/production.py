"""The production install the smoke test serves: a clean virtualenv with the Dockerfile's install (the pinned
`requirements.txt`, hash-checked, then the shop itself not editable and without resolving anything else),
`collectstatic` run exactly as the Dockerfile's RUN line, and uvicorn started as the Dockerfile's CMD,
from a directory that is not the source tree, with the `.env.example` variables.

Built once per test session under pytest's tmp directory; the pip cache makes a rebuild ~20 s.
Everything it creates outside that directory (a Postgres database, Redis keys) is removed by
`ProductionStack.close()`.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import redis

from tests.deploy.dockerfile import ROOT, parse

APP_PREFIX = "/app"  # the image's WORKDIR; mapped to a temporary directory here


def env_example() -> dict[str, str]:
    values: dict[str, str] = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def _write_secrets(folder: Path) -> dict[str, str]:
    """Stand-ins for the three compose secrets: a signing key and a self-signed PSP client certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder.mkdir(parents=True, exist_ok=True)
    pem = serialization.PrivateFormat.PKCS8
    signing = ec.generate_private_key(ec.SECP256R1())
    (folder / "bcp-signing-key.pem").write_bytes(
        signing.private_bytes(serialization.Encoding.PEM, pem, serialization.NoEncryption())
    )
    client = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "loja-smoke")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(client.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + timedelta(days=1))
        .sign(client, hashes.SHA256())
    )
    (folder / "psp-client.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "psp-client.key").write_bytes(
        client.private_bytes(serialization.Encoding.PEM, pem, serialization.NoEncryption())
    )
    return {
        "BCP_SIGNING_KEY_FILE": str(folder / "bcp-signing-key.pem"),
        "PIX_PSP_CERT_FILE": str(folder / "psp-client.crt"),
        "PIX_PSP_KEY_FILE": str(folder / "psp-client.key"),
    }


def clean_source(folder: Path) -> Path:
    """The tracked and new (not ignored) files of the work tree, as a clean clone would have them.

    Building from the work tree itself would reuse its `build/` folder, where setuptools keeps files
    that were since deleted from the source and would put them in the wheel.
    """
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    source = folder / "src"
    for name in filter(None, listed):
        path = ROOT / name
        if path.is_file():
            target = source / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    return source


def build_venv(folder: Path) -> Path:
    venv = folder / "venv"
    source = clean_source(folder)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # Not editable: the wheel alone must carry templates, static files, locale and JSON schemas.
    # PIP_* of the caller would leak an editable or constrained setup; only the index settings are kept.
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k in {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"}
    }
    # uv (the project's installer, next to this interpreter after `make`) builds the same wheel with the same
    # backend as the Dockerfile's pip, in a fifth of the time; pip where uv is absent.
    # Like the Dockerfile: the versions uv.lock pins (the ones CI ran), then the shop alone, so the smoke test serves
    # what the image would, not the newest releases pyproject.toml's ranges allow.
    uv = Path(sys.executable).parent / "uv"
    if uv.exists():
        # --compile-bytecode: as pip (the Dockerfile's installer) does; else the first start compiles every module.
        install = [str(uv), "pip", "install", "--quiet", "--compile-bytecode", "--python", str(venv / "bin" / "python")]
    else:
        install = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    pinned = ["--require-hashes", "-r", str(source / "requirements.txt")]
    subprocess.run([*install, *pinned], check=True, env=env, cwd=folder)
    subprocess.run([*install, "--no-deps", str(source)], check=True, env=env, cwd=folder)
    return venv


class ProductionStack:
    """The installed shop served by uvicorn on a socket we hold, with its own database."""

    def __init__(self, folder: Path, venv: Path) -> None:
        self.folder = folder
        self.venv = venv
        self.app_dir = folder / "app"
        self.app_dir.mkdir(parents=True, exist_ok=True)
        self.runtime = parse()[-1]
        self.log_path = folder / "uvicorn.log"
        self.database_name = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self._redis_before: set[bytes] = set()
        self._redis: redis.Redis | None = None
        self.admin_password = secrets.token_urlsafe(16)

    # --- environment -------------------------------------------------------------------------------
    def _image_env(self) -> dict[str, str]:
        """What a process in the image sees: a bare PATH and the Dockerfile's ENV, /app mapped here."""
        env = {"PATH": f"{self.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(self.folder), "LANG": "C.UTF-8"}
        for key, value in self.runtime.env().items():
            env[key] = value.replace(APP_PREFIX, str(self.app_dir), 1) if value.startswith(APP_PREFIX) else value
        return env

    def _server_env(self, port: int) -> dict[str, str]:
        base = os.environ["DATABASE_URL"]
        parts = urlsplit(base)
        database_url = urlunsplit(parts._replace(path=f"/{self.database_name}"))
        broker = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
        origin = f"https://127.0.0.1:{port}"
        return {
            **env_example(),
            **self._image_env(),
            **_write_secrets(self.folder / "secrets"),
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "DJANGO_CSRF_TRUSTED_ORIGINS": origin,
            "BCP_PUBLIC_URL": origin,
            "DATABASE_URL": database_url,
            "REDIS_URL": broker,
            "CELERY_BROKER_URL": broker,
            # No real PSP, SMTP server or platform: the sandbox PSP (forced with DEBUG off) and the console.
            "BCP_PIX_SANDBOX": "true",
            "BCP_PIX_SANDBOX_FORCE": "true",
            "PIX_SANDBOX_WEBHOOK_SECRET": secrets.token_urlsafe(16),
            "DJANGO_EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend",
            "BCP_OUTBOUND_ALLOWLIST": "127.0.0.1",
            "DJANGO_SUPERUSER_USERNAME": "lojista",
            "DJANGO_SUPERUSER_EMAIL": "lojista@example.com.br",
            "DJANGO_SUPERUSER_PASSWORD": self.admin_password,
        }

    # --- steps -------------------------------------------------------------------------------------
    def collectstatic(self) -> subprocess.CompletedProcess[str]:
        """The Dockerfile's collectstatic RUN line, verbatim, in a shell with the image's environment."""
        return subprocess.run(
            ["sh", "-c", self.runtime.run_with("collectstatic")],
            env=self._image_env(),
            cwd=self.app_dir,
            capture_output=True,
            text=True,
            check=False,
        )

    def django_admin(self, *args: str, env: dict[str, str]) -> None:
        subprocess.run(
            [str(self.venv / "bin" / "django-admin"), *args], env=env, cwd=self.app_dir, check=True, capture_output=True
        )

    def start(self) -> None:
        self.database_name = (
            f"{urlsplit(os.environ['DATABASE_URL']).path.lstrip('/') or 'postgres'}_smoke_" + uuid.uuid4().hex[:8]
        )
        with psycopg.connect(_admin_dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.database_name}"')
        self._redis = redis.Redis.from_url(os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"))
        self._redis_before = set(self._redis.scan_iter(count=1000))
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        port = self.sock.getsockname()[1]
        self.port = port
        env = self._server_env(port)
        self.django_admin("migrate", "--noinput", env=env)
        self.django_admin("seed_demo", env=env)
        self.django_admin("createsuperuser", "--noinput", env=env)
        command = json.loads(self.runtime.all("CMD")[-1])
        # The image's command, on the socket we hold instead of 0.0.0.0:8000.
        command = [*_without_options(command, {"--host", "--port"}), "--fd", str(self.sock.fileno())]
        command[0] = str(self.venv / "bin" / command[0])
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            command, env=env, cwd=self.app_dir, stdout=log, stderr=subprocess.STDOUT, pass_fds=(self.sock.fileno(),)
        )
        deadline = time.monotonic() + 120  # a loaded 2-core machine: CI runs this beside the other workers
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start:\n{self.log_path.read_text()[-4000:]}")
            time.sleep(0.2)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_lines(self) -> list[dict[str, Any]]:
        lines = []
        for raw in self.log_path.read_text().splitlines():
            try:
                lines.append(json.loads(raw))
            except ValueError:
                continue
        return lines

    def close(self) -> None:
        # Idempotent: a test may stop the server early to read its flushed log.
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
            self.proc = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self._redis is not None:
            created = set(self._redis.scan_iter(count=1000)) - self._redis_before
            if created:
                self._redis.delete(*created)
            self._redis.close()
            self._redis = None
        if self.database_name:
            with psycopg.connect(_admin_dsn(), autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.database_name}" WITH (FORCE)')
            self.database_name = ""


def _admin_dsn() -> str:
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(scheme="postgresql", path="/postgres"))


def _without_options(command: list[str], names: set[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for token in command:
        if skip:
            skip = False
            continue
        if token in names:
            skip = True
            continue
        out.append(token)
    return out
