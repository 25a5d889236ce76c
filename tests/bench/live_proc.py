"""The benchmarks' server and client processes (issue 11): uvicorn as its own process with production
settings (DEBUG off, `tests.bcp_app.bench_site`), and client processes started apart from the test process,
so the clients' CPU is neither the server's GIL nor counted as server time. CPU is read from /proc.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import redis
from django.db import connection

from tests.bcp_app.live import database_url, wait_for

ROOT = Path(__file__).resolve().parents[2]
CORES = os.cpu_count() or 1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bench_cache_url() -> str:
    """The servers' shared cache, as production runs it with more than one process (README "Pools and
    caches"): `BENCH_REDIS_URL` (`make bench`: a Redis database of the bench's own), emptied first, since the
    entries of an earlier run name rows of another database; unset, every process caches in its own memory."""
    url = os.environ.get("BENCH_REDIS_URL", "")
    if url:
        redis.Redis.from_url(url).flushdb()
    return url


def cache_in_use(env: dict[str, str]) -> str:
    return "cache Redis (shared)" if env.get("REDIS_URL") else "cache local memory (per process; BENCH_REDIS_URL unset)"


NO_LIMIT = "1000000/minute"  # the limiter runs on every call but never refuses one


def flow_server_env(signing_key_file: str, broker: str, *, pool: tuple[int, int]) -> tuple[int, str, dict[str, str]]:
    """A free loopback port, its base URL and the purchase benches' server environment: `production_env`, the
    placed order's task published to `broker` (not run eagerly), a connection pool of `pool` (min, max), no rate
    limit ever hit."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = production_env(
        base_url,
        signing_key_file,
        CELERY_BROKER_URL=broker,
        CELERY_TASK_ALWAYS_EAGER="false",
        DATABASE_POOL_MIN=str(pool[0]),
        DATABASE_POOL_MAX=str(pool[1]),
        BCP_RATE_LIMIT_READ=NO_LIMIT,
        BCP_RATE_LIMIT_WRITE=NO_LIMIT,
        BCP_RATE_LIMIT_CHECKOUT_CREATE=NO_LIMIT,
    )
    return port, base_url, env


def production_env(base_url: str, signing_key_file: str, **extra: str) -> dict[str, str]:
    """The server's environment: production settings (DEBUG off: no per-query recording, compiled
    templates, the shared cache of `bench_cache_url`), plain http on loopback as behind a TLS-terminating
    proxy; the sandbox PSP forced, e-mails to the console; loopback platform profiles allowed."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.bcp_app.bench_site",
        "DATABASE_URL": database_url(),
        "REDIS_URL": bench_cache_url(),
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "BCP_PIX_SANDBOX_FORCE": "true",
        "PIX_SANDBOX_WEBHOOK_SECRET": secrets.token_urlsafe(16),
        "DJANGO_EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend",
        "DJANGO_LOG_LEVEL": "WARNING",
        "BCP_PUBLIC_URL": base_url,
        "BCP_OUTBOUND_ALLOWLIST": "127.0.0.1",
        "BCP_SIGNING_KEY_FILE": signing_key_file,
        "BCP_PIX_SANDBOX": "true",
        **extra,
    }


def _server_log() -> Any:
    """Where the server's stderr goes: `BENCH_SERVER_LOG` (a file, appended) to read a failing bench's 500s,
    else nowhere."""
    path = os.environ.get("BENCH_SERVER_LOG", "")
    return open(path, "ab") if path else subprocess.DEVNULL


class Uvicorn:
    """`uvicorn config.asgi:application` (Django, MCP and A2A, lifespan on) as a subprocess on a free port."""

    def __init__(self, env: dict[str, str], port: int, *, workers: int = 1, wrapper: tuple[str, ...] = ()) -> None:
        """`wrapper`: a command the server runs under (`callgrind_wrapper`: one process, `workers` 1)."""
        self.base_url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [
                *wrapper,
                sys.executable,
                "-m",
                "uvicorn",
                "config.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                str(workers),
                "--log-level",
                "warning",
                "--no-access-log",
                # a client holds its connection idle from its warm-up call until every client is ready, which on a
                # loaded machine outlasted uvicorn's 5 s keep-alive: the server closed it as the first call went out
                "--timeout-keep-alive",
                "300",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=_server_log(),
        )

    def wait_up(self) -> Uvicorn:
        def up() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"uvicorn exited with {self.proc.returncode}")
            try:
                return httpx.get(f"{self.base_url}/.well-known/bcp", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(up, timeout=float(os.environ.get("BENCH_START_TIMEOUT", "300")), interval=0.5)
        return self

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


def callgrind_wrapper(out: Path) -> tuple[str, ...]:
    """`Uvicorn`'s `wrapper` for a server under valgrind's callgrind, writing its dumps to `out`.N: nothing is
    counted until `Callgrind.control("-i", "on")` (Python starts about 5× slower instrumented)."""
    return ("valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", "--quiet")


class Callgrind:
    """A `Uvicorn` started with `callgrind_wrapper(out)`, driven by `callgrind_control` (valgrind's gdbserver):
    instructions are counted, not timed, so the figures do not move with the load of this shared machine."""

    def __init__(self, server: Uvicorn, out: Path) -> None:
        self.pid, self.out = server.proc.pid, out

    def control(self, *args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(self.pid)], check=True, capture_output=True, timeout=120)

    def zero(self) -> None:
        self.control("-z")

    def dump(self) -> int:
        """Instructions (every thread) since the previous dump or zeroing, from the dump this writes."""
        before = set(self.out.parent.glob(f"{self.out.name}.*"))
        self.control("-d")
        (written,) = set(self.out.parent.glob(f"{self.out.name}.*")) - before
        match = re.search(r"^(?:summary|totals): (\d+)", written.read_text(errors="replace"), re.MULTILINE)
        assert match is not None, written
        return int(match[1])


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process and its children (the uvicorn workers), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


class Clients:
    """What a run of client processes measured: calls per second over the whole window, every answer's id,
    the clients' own CPU per call, how busy the whole machine was (all cores, /proc/stat) and its CPU pressure
    (the share of the window in which some runnable task waited for a core, `cpu_pressure_us`)."""

    def __init__(
        self, rate: float, ids: list[str], client_cpu: float, busy: float, seconds: float, pressure: float = 0.0
    ) -> None:
        self.rate, self.ids, self.client_cpu, self.busy, self.seconds = rate, ids, client_cpu, busy, seconds
        self.pressure = pressure

    def __str__(self) -> str:
        return f"client CPU {self.client_cpu * 1000:4.1f} ms/call, machine {self.busy:3.0%} busy"


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot, from /proc/stat (idle and iowait are not busy)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields) - fields[3] - fields[4], sum(fields)


def cpu_pressure_us() -> int:
    """Microseconds since boot in which some runnable task waited for a core (the kernel's pressure stall
    information, /proc/pressure/cpu `some`); 0 where the kernel has none. On a shared machine at 1 client it
    says how much of a call's wall time went to waiting for a core rather than to any process's work."""
    try:
        first = Path("/proc/pressure/cpu").read_text().split("\n", 1)[0]
    except OSError:
        return 0
    return int(first.rsplit("total=", 1)[1])


def run_clients(
    kind: str, clients: int, calls: int, job: dict[str, Any], before_go: Callable[[], None] | None = None
) -> Clients:
    """`clients` client processes (tests/bench/bench_client.py), each warmed up, then released together to
    make `calls` calls. `before_go` runs once every client is ready, just before the release (a bench reads
    its CPU counters there, so the clients' warm-up calls are not counted)."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.bench.bench_client", kind, str(calls)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(clients)
    ]
    try:
        for index, proc in enumerate(procs):
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps({**job, "index": index}) + "\n")
            proc.stdin.flush()
        for proc in procs:  # every client connected and made its warm-up call
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        if before_go is not None:
            before_go()
        ticks, stalled = machine_ticks(), cpu_pressure_us()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = [json.loads(proc.communicate(timeout=600)[0]) for proc in procs]
        busy, total = (now - then for now, then in zip(machine_ticks(), ticks, strict=True))
        stalled = cpu_pressure_us() - stalled
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    started, ended = min(r["start"] for r in results), max(r["end"] for r in results)
    ids = [i for r in results for i in r["ids"]]
    return Clients(
        len(ids) / (ended - started),
        ids,
        sum(r["cpu"] for r in results) / len(ids),
        busy / total,
        ended - started,
        min(1.0, stalled / 1e6 / (ended - started)),
    )


def postgres_cpu() -> dict[int, float]:
    """CPU seconds (utime + stime, from /proc) of every Postgres backend serving this database, by pid: the
    server's pooled connections and the worker's (pg_stat_statements is not preloaded here, and exec time is
    not CPU)."""
    tick = os.sysconf("SC_CLK_TCK")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        pids = [row[0] for row in cursor.fetchall()]
    cpu: dict[int, float] = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # Postgres on another machine (or the backend just ended): not measurable here
            continue
        cpu[pid] = (int(fields[11]) + int(fields[12])) / tick
    return cpu


@dataclass
class Window:
    """One measured window: its rate, length, CPU per call (ms) of each process of the bench and the share of
    the machine's CPU that went to other processes meanwhile (this machine is shared: it says how noisy the
    window was)."""

    clients: Clients
    uvicorn: float
    worker: float
    postgres: float
    others: float

    @property
    def rate(self) -> float:
        return self.clients.rate

    @property
    def server_cpu(self) -> float:
        return self.uvicorn + self.worker + self.postgres

    @property
    def machine(self) -> float:
        """Busy CPU of the whole machine per call (ms, all cores): what a call costs once the machine is saturated,
        everything included (clients, Redis, kernel)."""
        return self.clients.busy * CORES * self.clients.seconds / len(self.clients.ids) * 1000


def measure(
    server: Uvicorn,
    kind: str,
    clients: int,
    calls: int,
    job: dict[str, Any],
    *,
    worker_pid: int | None = None,
    settle: Callable[[], None] | None = None,
) -> Window:
    """One window of `run_clients` on `server`, with the CPU per call of uvicorn, of the Celery worker
    `worker_pid` (if any) and of this database's Postgres backends, counted from the release (not the
    clients' warm-up calls). `settle` (a bench's wait for its worker to drain) runs before the counters are
    read at the start, and after uvicorn's is read at the end."""
    before: dict[str, Any] = {}

    def release() -> None:
        if settle is not None:
            settle()
        before.update(uvicorn=server.cpu(), worker=cpu_seconds(worker_pid) if worker_pid else 0.0, pg=postgres_cpu())

    measured = run_clients(kind, clients, calls, job, before_go=release)
    uvicorn = server.cpu() - before["uvicorn"]
    if settle is not None:
        settle()  # e.g. the worker's share of this window is done
    worker = cpu_seconds(worker_pid) - before["worker"] if worker_pid else 0.0
    # backends that started meanwhile count whole
    postgres = sum(now - before["pg"].get(pid, 0.0) for pid, now in postgres_cpu().items())
    count = len(measured.ids)
    assert count == clients * calls  # 0 failed calls (a failed one ends its client without an answer)
    ours = (uvicorn + worker + postgres + measured.client_cpu * count) / (measured.seconds * CORES)
    return Window(
        measured, uvicorn / count * 1000, worker / count * 1000, postgres / count * 1000, max(0.0, measured.busy - ours)
    )


def noise(windows: list[Window]) -> str:
    """Median window length and the most of the machine's CPU that other processes took in a window."""
    return (
        f"windows {statistics.median([w.clients.seconds for w in windows]):.1f} s,"
        f" others ≤ {max(w.others for w in windows):3.0%} of the machine"
    )


def windows_against_bare(
    server: Uvicorn,
    kind: str,
    ours: tuple[str, dict[str, Any]],
    bare: tuple[str, dict[str, Any]],
    *,
    clients: tuple[int, ...],
    pilot: dict[int, int],
    rounds: int,
    window_s: float,
    workers: int,
    expected_ids: Callable[[int, int], list[str]],
) -> tuple[dict[str, list[Window]], str]:
    """The MCP and A2A benches' measurement: every uvicorn worker warmed by both client kinds, then
    `rounds.interleaved` windows of `kind` and of the bare view at each client count, keyed "bare N" /
    "<kind> N"; every window's answers must be `expected_ids(clients, calls)`. Also the load before."""
    from tests.bench.rounds import Case, interleaved

    (our_client, our_job), (bare_client, bare_job) = ours, bare
    run_clients(our_client, workers, 2, our_job)  # every worker warm: imports, profile cache, validator
    run_clients(bare_client, workers, 2, bare_job)
    jobs = {f"{name} {count}": (name, count) for count in clients for name in ("bare", kind)}

    def window(label: str, calls: int) -> Window:
        name, count = jobs[label]
        client, job = ours if name == kind else bare
        measured = measure(server, client, count, calls, job)
        assert measured.clients.ids == expected_ids(count, calls)
        return measured

    before = load()
    cases = {label: Case(count, pilot[count]) for label, (_, count) in jobs.items()}
    return interleaved(cases, window, rounds, window_s), before


def print_against_bare(
    windows: dict[str, list[Window]],
    kind: str,
    clients: tuple[int, ...],
    *,
    unit: str,
    per: str,
    cpu_in_us: bool,
    cpu_digits: int,
    load_before: str,
) -> None:
    """The MCP and A2A benches' summary: `kind` against the bare view at each client count, then 8 clients
    against 1 (the issue's target); `windows` keyed "bare N" / "<kind> N", as `rounds.interleaved` gives."""
    from tests.bench.rounds import median, rate_ratio, ratios, spread

    scale, cpu_unit, width = (1000, "µs", "5.0f") if cpu_in_us else (1, "ms", "4.1f")
    for count in clients:
        bare, ours = windows[f"bare {count}"], windows[f"{kind} {count}"]
        server = [w.server_cpu for w in ours]
        baseline = [w.server_cpu for w in bare]
        print(
            f"  {count} client(s): bare {median([w.rate for w in bare]):6.1f} {unit} |"
            f" {kind} {median([w.rate for w in ours]):6.1f} {unit} | {kind}/bare {rate_ratio(ours, bare)} |"
            f" server CPU per {per} (uvicorn + Postgres): {kind} {median(server) * scale:{width}} {cpu_unit},"
            f" bare {median(baseline) * scale:{width}} {cpu_unit},"
            f" {kind}/bare ×{spread(ratios(server, baseline), cpu_digits)} |"
            f" {kind} client CPU {median([w.clients.client_cpu for w in ours]) * 1000:3.1f} ms/{per} |"
            f" machine {median([w.clients.busy for w in ours + bare]):3.0%} busy | {noise(ours + bare)}"
        )
    low, high = min(clients), max(clients)
    print(
        f"  {high} clients / {low} client: {kind} {rate_ratio(windows[f'{kind} {high}'], windows[f'{kind} {low}'])}"
        f" | bare view {rate_ratio(windows[f'bare {high}'], windows[f'bare {low}'])} | {load_before} → {load()}"
    )


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"
