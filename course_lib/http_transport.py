"""Serve one of the course's MCP servers over Streamable HTTP, safe by default.

Everything on the wire is the MCP SDK's own transport: `Server.streamable_http_app()` builds a
Starlette app around `StreamableHTTPSessionManager`, and uvicorn serves it. That one endpoint,
`http://HOST:PORT/mcp`, speaks both protocol eras:

- 2025-11-25: `initialize` opens a session; the server answers with `Mcp-Session-Id` and the
  client sends it on every later request (and `DELETE`s it at the end).
- 2026-07-28: stateless; every POST carries `MCP-Protocol-Version: 2026-07-28` and its own
  `_meta`, and no session exists (the SDK routes such requests to its per-request path).

What this module adds around the SDK, and nothing else:

- **Origin and Host checks** (DNS-rebinding protection) are always on, through the SDK's
  `TransportSecuritySettings`: a browser page on another origin gets 403, a request for a
  foreign `Host` gets 421. (The SDK turns them on for itself only for a loopback bind.)
- **A bearer token** is required for any non-loopback bind. With one configured, the SDK's
  `BearerAuthBackend` + `RequireAuthMiddleware` check it through our `StaticTokenVerifier`
  (a `TokenVerifier`); a request without it gets 401 with
  `WWW-Authenticate: Bearer ..., resource_metadata="…/.well-known/oauth-protected-resource/mcp"`,
  and that URL serves the RFC 9728 protected-resource metadata. The token is compared in
  constant time, never logged, never stored in the request's auth info, never sent anywhere.
- **Every POST body judged as stdio judges a line** (`course_lib.frames.check_frame`): an id MCP
  forbids (null, true, 1.5) gets -32600 instead of a silent 202 (the SDK takes such a request for a
  notification and never runs it); a scalar, a batch, a wrong `jsonrpc` get -32600 and array
  params -32602, with a plain message instead of the SDK's pydantic dump; NaN and Infinity are
  refused as on stdio; a number too long to parse keeps its request's id. A notification or a
  response that cannot be accepted gets 400 with a JSON-RPC error without id, as the transport
  spec says; an accepted one 202. The SDK's own checks still come first (auth, Host, Origin,
  session, Accept, Content-Type). (`course_lib.http_refusals`.)
- **Every refusal is JSON-RPC**: the SDK answers some refusals in plain text (its
  `TransportSecuritySettings` checks: foreign Origin 403, foreign Host 421, wrong Content-Type
  400; a body over the limit 413), with an empty body (the 2026-07-28 path's 405 and 406), or as
  OAuth JSON (401), and Starlette answers an unknown path in plain text: the gate rewrites each
  into a JSON-RPC error with the same HTTP status (`course_lib.http_refusals`). uvicorn's own
  refusals (a request h11 cannot parse, `Content-Length: -1`, oversized headers) are written by
  `http_limits.BoundedH11Protocol`.
- **A 401 as RFC 6750 §3.1 says**: a request with no credentials gets a challenge without an
  error code (`Bearer resource_metadata="…"`); a wrong token gets `error="invalid_token"`. (The
  SDK's `RequireAuthMiddleware` sends `invalid_token` for both.)
- **Bounded** (`course_lib.http_limits`), each limit an `HttpSettings` field, a flag and an
  environment variable (`LIMITS`; defaults in parentheses):

  | limit | flag | environment | what happens |
  |---|---|---|---|
  | connections at once (100) | `--max-connections` | `COURSE_MCP_MAX_CONNECTIONS` | one more: 503, closed |
  | idle connection (5 s) | `--idle-timeout` | `COURSE_MCP_IDLE_TIMEOUT` | closed (no request under way) |
  | headers (10 s) | `--header-timeout` | `COURSE_MCP_HEADER_TIMEOUT` | 408, closed |
  | body (30 s) | `--body-timeout` | `COURSE_MCP_BODY_TIMEOUT` | 408, closed |
  | body size (4 MiB) | `--max-body-bytes` | `COURSE_MCP_MAX_BODY_BYTES` | 413 before parsing |
  | sessions (64) | `--max-sessions` | `COURSE_MCP_MAX_SESSIONS` | the idle-most one ends (404, saying why) |
  | session idle lifetime (300 s) | `--session-idle` | `COURSE_MCP_SESSION_IDLE` | the session ends (404) |

    python -m course_lib.fs_server --root fixtures/workspace --http 8765
    python -m course_lib.notes_server --http 0.0.0.0:8766 --token-file secret.txt
"""

from __future__ import annotations

import argparse
import functools
import hmac
import ipaddress
import logging
import math
import os
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from mcp.server import Server
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from course_lib.http_limits import BoundedH11Protocol, ConnectionLimits, SessionCap
from course_lib.http_refusals import JsonRpcGate
from course_lib.lang import say

logger = logging.getLogger(__name__)

TOKEN_ENV = "COURSE_MCP_TOKEN"
"""Environment variable holding the bearer token, when `--token-file` is not given."""

MCP_PATH = "/mcp"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
MAX_BODY_BYTES = 4 * 1024 * 1024  # the SDK's own default, stated here so tests can reach it

# Where a client would get a token in the full OAuth flow. The course runs no authorization server:
# the token is issued by the operator (a file or an environment variable), so the metadata names
# a reserved, unresolvable host (RFC 2606) unless `issuer_url` says otherwise.
PLACEHOLDER_ISSUER = "https://authorization-server.invalid"


class ConfigurationError(ValueError):
    """The HTTP options are unsafe or inconsistent (for example a public bind without a token)."""


def is_loopback(host: str) -> bool:
    """True for the names and addresses that only this machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_address(text: str) -> tuple[str, int]:
    """`"8765"` → `("127.0.0.1", 8765)`; `"0.0.0.0:8765"`, `"[::1]:0"` as written.

    Raises:
        ValueError: the port is not a number from 0 to 65535.
    """
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(say("expected [HOST:]PORT with PORT 0-65535, got {text!r}",
                             "应为 [HOST:]PORT，PORT 取 0 到 65535，实际是 {text!r}", text=text))
    return host, int(port_text)


class StaticTokenVerifier:
    """An `mcp.server.auth.provider.TokenVerifier` that accepts exactly one operator-issued token.

    It reports the token as issued for `resource` (the RFC 8707 audience), so the SDK's
    `validate_token_resource` check passes for this server and no other. The `AccessToken` it
    returns does not carry the secret: nothing downstream can log or forward it.
    """

    def __init__(self, token: str, resource: str) -> None:
        if not token:
            raise ConfigurationError(say("the bearer token is empty", "bearer 令牌是空的"))
        self._token = token.encode()
        self._resource = resource

    def __repr__(self) -> str:  # never show the secret, even in a traceback
        return f"StaticTokenVerifier(resource={self._resource!r}, token=<redacted>)"

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token="<redacted>", client_id="operator", scopes=[], resource=self._resource)


@dataclass(frozen=True)
class HttpSettings:
    """Where and how to serve; `url` is the MCP endpoint clients use (also the OAuth resource)."""

    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None
    public_url: str | None = None
    issuer_url: str = PLACEHOLDER_ISSUER
    json_response: bool = False
    max_body_bytes: int = MAX_BODY_BYTES
    session_idle_seconds: float = 5 * 60  # then the session is closed and its id gets 404 (the SDK's default: 30 min)
    max_sessions: int = 64  # beyond it a new session ends the idle-most one (the SDK's default: 10,000, then 503)
    max_connections: int = 100  # one more gets 503 (uvicorn's default: no cap)
    idle_seconds: float = 5.0  # a connection waiting for its next request (uvicorn's keep-alive default)
    header_seconds: float = 10.0  # a request's first byte to the end of its headers (uvicorn: no deadline)
    body_seconds: float = 30.0  # the end of the headers to the end of the body (uvicorn: no deadline)

    def __repr__(self) -> str:
        token = "<redacted>" if self.token else None
        return f"HttpSettings(host={self.host!r}, port={self.port}, token={token}, public_url={self.public_url!r})"

    def checked(self) -> HttpSettings:
        """These settings, if they are safe to serve.

        Raises:
            ConfigurationError: a non-loopback bind without a token, a wildcard bind
                (0.0.0.0, ::) without `public_url`, a `public_url` not ending in /mcp, or a
                limit that is not a positive number.
        """
        for limit in LIMITS:
            value = getattr(self, limit.field)
            if isinstance(value, bool) or not isinstance(value, limit.kind | int) or not 0 < value < math.inf:
                raise ConfigurationError(say("{flag} must be a positive number, got {value!r}",
                                             "{flag} 必须是正数，实际是 {value!r}", flag=limit.flag, value=value))
        if not is_loopback(self.host) and not self.token:
            raise ConfigurationError(say(
                "refusing to serve on {host} without a bearer token: anyone who can reach this "
                "address could call the tools. Give --token-file PATH or set {env}.",
                "拒绝在 {host} 上提供服务：没有 bearer 令牌，能访问这个地址的任何人都可以调用这些工具。"
                "请给出 --token-file PATH，或设置 {env}。", host=self.host, env=TOKEN_ENV))
        if self.public_url and not self.public_url.rstrip("/").endswith(MCP_PATH):
            raise ConfigurationError(say("--public-url must end in {path}, the endpoint's path: {url}",
                                         "--public-url 必须以端点的路径 {path} 结尾：{url}",
                                         path=MCP_PATH, url=self.public_url))
        if self.host in ("0.0.0.0", "::") and not self.public_url:
            raise ConfigurationError(say(
                "serving on every address ({host}) needs --public-url, the URL clients use: its host is "
                "the one Host header accepted besides loopback's, and the URL names this server in OAuth.",
                "在所有地址（{host}）上提供服务需要 --public-url，即客户端使用的 URL：除回环地址之外，"
                "只接受以它的主机名为 Host 头的请求，OAuth 里也用这个 URL 指称这个服务器。", host=self.host))
        return self

    def url(self, port: int) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{port}{MCP_PATH}"


def build_app(server: Server[Any], settings: HttpSettings, port: int) -> ASGIApp:
    """The ASGI app serving `server` at `settings.url(port)`: the SDK's app, our two wrappers.

    Raises:
        ConfigurationError: see `HttpSettings.checked`.
    """
    settings.checked()
    url = settings.url(port)
    public = _netloc(url)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted({"127.0.0.1:*", "localhost:*", "[::1]:*", public}),
        allowed_origins=sorted({"http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*",
                                url.split("://")[0] + "://" + public}),
    )
    auth: dict[str, Any] = {}
    if settings.token:
        auth = {
            "auth": AuthSettings(issuer_url=settings.issuer_url, resource_server_url=url, validate_token_resource=True),
            "token_verifier": StaticTokenVerifier(settings.token, url),
        }
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=settings.json_response,
        transport_security=security,
        host=settings.host,
        max_request_body_size=settings.max_body_bytes,
        session_idle_timeout=settings.session_idle_seconds,
        # SessionCap keeps the count at max_sessions by evicting; the SDK's own cap (a 503) is only
        # the backstop for a burst of initializes arriving together.
        max_sessions=2 * settings.max_sessions,
        **auth,
    )
    sessions = SessionCap(app, max_sessions=settings.max_sessions, idle_seconds=settings.session_idle_seconds,
                          path=MCP_PATH)
    return JsonRpcGate(sessions, path=MCP_PATH, max_body_bytes=settings.max_body_bytes)


def _netloc(url: str) -> str:
    """`http://127.0.0.1:8765/mcp` → `127.0.0.1:8765` (the Host header a client sends)."""
    return url.split("://", 1)[1].split("/", 1)[0]


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this (Linux). Without it every JSON answer after the first on a
    # kept-alive connection waited ~40 ms: the head and body are two writes, and Nagle held the
    # body until the client's delayed ACK of the head (measured in benchmarks/http.py).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _uvicorn(app: ASGIApp, settings: HttpSettings) -> uvicorn.Server:
    # No access log: it would record every request line (a token never goes in one, but a
    # careless client might put one in a query string). Errors still reach stderr.
    limits = ConnectionLimits(max_connections=settings.max_connections, idle_seconds=settings.idle_seconds,
                              header_seconds=settings.header_seconds, body_seconds=settings.body_seconds)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2,
                            http=functools.partial(BoundedH11Protocol, limits=limits),  # type: ignore[arg-type]
                            timeout_keep_alive=settings.idle_seconds)  # type: ignore[arg-type]
    return uvicorn.Server(config)


async def serve_http(server: Server[Any], settings: HttpSettings) -> None:
    """Serve `server` until cancelled (Ctrl-C); print the endpoint URL on stderr once listening.

    Raises:
        ConfigurationError: see `HttpSettings.checked`.
        OSError: the address cannot be bound (in use, or not this machine's).
    """
    settings.checked()
    sock = _bind(settings.host, settings.port)
    port = sock.getsockname()[1]
    web = _uvicorn(build_app(server, settings, port), settings)
    print(say("MCP over Streamable HTTP at {url}", "MCP（Streamable HTTP）服务地址：{url}", url=settings.url(port))
          + (say(" (bearer token required)", "（需要 bearer 令牌）") if settings.token else ""), file=sys.stderr, flush=True)
    await web.serve(sockets=[sock])


class BackgroundServer:
    """A server on a background thread, for notebooks and tests: `with BackgroundServer(s) as srv: srv.url`.

    Binds before it starts (port 0 picks a free port), so `url` is known and the server is
    accepting connections once `__enter__` (or `start()`) returns.

    Raises:
        ConfigurationError: see `HttpSettings.checked`.
        OSError: the address cannot be bound.
    """

    def __init__(self, server: Server[Any], settings: HttpSettings | None = None) -> None:
        self.settings = (settings or HttpSettings()).checked()
        self._sock = _bind(self.settings.host, self.settings.port)
        self.port: int = self._sock.getsockname()[1]
        self.url = self.settings.url(self.port)
        self._web = _uvicorn(build_app(server, self.settings, self.port), self.settings)
        self._thread = threading.Thread(target=self._run, name=f"mcp-http-{self.port}", daemon=True)
        self._error: BaseException | None = None

    def _run(self) -> None:
        try:
            anyio.run(lambda: self._web.serve(sockets=[self._sock]))
        except BaseException as exc:  # reported by __enter__ / stop
            self._error = exc

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def start(self) -> BackgroundServer:
        """Start serving; return once the server accepts connections.

        Raises:
            RuntimeError: the server failed to start (the cause is in the message).
        """
        self._thread.start()
        while not self._web.started and self._thread.is_alive():
            self._thread.join(0.01)
        if not self._web.started:
            raise RuntimeError(say("the HTTP server did not start: {error!r}", "HTTP 服务器没有启动：{error!r}",
                                   error=self._error))
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving (open SSE streams are closed) and wait for the thread."""
        self._web.should_exit = True
        self._thread.join(10)
        self._sock.close()


@contextmanager
def serving(server: Server[Any], **settings: Any) -> Iterator[BackgroundServer]:
    """`with serving(build_server(ws)) as srv:` → a `BackgroundServer` on a free loopback port.

    `settings` are `HttpSettings` fields (`token=`, `public_url=`, `max_body_bytes=`, ...).

    Raises:
        ConfigurationError, OSError: see `BackgroundServer`.
    """
    with BackgroundServer(server, HttpSettings(**settings)) as background:
        yield background


# --- the command line (used by the servers' main()) ---------------------------------------------

@dataclass(frozen=True)
class Limit:
    """One bound of the HTTP server: its `HttpSettings` field, its flag and its environment variable."""

    field: str
    flag: str
    env: str
    kind: type
    help: str


LIMITS = (
    Limit("max_connections", "--max-connections", "COURSE_MCP_MAX_CONNECTIONS", int,
          "connections open at once; one more gets 503 and is closed"),
    Limit("idle_seconds", "--idle-timeout", "COURSE_MCP_IDLE_TIMEOUT", float,
          "seconds a connection may wait for its next request before it is closed"),
    Limit("header_seconds", "--header-timeout", "COURSE_MCP_HEADER_TIMEOUT", float,
          "seconds from a request's first byte to the end of its headers; then 408"),
    Limit("body_seconds", "--body-timeout", "COURSE_MCP_BODY_TIMEOUT", float,
          "seconds from the end of a request's headers to the end of its body; then 408"),
    Limit("max_body_bytes", "--max-body-bytes", "COURSE_MCP_MAX_BODY_BYTES", int,
          "bytes in a request body; more gets 413 before it is parsed"),
    Limit("max_sessions", "--max-sessions", "COURSE_MCP_MAX_SESSIONS", int,
          "2025-11-25 sessions kept open; a new one beyond it ends the idle-most one"),
    Limit("session_idle_seconds", "--session-idle", "COURSE_MCP_SESSION_IDLE", float,
          "seconds a session lives without a request; then it ends and its id gets 404"),
)
"""Every limit `serve_http` enforces; the flag wins over the environment variable, which wins over
the default (the `HttpSettings` field's)."""


def add_http_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `--http`, `--token-file`, `--public-url` and the limits (`LIMITS`) to a server's parser."""
    group = parser.add_argument_group("Streamable HTTP (instead of stdio)")
    group.add_argument("--http", metavar="[HOST:]PORT", default=None,
                       help="serve http://HOST:PORT/mcp (default host 127.0.0.1; port 0 picks a free one)")
    group.add_argument("--token-file", type=Path, default=None,
                       help=f"file holding the bearer token clients must send (or set {TOKEN_ENV}); "
                            "required when HOST is not loopback")
    group.add_argument("--public-url", default=None,
                       help="the URL clients use, if not http://HOST:PORT/mcp (e.g. behind a TLS proxy)")
    limits = parser.add_argument_group("Streamable HTTP limits (a flag, else its environment variable, else the default)")
    defaults = {f.name: f.default for f in fields(HttpSettings)}
    for limit in LIMITS:
        metavar, default = ("SECONDS", f"{defaults[limit.field]:g}") if limit.kind is float else ("N", defaults[limit.field])
        limits.add_argument(limit.flag, metavar=metavar, default=None, dest=limit.field,
                            help=f"{limit.help} (${limit.env}; default {default})")


def _limit_values(parser: argparse.ArgumentParser, options: argparse.Namespace) -> dict[str, Any]:
    """The limits given by flag or environment variable, parsed; a bad one exits 2."""
    values: dict[str, Any] = {}
    for limit in LIMITS:
        text, source = getattr(options, limit.field, None), limit.flag
        if text is None:
            text, source = os.environ.get(limit.env), limit.env
        if text is None or not str(text).strip():
            continue
        try:
            value = limit.kind(str(text).strip())
        except ValueError:
            value = None
        if value is None or not 0 < value < math.inf:
            parser.error(say("{source}: expected a positive {kind}, got {text!r}",
                             "{source}：应为正{kind_zh}，实际是 {text!r}", source=source, text=text,
                             kind="number" if limit.kind is float else "integer",
                             kind_zh="数" if limit.kind is float else "整数"))
        values[limit.field] = value
    return values


def settings_from_arguments(parser: argparse.ArgumentParser, options: argparse.Namespace) -> HttpSettings:
    """The checked `HttpSettings` for `--http …`; a bad value exits 2 through `parser.error`.

    Raises:
        SystemExit: with status 2 (bad address, unreadable or empty token file, public bind without
            a token, a limit that is not a positive number).
    """
    try:
        host, port = parse_address(options.http)
    except ValueError as exc:
        parser.error(f"--http: {exc}")
    token = None
    if options.token_file is not None:
        try:
            token = options.token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            parser.error(say("--token-file: cannot read it ({reason})", "--token-file：读不了这个文件（{reason}）",
                             reason=exc.strerror))
        if not token:
            parser.error(say("--token-file: the file is empty", "--token-file：文件是空的"))
    else:
        token = os.environ.get(TOKEN_ENV, "").strip() or None
    try:
        return HttpSettings(host=host, port=port, token=token, public_url=options.public_url,
                            **_limit_values(parser, options)).checked()
    except ConfigurationError as exc:
        parser.error(str(exc))


def run_from_arguments(server: Server[Any], parser: argparse.ArgumentParser, options: argparse.Namespace) -> None:
    """What a server's `main()` calls when `--http` was given: serve until Ctrl-C.

    Raises:
        SystemExit: with status 2 for bad options (see `settings_from_arguments`) or an address
            that cannot be bound.
    """
    settings = settings_from_arguments(parser, options)
    try:
        anyio.run(serve_http, server, settings)
    except OSError as exc:
        parser.error(say("--http: cannot listen on {host}:{port} ({reason})", "--http：无法在 {host}:{port} 上监听（{reason}）",
                         host=settings.host, port=settings.port, reason=exc.strerror))
    except KeyboardInterrupt:
        pass
