"""The one outbound HTTP client of the shop: every provider (PSP, card gateway, NF-e, CEP) and every agent
platform (profiles, order webhooks) is called through `request`.

Every call has a total deadline (DNS + connect + TLS + request + headers + body): the socket layer gets
only the time left on each read and write, so a peer that drips one byte a second cannot hold a
worker or a request thread longer than the deadline (httpx's timeouts are per read; they never trip on
a drip). The name lookup runs on a small thread pool and is waited for only as long as the deadline
leaves (`getaddrinfo` itself cannot be interrupted; a hanging lookup ends in its thread, never in the
caller). A `Deadline` may be shared by several calls, so a provider's retries fit in one budget too.

The body is read up to `max_bytes`; redirects are never followed; the environment's proxies are not used
(the checked address is the one connected to: the URL is pinned to it, the TLS name stays the host's).

`guard=True` (URLs that come from outside: agent profiles, webhook targets) refuses hosts resolving to
loopback, private, link-local, reserved or otherwise non-global addresses unless the host, or the
address it resolves to, is in `allow` (host names or CIDRs, for development and tests); only
allow-listed destinations may use plain http. `guard=False` is for the providers the merchant
configured (their URL is settings, not input), which may sit on a private network.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as LookupTimeout
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from json import loads
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpcore
import httpx

DEFAULT_MAX_BYTES = 256 * 1024
DEFAULT_DEADLINE = 10.0  # seconds for the whole call
USER_AGENT = "loja-bcp/1.0"
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# Name lookups (blocking libc calls) off the caller's thread, so the caller waits at most its deadline.
_RESOLVER = ThreadPoolExecutor(max_workers=8, thread_name_prefix="outbound-dns")


class OutboundError(Exception):
    """`kind`: invalid_url, scheme, blocked, dns, connect, timeout, redirect, too_large."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class Deadline:
    """A point in monotonic time; `left()` is what remains of it (OutboundError "timeout" once it passed)."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def left(self, timeout: float | None = None, error: type[Exception] | None = None) -> float:
        remaining = self.remaining()
        if remaining <= 0:
            if error is not None:
                raise error("total deadline exceeded")
            raise OutboundError("timeout", "total deadline exceeded")
        return remaining if timeout is None else min(timeout, remaining)


# --- TLS ------------------------------------------------------------------------------------------------------


@functools.cache
def verified_tls_context() -> ssl.SSLContext:
    """httpx's default context (certifi's CA bundle, certificate and host name checked), built once per process:
    loading the CA bundle costs about 18 ms of CPU, and an `SSLContext` is safe to share between threads."""
    return httpx.create_ssl_context()


@functools.cache
def client_tls_context(cert_file: str = "", key_file: str = "", ca_file: str = "") -> ssl.SSLContext:
    """A verifying context with a client certificate (mTLS, PEM; key separate or bundled) and/or a private CA,
    TLS 1.2 at least; one per process and set of files."""
    context = ssl.create_default_context(cafile=ca_file or None)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_file:
        context.load_cert_chain(cert_file, key_file or None)
    return context


# --- the deadline at the socket layer --------------------------------------------------------------------------


class _Clock:
    """The deadline of the call a transport serves now: a kept transport serves one call after another, and its
    connections (made for an earlier call) are bounded by the current call's deadline."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, clock: _Clock) -> None:
        self._inner, self._clock = inner, clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._clock.deadline.left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._clock.deadline.left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        timeout = self._clock.deadline.left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, timeout), self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync backend with every socket operation bounded by the time left on the clock's deadline."""

    def __init__(self, clock: _Clock) -> None:
        self._inner, self._clock = httpcore.SyncBackend(), clock

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        timeout = self._clock.deadline.left(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return _DeadlineStream(stream, self._clock)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:  # pragma: no cover - unused
        raise httpcore.ConnectError("unix sockets are not used for outbound calls")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _DeadlineTransport(httpx.HTTPTransport):
    def __init__(self, clock: _Clock, tls: ssl.SSLContext, keepalive: float | None = None) -> None:
        super().__init__(verify=tls, trust_env=False, retries=0)
        # httpx has no public hook for the network backend; its pool is rebuilt with ours (same TLS context).
        self._pool = httpcore.ConnectionPool(
            ssl_context=self._pool._ssl_context,
            max_connections=1,
            keepalive_expiry=keepalive,
            network_backend=_DeadlineBackend(clock),
        )


def _client(transport: _DeadlineTransport) -> httpx.Client:
    # No cookie is ever kept: a kept client must not carry one destination's Set-Cookie into the next call.
    jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
    return httpx.Client(follow_redirects=False, trust_env=False, transport=transport, cookies=jar)


# Kept clients (`request(keep=True)`): one per thread and destination — scheme, host name (TLS name, Host
# header), checked address and TLS context —, so a kept connection only ever serves the host it was verified for,
# at the address the guard checked on this call. Saves a client and a TCP (+TLS) handshake per call to a platform
# that is called again and again (issue 34: the worker's order webhooks).
KEEP_SECONDS = 4.0  # idle connections are closed after this (under the usual 5 s of servers' keep-alive)
_KEPT_MAX = 8
_kept = threading.local()


def _forget_kept() -> None:
    _kept.__dict__.clear()  # a forked child does not share its parent's sockets


os.register_at_fork(after_in_child=_forget_kept)


@dataclass
class _Kept:
    client: httpx.Client
    pool: httpcore.ConnectionPool  # the client's own: a call may go through either, over the same connection
    clock: _Clock
    defaults: tuple[tuple[str, str], ...]  # the client's default headers (Accept, Accept-Encoding, …)


def _kept_client(key: tuple[Any, ...], tls: ssl.SSLContext) -> _Kept:
    clients: dict[tuple[Any, ...], _Kept] = _kept.__dict__.setdefault("clients", {})
    kept = clients.get(key)
    if kept is None:
        if len(clients) >= _KEPT_MAX:
            oldest = next(iter(clients))
            _drop_kept(oldest)
        clock = _Clock(Deadline(0))
        transport = _DeadlineTransport(clock, tls, KEEP_SECONDS)
        client = _client(transport)
        defaults = tuple((name.decode(), value.decode()) for name, value in client.headers.raw)  # as httpx spells them
        kept = clients[key] = _Kept(client, transport._pool, clock, defaults)
    return kept


def _drop_kept(key: tuple[Any, ...]) -> None:
    kept = _kept.__dict__.get("clients", {}).pop(key, None)
    if kept is not None:
        kept.client.close()


# --- destination checks -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Response:
    status_code: int
    headers: httpx.Headers
    body: bytes
    elapsed_ms: int
    reason_phrase: str = ""

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON (ValueError when it is not)."""
        return loads(self.body)


@dataclass(frozen=True)
class CheckedTarget:
    url: str
    host: str
    ip: IPAddress
    allow_listed: bool


def _allowlist(allow: Iterable[str]) -> tuple[frozenset[str], tuple[Network, ...]]:
    return _parsed_allowlist(tuple(allow))


@functools.lru_cache(maxsize=64)
def _parsed_allowlist(allow: tuple[str, ...]) -> tuple[frozenset[str], tuple[Network, ...]]:
    """The allow-list's host names and networks, parsed once per distinct list (issue 34: `ip_network` tried on
    every entry of every call)."""
    hosts: set[str] = set()
    networks: list[Network] = []
    for entry in allow:
        entry = entry.strip().lower()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            hosts.add(entry)
    return frozenset(hosts), tuple(networks)


@functools.lru_cache(maxsize=1024)  # an address's class never changes; `is_global` walks the special ranges
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
        ip = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if ip not in seen:
            seen.append(ip)
    return seen


def check_url(
    url: str, *, timeout: float | None = None, guard: bool = True, allow: Iterable[str] = ()
) -> CheckedTarget:
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
    allowed_hosts, allowed_networks = _allowlist(allow)
    addresses = _resolve(host, port, timeout)
    if not addresses:
        raise OutboundError("dns", f"{host} has no address")
    host_listed = not guard or host in allowed_hosts
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


# --- the call -----------------------------------------------------------------------------------------------------


def request(
    method: str,
    url: str,
    *,
    content: bytes | None = None,
    json: Any = None,
    data: Mapping[str, str] | None = None,
    params: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    auth: tuple[str, str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    deadline: float | Deadline = DEFAULT_DEADLINE,
    connect_timeout: float | None = None,
    guard: bool = True,
    allow: Iterable[str] = (),
    tls: ssl.SSLContext | None = None,
    keep: bool = False,
) -> Response:
    """One HTTP exchange, name lookup to the last body byte, within `deadline` (seconds, or a shared `Deadline`).

    `connect_timeout` caps the TCP connect alone (a dead host is told sooner than the deadline); `tls` is the
    context for https (default: the process's verifying one). `keep`: the connection stays open for this thread's
    next call to the same destination (see `_kept`); the destination is checked on every call all the same.
    Raises OutboundError, never httpx's errors."""
    total = deadline if isinstance(deadline, Deadline) else Deadline(deadline)
    target = check_url(url, timeout=total.left(), guard=guard, allow=allow)
    parts = urlsplit(url)
    ip_text = f"[{target.ip}]" if target.ip.version == 6 else str(target.ip)
    netloc = ip_text + (f":{parts.port}" if parts.port else "")
    pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    send_headers = {"User-Agent": USER_AGENT, **(headers or {})}
    send_headers["Host"] = parts.netloc.rsplit("@", 1)[-1]
    extensions = {"sni_hostname": target.host} if parts.scheme == "https" else {}
    started = time.monotonic()
    context = tls or verified_tls_context()
    key = (parts.scheme, target.host, target.ip, parts.port, context)
    if keep:
        kept = _kept_client(key, context)
        kept.clock.deadline = total
        client = kept.client
    else:
        client = _client(_DeadlineTransport(_Clock(total), context))
    try:
        if keep and json is None and data is None and params is None and auth is None:
            status, reason, resp_headers, chunks, close = _pooled(
                kept, method, pinned, send_headers, content, extensions, connect_timeout
            )
        else:
            timeout = httpx.Timeout(None, connect=connect_timeout)  # every phase is bounded by the deadline anyway
            req = client.build_request(method, pinned, content=content, json=json, data=data, params=params,
                                       headers=send_headers, extensions=extensions, timeout=timeout)  # fmt: skip
            resp = client.send(req, auth=auth, stream=True)
            status, reason, resp_headers = resp.status_code, resp.reason_phrase, resp.headers
            chunks, close = resp.iter_bytes(), resp.close
        try:
            body = _capped(status, resp_headers, chunks, max_bytes)
        finally:
            close()
    except BaseException as exc:
        if keep:
            _drop_kept(key)  # a call that ended halfway leaves no connection to reuse
        if isinstance(exc, httpx.TimeoutException | httpcore.TimeoutException):
            raise OutboundError("timeout", f"timed out talking to {target.host}") from exc
        if isinstance(exc, (httpx.HTTPError, *_HTTPCORE_ERRORS)):
            raise OutboundError("connect", f"cannot reach {target.host}: {exc.__class__.__name__}") from exc
        raise
    finally:
        if not keep:
            client.close()
    elapsed_ms = int((time.monotonic() - started) * 1000)
    return Response(status, resp_headers, body, elapsed_ms, reason)


def _capped(status: int, headers: httpx.Headers, chunks: Iterable[bytes], max_bytes: int) -> bytes:
    """The body, refused when it is a redirect or larger than `max_bytes` (declared or read)."""
    if 300 <= status < 400:
        raise OutboundError("redirect", f"redirects are not followed (HTTP {status})")
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise OutboundError("too_large", f"response larger than {max_bytes} bytes")
    read: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > max_bytes:
            raise OutboundError("too_large", f"response larger than {max_bytes} bytes")
        read.append(chunk)
    return b"".join(read)


# --- a kept connection's exchange without httpx's client ------------------------------------------------------
# httpx's own request handling (request and header models, auth and redirect generators, cookie extraction,
# response wrapping) was about a millisecond of CPU per webhook (issue 34). A kept call without json, form,
# query parameters or auth (the platforms' calls) is sent on the kept client's own httpcore pool: the same
# connection, the same bytes (httpx's default headers, Content-Length as httpx sets it), the same log line; a
# compressed answer is still decoded by httpx's decoders. Guard, deadline, cap and no redirects are the caller's.

_HTTPCORE_ERRORS = (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol, httpcore.ProxyError)
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
_logger = logging.getLogger("httpx")  # httpx's "HTTP Request: …" line, under the logger operators already tune


@functools.lru_cache(maxsize=512)
def _target(pinned: str) -> tuple[bytes, bytes, int | None, bytes, str]:
    """Scheme, host, port, request target and text of a pinned URL, as httpx would send and log them (its own
    URL parsing: percent-encoding of the path and query), once per distinct URL."""
    url = httpx.URL(pinned)
    return url.raw_scheme, url.raw_host, url.port, url.raw_path, str(url)


class _Decoded(httpx.SyncByteStream):
    def __init__(self, response: httpcore.Response) -> None:
        self._response = response

    def __iter__(self) -> Iterator[bytes]:
        yield from self._response.iter_stream()


def _pooled(
    kept: _Kept,
    method: str,
    pinned: str,
    headers: Mapping[str, str],
    content: bytes | None,
    extensions: dict[str, Any],
    connect_timeout: float | None,
) -> tuple[int, str, httpx.Headers, Iterable[bytes], Callable[[], None]]:
    """Send on the kept pool: (status, reason phrase, headers, body chunks (decoded), close)."""
    merged = {name.lower(): (name, value) for name, value in kept.defaults}
    for name, value in headers.items():  # a caller's header replaces the default, moved after them (httpx's update)
        merged.pop(name.lower(), None)
        merged[name.lower()] = (name, value)
    method = method.upper()
    if "content-length" not in merged and "transfer-encoding" not in merged:
        if content is not None:
            merged["content-length"] = ("Content-Length", str(len(content)))
        elif method in _WITH_BODY:  # httpx's automatic header, put before the others
            merged = {"content-length": ("Content-Length", "0"), **merged}
    raw = [(name.encode("ascii"), value.encode("ascii")) for name, value in merged.values()]
    scheme, host_bytes, port, path, logged = _target(pinned)
    request = httpcore.Request(
        method,
        httpcore.URL(scheme=scheme, host=host_bytes, port=port, target=path),
        headers=raw,
        content=content or b"",
        extensions={
            **extensions,
            "timeout": {"connect": connect_timeout, "read": None, "write": None, "pool": None},
        },
    )
    response = kept.pool.handle_request(request)
    reason = response.extensions.get("reason_phrase", b"").decode("ascii", errors="ignore")
    got = httpx.Headers(response.headers)
    _logger.info(
        'HTTP Request: %s %s "%s %d %s"',
        method,
        logged,
        response.extensions.get("http_version", b"HTTP/1.1").decode("ascii", errors="ignore"),
        response.status,
        reason,
    )
    encoding = got.get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        return response.status, reason, got, response.iter_stream(), response.close
    # Compressed: httpx's own decoding of its Accept-Encoding (through a response object of its own).
    wrapped = httpx.Response(response.status, headers=response.headers, stream=_Decoded(response))
    return response.status, reason, got, wrapped.iter_bytes(), response.close
