"""Run the official UCP conformance suite, unmodified, against the shop's UCP face (issue 35 item 2).

The suite is vendored at a pinned commit in tests/ucp_conformance/vendor (its LICENSE beside it; VERSION.md names
the commit); its imports (ucp-sdk 0.1.0, absl-py, fastapi) are dev dependencies of the project. This script:

1. migrates the database named by DATABASE_URL and loads the suite's flower_shop data (`load_ucp_test_data`);
2. starts uvicorn on a free port with the simulation endpoints on (a random `UCP_SIMULATION_SECRET`), the sandbox
   card gateway under the suite's handler id (`BCP_CARD_HANDLER_ID=mock_payment_handler`) and loopback platform
   profiles allowed (the suite serves its profile on http://localhost);
3. runs each `*_test.py` as the suite's README does (one absltest program per file, cwd = the suite), on free
   ports for the suite's mock servers, and reads each program's JUnit XML;
4. prints passes per file and writes them to var/ucp_conformance/results.json.

`--agent-profile FILE` runs the same test files from a copy of the suite whose `shopping-agent-test.json` is FILE
(a second, labelled run: the suite's own profile negotiates only `dev.ucp.shopping.order`, see the README there).

Usage: python scripts/ucp_conformance.py [--only protocol_test.py ...] [--agent-profile FILE] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tests" / "ucp_conformance" / "vendor"
PER_FILE_TIMEOUT = 300


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - our own loopback server
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"the shop did not answer {url} within {seconds:.0f} s")


def run_file(suite: Path, name: str, base_url: str, secret: str, out_dir: Path) -> dict[str, object]:
    xml_path = out_dir / f"{name}.xml"
    command = [
        sys.executable,
        name,
        f"--server_url={base_url}",
        f"--simulation_secret={secret}",
        f"--mock_webhook_port={free_port()}",
        f"--mock_agent_port={free_port()}",
        "--conformance_input=test_data/flower_shop/conformance_input.json",
        "--test_data_dir=test_data/flower_shop",
        f"--xml_output_file={xml_path}",
    ]
    started = time.monotonic()
    proc = subprocess.run(  # noqa: S603 - our own interpreter on the vendored suite's files
        command, cwd=suite, capture_output=True, text=True, timeout=PER_FILE_TIMEOUT, check=False
    )
    (out_dir / f"{name}.log").write_text(proc.stdout + proc.stderr)
    tests: dict[str, str] = {}
    if xml_path.exists():
        for case in ET.parse(xml_path).iter(  # noqa: S314 - the XML the suite just wrote here
            "testcase"
        ):
            outcome = "passed"
            if case.find("failure") is not None:
                outcome = "failed"
            elif case.find("error") is not None:
                outcome = "error"
            elif case.find("skipped") is not None:
                outcome = "skipped"
            tests[case.get("name", "?")] = outcome
    passed = sum(1 for outcome in tests.values() if outcome == "passed")
    return {
        "passed": passed,
        "total": len(tests),
        "tests": tests,
        "seconds": round(time.monotonic() - started, 1),
        "returncode": proc.returncode,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="test files to run (default: every *_test.py)")
    parser.add_argument("--agent-profile", default=None, help="run a copy of the suite with this platform profile")
    parser.add_argument("--json", default=str(ROOT / "var" / "ucp_conformance" / "results.json"))
    parser.add_argument("--skip-setup", action="store_true", help="do not migrate nor load the test data")
    args = parser.parse_args()

    port, secret = free_port(), secrets.token_urlsafe(24)
    base_url = f"http://localhost:{port}"
    env = {
        **os.environ,
        "BCP_PUBLIC_URL": base_url,
        "UCP_SIMULATION_SECRET": secret,
        "UCP_DISCOVERY_VERSION": "2026-01-11",
        "BCP_CARD_HANDLER_ID": "mock_payment_handler",
        "BCP_OUTBOUND_ALLOWLIST": "127.0.0.1,localhost",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "DJANGO_LOG_LEVEL": os.environ.get("DJANGO_LOG_LEVEL", "WARNING"),
        # The suite is one anonymous client creating hundreds of checkouts a minute: no rate limit for it.
        "BCP_RATE_LIMIT_ANONYMOUS_READ": "",
        "BCP_RATE_LIMIT_ANONYMOUS_WRITE": "",
        "BCP_RATE_LIMIT_ANONYMOUS_CHECKOUT_CREATE": "",
    }
    python = sys.executable
    if not args.skip_setup:
        for command in (["migrate", "--noinput", "-v0"], ["load_ucp_test_data"]):
            subprocess.run([python, "manage.py", *command], cwd=ROOT, env=env, check=True)  # noqa: S603

    suite = SUITE
    workdir = Path(tempfile.mkdtemp(prefix="ucp-conformance-"))
    if args.agent_profile:
        suite = workdir / "suite"
        shutil.copytree(SUITE, suite)
        shutil.copyfile(args.agent_profile, suite / "shopping-agent-test.json")
    out_dir = workdir / "out"
    out_dir.mkdir()

    log = (out_dir / "server.log").open("w")  # the server writes it until terminated below
    server = subprocess.Popen(  # noqa: S603 - uvicorn of this venv
        [
            str(Path(python).with_name("uvicorn")),
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    results: dict[str, object] = {}
    try:
        wait_for(f"{base_url}/.well-known/ucp")
        files = args.only or sorted(p.name for p in suite.glob("*_test.py"))
        for name in files:
            results[name] = run_file(suite, name, base_url, secret, out_dir)
            r = results[name]
            assert isinstance(r, dict)
            print(f"{name:36} {r['passed']:>2}/{r['total']:<2}  ({r['seconds']} s)", flush=True)
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
    passed = sum(int(r["passed"]) for r in results.values() if isinstance(r, dict))
    total = sum(int(r["total"]) for r in results.values() if isinstance(r, dict))
    print(f"UCP conformance: {passed} of {total} tests passed (logs: {out_dir})")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = {"agent_profile": args.agent_profile or "suite", "passed": passed, "total": total, "files": results}
    out.write_text(json.dumps(summary, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
