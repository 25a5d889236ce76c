"""The one outbound HTTP client (agent profiles, order webhooks): deadline, size cap, no redirects, SSRF guard.

Every call has a total deadline (DNS + connect + TLS + request + headers + body): the socket layer gets
only the time left on each read and write, so a peer that drips one byte a second cannot hold a
worker or a request thread longer than the deadline (a per-read timeout never trips on a drip). The
name lookup runs on a small thread pool and is waited for only as long as the deadline leaves
(`getaddrinfo` itself cannot be interrupted; a hanging lookup ends in its thread, never in the caller).

Hosts resolving to loopback, private, link-local, reserved or otherwise non-global addresses are
refused unless the host, or the address it resolves to, is in `settings.BCP_OUTBOUND_ALLOWLIST`
(host names or CIDRs, for development and tests); only allow-listed destinations may use plain http.
The checked address is the one connected to (the URL is pinned to it), so DNS rebinding cannot
swap it between check and connect.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as LookupTimeout
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpcore
import httpx
from django.conf import settings

from shop.ops.tls import verified_tls_context

DEFAULT_MAX_BYTES = 256 * 1024
DEFAULT_TIMEOUT = httpx.Timeout(5.0, connect=3.0)
DEFAULT_DEADLINE = 10.0  # seconds for the whole call
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Name lookups (blocking libc calls) off the caller's thread, so the caller waits at most its deadline.
_RESOLVER = ThreadPoolExecutor(max_workers=8, thread_name_prefix="outbound-dns")


class OutboundError(Exception):
    """`kind`: invalid_url, scheme, blocked, dns, connect, timeout, redirect, too_large."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds

    def left(self, timeout: float | None, error: type[Exception]) -> float:
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise error("total deadline exceeded")
        return remaining if timeout is None else min(timeout, remaining)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._inner, self._deadline = inner, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        timeout = self._deadline.left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, timeout), self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync backend with every socket operation bounded by the time left on one deadline."""

    def __init__(self, deadline: _Deadline) -> None:
        self._inner, self._deadline = httpcore.SyncBackend(), deadline

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        timeout = self._deadline.left(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:  # pragma: no cover - unused
        raise httpcore.ConnectError("unix sockets are not used for outbound calls")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _DeadlineTransport(httpx.HTTPTransport):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__(verify=verified_tls_context(), trust_env=False, retries=0)
        # httpx has no public hook for the network backend; its pool is rebuilt with ours (same TLS context).
        self._pool = httpcore.ConnectionPool(ssl_context=self._pool._ssl_context, max_connections=1,
                                             network_backend=_DeadlineBackend(deadline))


@dataclass(frozen=True)
class OutboundResponse:
    status_code: int
    headers: httpx.Headers
    body: bytes
    elapsed_ms: int


def _allowlist() -> tuple[set[str], list[ipaddress.IPv4Network | ipaddress.IPv6Network]]:
    hosts: set[str] = set()
    networks = []
    for entry in getattr(settings, "BCP_OUTBOUND_ALLOWLIST", []) or []:
        entry = entry.strip().lower()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            hosts.add(entry)
    return hosts, networks


def _is_public(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast and not ip.is_reserved


def _resolve(host: str, port: int, timeout: float | None = None) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    lookup = _RESOLVER.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        infos = lookup.result(timeout=timeout)
    except LookupTimeout as exc:
        lookup.cancel()
        raise OutboundError("timeout", f"resolving {host} took too long") from exc
    except (socket.gaierror, UnicodeError) as exc:
        raise OutboundError("dns", f"cannot resolve {host}") from exc
    seen: list[IPAddress] = []
    for info in infos:
        ip = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        if ip not in seen:
            seen.append(ip)
    return seen


@dataclass(frozen=True)
class CheckedTarget:
    url: str
    host: str
    ip: IPAddress
    allow_listed: bool


def check_url(url: str, *, timeout: float | None = None) -> CheckedTarget:
    """Validate scheme and destination of `url`; return the address to connect to.

    `timeout`: seconds the name lookup may take (None: the resolver's own limits)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise OutboundError("invalid_url", "malformed URL") from exc
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("https", "http") or not host or parts.username or parts.password:
        raise OutboundError("invalid_url", "URL must be http(s) with a host and no credentials")
    port = port or (443 if parts.scheme == "https" else 80)
    allowed_hosts, allowed_networks = _allowlist()
    addresses = _resolve(host, port, timeout)
    if not addresses:
        raise OutboundError("dns", f"{host} has no address")
    host_listed = host in allowed_hosts
    chosen: IPAddress | None = None
    ip_listed = False
    for ip in addresses:
        listed = any(ip in net for net in allowed_networks)
        if host_listed or listed or _is_public(ip):
            chosen, ip_listed = ip, listed
            break
    if chosen is None:
        raise OutboundError("blocked", f"{host} resolves to a non-public address")
    allow_listed = host_listed or ip_listed
    if parts.scheme != "https" and not allow_listed:
        raise OutboundError("scheme", "only https is allowed")
    return CheckedTarget(url=url, host=host, ip=chosen, allow_listed=allow_listed)


def request(
    method: str,
    url: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: httpx.Timeout = DEFAULT_TIMEOUT,
    deadline: float = DEFAULT_DEADLINE,
) -> OutboundResponse:
    """One call; `timeout` bounds each phase, `deadline` (seconds) the whole call, name lookup to body."""
    total = _Deadline(deadline)
    target = check_url(url, timeout=total.left(None, httpcore.ConnectTimeout))
    parts = urlsplit(url)
    ip_text = f"[{target.ip}]" if target.ip.version == 6 else str(target.ip)
    netloc = ip_text + (f":{parts.port}" if parts.port else "")
    pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    send_headers = {"User-Agent": "loja-bcp/1.0", **(headers or {})}
    send_headers["Host"] = parts.netloc.rsplit("@", 1)[-1]
    extensions = {"sni_hostname": target.host} if parts.scheme == "https" else {}
    started = time.monotonic()
    transport = _DeadlineTransport(total)
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False, transport=transport) as client:
            req = client.build_request(method, pinned, content=body, headers=send_headers, extensions=extensions)
            resp = client.send(req, stream=True)
            try:
                if 300 <= resp.status_code < 400:
                    raise OutboundError("redirect", f"redirects are not followed (HTTP {resp.status_code})")
                declared = resp.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise OutboundError("too_large", f"response larger than {max_bytes} bytes")
                chunks: list[bytes] = []
                size = 0
                for chunk in resp.iter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise OutboundError("too_large", f"response larger than {max_bytes} bytes")
                    chunks.append(chunk)
            finally:
                resp.close()
    except httpx.TimeoutException as exc:
        raise OutboundError("timeout", f"timed out talking to {target.host}") from exc
    except httpx.HTTPError as exc:
        raise OutboundError("connect", f"cannot reach {target.host}: {exc.__class__.__name__}") from exc
    return OutboundResponse(resp.status_code, resp.headers, b"".join(chunks), int((time.monotonic() - started) * 1000))


def get(url: str, **kwargs: object) -> OutboundResponse:
    return request("GET", url, headers={"Accept": "application/json"}, **kwargs)  # type: ignore[arg-type]


def post(url: str, body: bytes, headers: dict[str, str], **kwargs: object) -> OutboundResponse:
    return request("POST", url, body=body, headers=headers, **kwargs)  # type: ignore[arg-type]
