"""`manage.py check --deploy` with exactly the variables of `.env.example` (issue 31 §3), as the README promises.

Before: payments.E001 (a Bacen PSP's webhook without PIX_WEBHOOK_MTLS_HEADER), exit status 1; the example also
trusted every client as a proxy (FORWARDED_ALLOW_IPS=*), which the deploy check now warns about (shop.W001).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.deploy.dockerfile import ROOT
from tests.deploy.production import _write_secrets, env_example


def check_deploy(tmp_path: Path, **overrides: str) -> subprocess.CompletedProcess[str]:
    """`check --deploy` in a process that sees only `.env.example` (its secret files written under tmp_path)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        **env_example(),
        **_write_secrets(tmp_path / "secrets"),
        **overrides,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_deploy_is_clean_with_the_example(tmp_path: Path) -> None:
    result = check_deploy(tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "System check identified no issues (0 silenced).\n",
        "",
    )


def test_check_deploy_warns_when_every_client_is_a_trusted_proxy(tmp_path: Path) -> None:
    result = check_deploy(tmp_path, FORWARDED_ALLOW_IPS="*")
    assert result.returncode == 0  # a warning, as Django's own security checks are
    assert "(shop.W001) FORWARDED_ALLOW_IPS=* trusts X-Forwarded-For from any client" in result.stderr


def test_check_deploy_warns_when_mcp_refuses_the_public_host(tmp_path: Path) -> None:
    """The README's "In production BCP_MCP_ALLOWED_HOSTS must list the public host (otherwise 421)": .env.example did
    not, so a deploy from it refused every MCP call its own profile advertised, and nothing said so."""
    result = check_deploy(tmp_path, BCP_MCP_ALLOWED_HOSTS="127.0.0.1:*,localhost:*")
    assert result.returncode == 0
    assert (
        "(shop.W002) BCP_MCP_ALLOWED_HOSTS does not name loja.example.com.br, the host of BCP_PUBLIC_URL: every MCP "
        "call to https://loja.example.com.br/bcp/mcp is refused (421)." in result.stderr
    )
    # a port pattern names the host with any port, as the MCP SDK reads it
    port = check_deploy(
        tmp_path, BCP_PUBLIC_URL="https://loja.example.com.br:8443", BCP_MCP_ALLOWED_HOSTS="loja.example.com.br:*"
    )
    assert "shop.W002" not in port.stderr


def test_check_deploy_warns_when_nfe_would_be_simulated(tmp_path: Path) -> None:
    """.env.example left FISCAL_PROVIDER at its default, the local sandbox: a deploy from it e-mailed buyers NF-e that
    no SEFAZ authorized, and check --deploy said nothing."""
    result = check_deploy(tmp_path, FISCAL_PROVIDER="sandbox")
    assert result.returncode == 0
    assert "(shop.W003) FISCAL_PROVIDER=sandbox with DEBUG off: every paid order gets a simulated NF-e" in result.stderr
    assert "shop.W003" not in check_deploy(tmp_path, FISCAL_PROVIDER="sandbox", FISCAL_ISSUE_ON="off").stderr
